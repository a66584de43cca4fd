#pragma once
// hipcc, the HIP compiler driver (ROCm; Debian's package `hipcc`), run as a command: HIP C++ from
// the HIP renderer (codegen/render_hip.h) -> one code object bundle for the AMD architectures
// given (default gfx90a and gfx940: MI200 and MI300), with -ffp-contract=off (hipcc contracts into
// FMA by default; the IR rounds every op). A compile error is an internal error showing hipcc's
// message and the source. There is no HIP runtime device yet: this compiler serves HIPCHECK
// (runtime/hip_check.h), the compile check.
#include <string>
#include <vector>

#include "runtime/device.h"

namespace lg {

class HipccCompiler : public Compiler {
 public:
  // hipcc missing from PATH: a user error.
  explicit HipccCompiler(std::vector<std::string> archs = {"gfx90a", "gfx940"});
  std::vector<uint8_t> compile(const std::string& source) const override;
  // Compiles and says whether it worked, without an error (runtime/hip_batch.h).
  bool try_compile(const std::string& source) const;
  std::string key() const override { return key_; }

 private:
  // hipcc's output for source, or empty with its message in *message.
  std::vector<uint8_t> run(const std::string& source, std::string* message, std::string* command) const;
  std::string flags_, key_;
};

// Whether hipcc is on PATH (tests skip without it).
bool hipcc_available();

}  // namespace lg
