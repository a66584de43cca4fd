#include "llm/mllog.h"

#include <cerrno>
#include <chrono>
#include <cstring>

#include "base/error.h"

namespace lg::llm {

using json = nlohmann::json;

MLLogger::MLLogger(const std::string& path, bool console) : path_(path), console_(console) {
  if (path.empty()) return;
  f_ = std::fopen(path.c_str(), "a");
  LG_USER_CHECK(f_ != nullptr, "cannot open MLPerf log ", path, ": ", std::strerror(errno),
                "; check that the log directory exists and is writable");
}

MLLogger::~MLLogger() {
  if (f_) std::fclose(f_);
}

int64_t MLLogger::now_ms() {
  using namespace std::chrono;
  return duration_cast<milliseconds>(system_clock::now().time_since_epoch()).count();
}

// The source path from "src/" on, so logs do not depend on where the tree was built.
static std::string short_file(const char* file) {
  std::string f = file;
  size_t p = f.rfind("/src/");
  return p == std::string::npos ? f : f.substr(p + 1);
}

void MLLogger::write(const char* type, const std::string& key, const json& value, json metadata,
                     const std::source_location& where) {
  if (!metadata.is_object()) metadata = json::object();
  metadata["file"] = short_file(where.file_name());
  metadata["lineno"] = where.line();
  // Key order of the reference logger: namespace, time_ms, event_type, key, value, metadata.
  std::string text = ":::MLLOG {\"namespace\": \"\", \"time_ms\": " + std::to_string(now_ms()) +
                     ", \"event_type\": \"" + type + "\", \"key\": " + json(key).dump() +
                     ", \"value\": " + value.dump() + ", \"metadata\": " + metadata.dump() + "}\n";
  if (console_) {
    std::fputs(text.c_str(), stdout);
    std::fflush(stdout);
  }
  if (f_) {
    LG_USER_CHECK(std::fputs(text.c_str(), f_) >= 0 && std::fflush(f_) == 0, "cannot write MLPerf log ", path_,
                  ": ", std::strerror(errno));
  }
}

void MLLogger::event(const std::string& key, const json& value, json metadata, std::source_location where) {
  write("POINT_IN_TIME", key, value, std::move(metadata), where);
}
void MLLogger::start(const std::string& key, const json& value, json metadata, std::source_location where) {
  write("INTERVAL_START", key, value, std::move(metadata), where);
}
void MLLogger::end(const std::string& key, const json& value, json metadata, std::source_location where) {
  write("INTERVAL_END", key, value, std::move(metadata), where);
}

json parse_mllog_line(const std::string& line) {
  const std::string tag = ":::MLLOG ";
  size_t p = line.find(tag);
  if (p == std::string::npos) return nullptr;
  json j = json::parse(line.substr(p + tag.size()), nullptr, /*allow_exceptions=*/false);
  return j.is_discarded() ? json(nullptr) : j;
}

}  // namespace lg::llm
