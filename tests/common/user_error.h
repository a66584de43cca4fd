#pragma once
// Test helper shared by the test binaries: the message of the lg::Error f throws, or "" if none.
#include <functional>
#include <string>

#include "base/error.h"

namespace lg::testing_util {

inline std::string error_of(const std::function<void()>& f) {
  try {
    f();
  } catch (const Error& e) {
    return e.what();
  }
  return "";
}

}  // namespace lg::testing_util
