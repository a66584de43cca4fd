#pragma once
// The whole content of a file as bytes; empty when it cannot be read (callers that need the file
// check, and name it in their error). For compiler outputs and logs read back by the runtime.
#include <string>

namespace lg {

std::string read_file_text(const std::string& path);

}  // namespace lg
