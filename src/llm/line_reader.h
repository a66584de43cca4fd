#pragma once
// Reads a text file line by line, plain or gzip-compressed (zlib detects which from the content).
#include <cstdint>
#include <string>

namespace lg::llm {

class LineReader {
 public:
  explicit LineReader(const std::string& path);  // user error when it cannot be opened
  ~LineReader();
  LineReader(const LineReader&) = delete;
  LineReader& operator=(const LineReader&) = delete;

  // The next line without its '\n'; false at the end. A corrupt or truncated .gz is a user error.
  bool next(std::string& line);
  uint64_t line_number() const { return line_number_; }  // of the last line returned, from 1
  uint64_t bytes_read() const { return bytes_; }         // uncompressed bytes consumed so far
  const std::string& path() const { return path_; }

 private:
  bool refill();

  std::string path_;
  void* file_ = nullptr;  // gzFile
  std::string buffer_;
  size_t pos_ = 0;
  bool eof_ = false;
  uint64_t line_number_ = 0, bytes_ = 0;
};

}  // namespace lg::llm
