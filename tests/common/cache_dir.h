#pragma once
// Test helper: while it lives, the disk cache (compiled kernels, BEAM results) is a fresh empty
// directory, removed afterwards; the previous cache directory is restored.
#include <unistd.h>

#include <filesystem>
#include <string>

#include "base/config.h"

namespace lg::testing_util {

class CacheDir {
 public:
  CacheDir() : old_(config().cache_dir) {
    dir_ = std::filesystem::temp_directory_path() / ("lg-cache-test-" + std::to_string(::getpid()) + "-" + std::to_string(counter_++));
    std::filesystem::remove_all(dir_);
    config().cache_dir = dir_.string();
  }
  ~CacheDir() {
    config().cache_dir = old_;
    std::filesystem::remove_all(dir_);
  }
  CacheDir(const CacheDir&) = delete;
  CacheDir& operator=(const CacheDir&) = delete;

 private:
  std::string old_;
  std::filesystem::path dir_;
  static inline int counter_ = 0;
};

}  // namespace lg::testing_util
