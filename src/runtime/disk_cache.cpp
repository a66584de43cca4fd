#include "runtime/disk_cache.h"

#include <fcntl.h>
#include <unistd.h>

#include <atomic>
#include <cerrno>
#include <cstdio>
#include <cstring>
#include <filesystem>
#include <fstream>

#include "base/config.h"
#include "base/hash.h"

namespace lg {

static std::string hex_key(const std::string& key) {
  uint64_t a = hash_bytes(key), b = hash_mix(hash_bytes(key), 0x5bd1e995u ^ key.size());
  char buf[40];
  std::snprintf(buf, sizeof buf, "%016llx%016llx", static_cast<unsigned long long>(a), static_cast<unsigned long long>(b));
  return buf;
}

std::string cache_path(const std::string& kind, const std::string& key) {
  return config().cache_dir + "/" + kind + "/" + hex_key(key);
}

std::optional<std::vector<uint8_t>> cache_get(const std::string& kind, const std::string& key) {
  if (!config().cache) return std::nullopt;
  std::ifstream f(cache_path(kind, key), std::ios::binary);
  if (!f) return std::nullopt;
  std::vector<uint8_t> bytes((std::istreambuf_iterator<char>(f)), std::istreambuf_iterator<char>());
  if (!f.good() && !f.eof()) return std::nullopt;
  return bytes;
}

static void warn_once(const std::string& what) {
  static std::atomic<bool> warned{false};
  if (!warned.exchange(true)) std::fprintf(stderr, "lazygrad: warning: kernel cache disabled for this run: %s\n", what.c_str());
}

void cache_put(const std::string& kind, const std::string& key, const std::vector<uint8_t>& value) {
  if (!config().cache) return;
  std::string path = cache_path(kind, key);
  std::error_code ec;
  std::filesystem::create_directories(std::filesystem::path(path).parent_path(), ec);
  if (ec) return warn_once("cannot create " + std::filesystem::path(path).parent_path().string() + ": " + ec.message());
  std::string tmp = path + ".tmp.XXXXXX";
  int fd = mkstemp(tmp.data());
  if (fd < 0) return warn_once("cannot write in " + config().cache_dir + ": " + std::strerror(errno));
  size_t done = 0;
  while (done < value.size()) {
    ssize_t w = write(fd, value.data() + done, value.size() - done);
    if (w <= 0) break;
    done += static_cast<size_t>(w);
  }
  bool ok = done == value.size() && fsync(fd) == 0;
  close(fd);
  if (!ok || std::rename(tmp.c_str(), path.c_str()) != 0) {
    std::remove(tmp.c_str());
    warn_once("cannot write " + path);
  }
}

}  // namespace lg
