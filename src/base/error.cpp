#include "base/error.h"

#include <cstdio>
#include <cstdlib>

namespace lg {

void internal_error(const char* file, int line, const std::string& what) {
  std::fprintf(stderr, "lazygrad internal error at %s:%d: %s\n", file, line, what.c_str());
  std::fflush(stderr);
  std::abort();
}

}  // namespace lg
