#include "llm/preprocess.h"

#include <chrono>
#include <filesystem>
#include <future>
#include <nlohmann/json.hpp>

#include "base/error.h"
#include "llm/indexed_dataset.h"
#include "llm/line_reader.h"
#include "llm/thread_pool.h"
#include "nn/file_io.h"

namespace lg::llm {
namespace {

constexpr size_t kChunkLines = 4096;
constexpr size_t kChunkBytes = 16 << 20;
constexpr size_t kMaxBadExamples = 20;

// One input line and what became of it.
struct Line {
  std::string text;  // the raw JSON line
  uint64_t number = 0;
  std::vector<int32_t> ids;
  std::string error;  // non-empty: a bad line, with the reason
};

// Parses one JSON line and tokenizes its "text" (fills ids or error). Blank lines are empty docs.
void process_line(Line& line, const Tokenizer& tokenizer, bool append_eod) {
  line.ids.clear();
  line.error.clear();
  if (line.text.find_first_not_of(" \t\r") == std::string::npos) return;
  nlohmann::json j = nlohmann::json::parse(line.text, nullptr, /*allow_exceptions=*/false);
  if (j.is_discarded()) {
    line.error = "invalid JSON";
    return;
  }
  if (!j.is_object() || !j.contains("text") || !j.at("text").is_string()) {
    line.error = "no string field \"text\"";
    return;
  }
  tokenizer.encode_into(j.at("text").get_ref<const std::string&>(), line.ids);
  if (append_eod && !line.ids.empty()) line.ids.push_back(tokenizer.eos_id());
}

struct Chunk {
  std::vector<Line> lines;  // the first n are this chunk's (the vector is reused)
  size_t n = 0;
  uint64_t bytes = 0;  // input bytes the chunk consumed
};

// Reads up to one chunk of lines from reader into chunk.
void read_chunk(LineReader& reader, Chunk& chunk) {
  uint64_t before = reader.bytes_read();
  size_t text_bytes = 0;
  chunk.n = 0;
  while (chunk.n < kChunkLines && text_bytes < kChunkBytes) {
    if (chunk.n == chunk.lines.size()) chunk.lines.emplace_back();
    Line& line = chunk.lines[chunk.n];
    if (!reader.next(line.text)) break;
    line.number = reader.line_number();
    text_bytes += line.text.size();
    ++chunk.n;
  }
  chunk.bytes = reader.bytes_read() - before;
}

// Appends the chunk's documents in order; counts and reports bad and empty lines.
void write_chunk(const std::vector<Line>& lines, size_t n, const std::string& path, bool strict,
                 IndexedDatasetWriter& writer, PreprocessStats& stats) {
  for (size_t i = 0; i < n; ++i) {
    const Line& line = lines[i];
    ++stats.lines;
    if (!line.error.empty()) {
      std::string where = path + ":" + std::to_string(line.number) + ": " + line.error;
      LG_USER_CHECK(!strict, where, " (--strict stops at the first bad line; drop it to skip and count them)");
      ++stats.bad;
      if (stats.bad_examples.size() < kMaxBadExamples) stats.bad_examples.push_back(where);
      continue;
    }
    if (line.ids.empty()) {
      ++stats.empty;
      continue;
    }
    writer.add_document(line.ids);
    ++stats.documents;
    stats.tokens += line.ids.size();
  }
}

// "a.jsonl, b.jsonl" for the error of an input without documents.
std::string join_inputs(const std::vector<std::string>& inputs) {
  std::string out;
  for (const std::string& path : inputs) out += (out.empty() ? "" : ", ") + path;
  return out;
}

// ", the first: FILE:LINE: REASON" when a bad line was seen.
std::string bad_hint(const PreprocessStats& stats) {
  return stats.bad_examples.empty() ? "" : ", the first: " + stats.bad_examples.front();
}

}  // namespace

std::string document_prefix(const std::string& output_prefix) { return output_prefix + "_text_document"; }

PreprocessStats preprocess(const PreprocessOptions& options, const Tokenizer& tokenizer,
                           const std::function<void(const PreprocessStats&)>& progress) {
  LG_USER_CHECK(!options.inputs.empty(), "preprocess: no --input files");
  for (const std::string& path : options.inputs)  // fail before hours of work, not after
    LG_USER_CHECK(std::filesystem::is_regular_file(path), "preprocess: --input ", path, " is not a readable file");
  LG_USER_CHECK(options.workers >= 1, "preprocess: --workers must be at least 1, got ", options.workers);
  LG_USER_CHECK(!options.append_eod || tokenizer.eos_id() >= 0,
                "preprocess: --append-eod needs an <|end_of_text|> token, which this tokenizer lacks");
  // the prefix's directory is made as `mkdir -p` would (an empty parent: the working directory)
  if (std::string dir = std::filesystem::path(options.output_prefix).parent_path().string(); !dir.empty())
    nn::make_directories(dir, "the directory of --output-prefix");
  auto start = std::chrono::steady_clock::now();
  PreprocessStats stats;
  IndexedDatasetWriter writer(document_prefix(options.output_prefix), token_dtype_for_vocab(tokenizer.vocab_size()));
  ThreadPool pool(options.workers);
  Chunk current, next;
  for (const std::string& path : options.inputs) {
    LineReader reader(path);
    read_chunk(reader, current);
    while (current.n > 0) {
      // the next chunk is read while this one is tokenized and written
      auto reading = std::async(std::launch::async, [&] { read_chunk(reader, next); });
      pool.parallel_for(current.n, [&](size_t i) { process_line(current.lines[i], tokenizer, options.append_eod); });
      write_chunk(current.lines, current.n, path, options.strict, writer, stats);
      stats.bytes += current.bytes;
      stats.seconds = std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();
      if (progress) progress(stats);
      reading.get();  // rethrows a read error
      std::swap(current, next);
    }
  }
  // a dataset without documents would fail only when training samples from it: nothing is written
  LG_USER_CHECK(stats.documents > 0, "preprocess: no documents in --input ", join_inputs(options.inputs),
                " (", stats.lines, " lines: ", stats.empty, " empty, ", stats.bad, " bad", bad_hint(stats),
                "); nothing written. Each line must be a JSON object with a non-empty string field \"text\"");
  writer.finish();
  stats.seconds = std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();
  return stats;
}

}  // namespace lg::llm
