#pragma once
// A renderer turns a LinearProgram into source text for one kind of device (C for CPU, CUDA C...).
// Renderers live in codegen; the runtime's devices hold one.
#include <string>

#include "codegen/program.h"

namespace lg {

class Renderer {
 public:
  virtual ~Renderer() = default;
  // Source of one kernel. The entry point's name and signature are the renderer's contract with its
  // device's program loader.
  virtual std::string render(const LinearProgram& prog) const = 0;
  // Lanes of the vector values (float32) this renderer can emit; 0: scalars only. lower_kernel
  // turns one UPCAST of this many trips into vector values (codegen/vectorize.h).
  virtual int vector_lanes() const { return 0; }
};

}  // namespace lg
