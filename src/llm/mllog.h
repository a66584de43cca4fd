#pragma once
// MLPerf logging (the mlperf_logging package's format): one line per event,
//   :::MLLOG {"namespace": "", "time_ms": 1700000000000, "event_type": "POINT_IN_TIME",
//             "key": "seed", "value": 42, "metadata": {"file": "src/llm/mlperf.cpp", "lineno": 120}}
// written to the console and appended to a result file, each line flushed as it is written.
// Event types: POINT_IN_TIME (event), INTERVAL_START (start), INTERVAL_END (end). Block and eval
// events carry "samples_count" in their metadata (the caller passes it).
#include <cstdio>
#include <source_location>
#include <string>

#include <nlohmann/json.hpp>

namespace lg::llm {

class MLLogger {
 public:
  // path "" logs to the console only; console false keeps the console quiet.
  explicit MLLogger(const std::string& path, bool console = true);
  ~MLLogger();
  MLLogger(const MLLogger&) = delete;
  MLLogger& operator=(const MLLogger&) = delete;

  void event(const std::string& key, const nlohmann::json& value = nullptr, nlohmann::json metadata = {},
             std::source_location where = std::source_location::current());
  void start(const std::string& key, const nlohmann::json& value = nullptr, nlohmann::json metadata = {},
             std::source_location where = std::source_location::current());
  void end(const std::string& key, const nlohmann::json& value = nullptr, nlohmann::json metadata = {},
           std::source_location where = std::source_location::current());

  // Milliseconds since the Unix epoch, as time_ms records it.
  static int64_t now_ms();
  const std::string& path() const { return path_; }

 private:
  void write(const char* type, const std::string& key, const nlohmann::json& value, nlohmann::json metadata,
             const std::source_location& where);
  std::string path_;
  bool console_;
  std::FILE* f_ = nullptr;
};

// Parses one ":::MLLOG {...}" line; nullopt-like null json if the line is not an MLLOG line.
nlohmann::json parse_mllog_line(const std::string& line);

}  // namespace lg::llm
