#include "runtime/file_text.h"

#include <fstream>
#include <sstream>

namespace lg {

std::string read_file_text(const std::string& path) {
  std::ifstream f(path, std::ios::binary);
  std::stringstream s;
  s << f.rdbuf();
  return s.str();
}

}  // namespace lg
