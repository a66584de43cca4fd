#include "llm/line_reader.h"

#include <zlib.h>

#include <cerrno>
#include <cstring>

#include "base/error.h"

namespace lg::llm {

namespace {
constexpr size_t kChunk = 1 << 20;
}

LineReader::LineReader(const std::string& path) : path_(path) {
  gzFile f = gzopen(path.c_str(), "rb");
  LG_USER_CHECK(f != nullptr, "cannot open ", path, ": ", std::strerror(errno));
  gzbuffer(f, kChunk);
  file_ = f;
}

LineReader::~LineReader() { gzclose(static_cast<gzFile>(file_)); }

bool LineReader::refill() {
  if (eof_) return false;
  buffer_.erase(0, pos_);
  pos_ = 0;
  size_t old = buffer_.size();
  buffer_.resize(old + kChunk);
  int n = gzread(static_cast<gzFile>(file_), buffer_.data() + old, kChunk);
  int code = Z_OK;
  const char* message = gzerror(static_cast<gzFile>(file_), &code);
  // A stream cut short reads to its end and then reports Z_BUF_ERROR ("unexpected end of file").
  LG_USER_CHECK(n >= 0 && (code == Z_OK || code == Z_STREAM_END), path_, ": read failed after line ",
                line_number_, ": ", message, " (a truncated or corrupt .gz file?)");
  buffer_.resize(old + static_cast<size_t>(n));
  if (n == 0) eof_ = true;
  return n > 0;
}

bool LineReader::next(std::string& line) {
  while (true) {
    size_t newline = buffer_.find('\n', pos_);
    if (newline != std::string::npos) {
      line.assign(buffer_, pos_, newline - pos_);
      bytes_ += newline - pos_ + 1;
      pos_ = newline + 1;
      ++line_number_;
      return true;
    }
    if (!refill()) break;
  }
  if (pos_ >= buffer_.size()) return false;
  line.assign(buffer_, pos_);  // a last line without '\n'
  bytes_ += buffer_.size() - pos_;
  pos_ = buffer_.size();
  ++line_number_;
  return true;
}

}  // namespace lg::llm
