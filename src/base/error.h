#pragma once
// Errors say who is at fault.
//  - lg::Error: the user's input is wrong (bad shape, bad file, bad flag). Thrown with context and
//    a hint; callers may catch it. Raise with LG_USER_CHECK / user_error().
//  - LG_CHECK: an internal invariant of lazygrad broke (a compiler bug). Prints file and line and
//    aborts; never caught.
#include <sstream>
#include <stdexcept>
#include <string>

namespace lg {

class Error : public std::runtime_error {
 public:
  using std::runtime_error::runtime_error;
};

// str(a, b, c): concatenates anything that has operator<<.
template <class... Args>
std::string str(const Args&... args) {
  std::ostringstream os;
  (os << ... << args);
  return os.str();
}

[[noreturn]] void internal_error(const char* file, int line, const std::string& what);

template <class... Args>
[[noreturn]] void user_error(const Args&... args) {
  throw Error(str(args...));
}

}  // namespace lg

#define LG_CHECK(cond, ...)                                                                           \
  do {                                                                                                \
    if (!(cond))                                                                                      \
      ::lg::internal_error(__FILE__, __LINE__, ::lg::str("check failed: " #cond " ", ##__VA_ARGS__)); \
  } while (0)

#define LG_USER_CHECK(cond, ...)                \
  do {                                          \
    if (!(cond)) ::lg::user_error(__VA_ARGS__); \
  } while (0)
