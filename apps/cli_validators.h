#pragma once
// Range checks for numeric command-line options, as CLI11 validators whose messages say what the
// option takes: CLI11 2.1's own PositiveNumber answers 0 with "Value 0 not in range 0.000000 to
// 1797693...", and a word with the same. CLI11 prefixes the option's name and exits non-zero.
#include <CLI/CLI.hpp>

#include <cmath>
#include <cstdlib>
#include <string>

namespace lg::apps {

// Accepts a number that is at least `min`; `meaning` completes "must be ...", e.g. "a positive
// whole number", and shows in --help after the option's type.
inline CLI::Validator at_least(double min, const std::string& meaning) {
  return CLI::Validator(
      [min, meaning](std::string& text) -> std::string {
        char* end = nullptr;
        double v = std::strtod(text.c_str(), &end);
        if (text.empty() || end == nullptr || *end != '\0' || std::isnan(v))
          return "must be " + meaning + ", got \"" + text + "\"";
        if (v < min) return "must be " + meaning + ", got " + text;
        return "";
      },
      ">= " + (min == std::floor(min) ? std::to_string(static_cast<long long>(min)) : std::to_string(min)));
}

}  // namespace lg::apps
