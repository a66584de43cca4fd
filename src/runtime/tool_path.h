#pragma once
// The external tools the runtime runs (the C compiler, ld, hipcc): found on PATH in-process, and
// their version output read once per version of the executable. Every process that compiled or
// looked up a CPU kernel used to start two shells for `command -v` and run `clang --version`:
// about 0.13 s of a 0.16 s test process on a warm kernel cache, paid by each of the test suite's
// ~1,500 processes on the CPU device and by every `lazygrad` command.
#include <string>

namespace lg {

// The path of the first executable file named exe in PATH's directories ("" when there is none);
// an exe with a '/' is checked as it is.
std::string find_on_path(const std::string& exe);

// The output (stdout and stderr) of `exe args`. It is run once and then read from the disk cache
// (kind "tools"), keyed by the resolved executable's path, size and modification time, so a new
// or reinstalled tool is run again. An exe that is not one executable on PATH (a command line such
// as "ccache clang") or CACHE=0 runs every time.
std::string tool_output(const std::string& exe, const std::string& args);

}  // namespace lg
