#include "nn/file_io.h"

#include <fcntl.h>
#include <unistd.h>

#include <cerrno>
#include <cstring>
#include <filesystem>
#include <fstream>
#include <sstream>
#include <system_error>

#include "base/error.h"

namespace lg::nn {

static std::string errno_str() { return std::strerror(errno); }

void fsync_dir(const std::string& dir) {
  int fd = ::open(dir.empty() ? "." : dir.c_str(), O_RDONLY | O_DIRECTORY);
  LG_USER_CHECK(fd >= 0, "fsync_dir: cannot open directory ", dir, ": ", errno_str());
  int rc = ::fsync(fd);
  ::close(fd);
  LG_USER_CHECK(rc == 0, "fsync_dir: fsync of ", dir, " failed: ", errno_str());
}

void write_file_atomic(const std::string& path, std::string_view bytes) {
  std::string tmp = path + ".tmp." + std::to_string(::getpid());
  int fd = ::open(tmp.c_str(), O_WRONLY | O_CREAT | O_TRUNC, 0644);
  LG_USER_CHECK(fd >= 0, "write ", path, ": cannot create ", tmp, ": ", errno_str());
  size_t done = 0;
  while (done < bytes.size()) {
    ssize_t n = ::write(fd, bytes.data() + done, bytes.size() - done);
    if (n < 0 && errno == EINTR) continue;
    if (n < 0) {
      std::string err = errno_str();
      ::close(fd);
      ::unlink(tmp.c_str());
      user_error("write ", path, ": write failed: ", err);
    }
    done += static_cast<size_t>(n);
  }
  bool synced = ::fsync(fd) == 0;
  std::string err = errno_str();
  ::close(fd);
  if (!synced) ::unlink(tmp.c_str());
  LG_USER_CHECK(synced, "write ", path, ": fsync failed: ", err);
  LG_USER_CHECK(::rename(tmp.c_str(), path.c_str()) == 0, "write ", path, ": rename failed: ", errno_str());
  fsync_dir(std::filesystem::path(path).parent_path().string());
}

void make_directories(const std::string& dir, const std::string& what) {
  std::error_code ec;
  std::filesystem::create_directories(dir, ec);
  if (!ec && !std::filesystem::is_directory(dir, ec)) ec = std::make_error_code(std::errc::not_a_directory);
  if (!ec && ::access(dir.c_str(), W_OK) != 0) ec = std::error_code(errno, std::generic_category());
  LG_USER_CHECK(!ec, "cannot create ", what, " ", dir, ": ", ec.message(),
                "; give a directory you can write");
}

std::string read_file(const std::string& path) {
  std::ifstream f(path, std::ios::binary);
  LG_USER_CHECK(f.good(), "cannot read ", path, ": ", errno_str());
  std::ostringstream s;
  s << f.rdbuf();
  return s.str();
}

}  // namespace lg::nn
