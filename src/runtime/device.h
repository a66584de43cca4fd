#pragma once
// The device interface. A backend is an allocator, a renderer, a compiler and a program loader;
// nothing outside a backend's own files knows the device (house style rule 10).
//
//   Allocator  device memory and host <-> device copies
//   Renderer   LinearProgram -> source text (C, CUDA C...); none for INTERP, which runs the program
//   Compiler   source -> binary (clang -> .so, NVRTC -> cubin); results go through the disk cache
//   Program    a loaded kernel: run(buffers) with one pointer per DEFINE_GLOBAL slot
#include <cstddef>
#include <cstdint>
#include <memory>
#include <optional>
#include <string>
#include <vector>

#include "codegen/program.h"
#include "codegen/renderer.h"

namespace lg {

class Allocator {
 public:
  virtual ~Allocator() = default;
  // Memory of `bytes` (bytes may be 0). Its contents are unspecified (the CPU device hands a freed
  // buffer of the same size back as it was): every kernel writes all of its output.
  virtual void* alloc(size_t bytes) = 0;
  virtual void free(void* p, size_t bytes) = 0;
  virtual void copy_in(void* dst, const void* host, size_t bytes) = 0;
  virtual void copy_out(void* host, const void* src, size_t bytes) = 0;
  // Copies `bytes` of another allocator's memory straight into dst (a peer copy between GPUs);
  // false when this pair of allocators cannot, and the caller goes through host memory.
  virtual bool copy_from(void* dst, Allocator& src_alloc, const void* src, size_t bytes) {
    (void)dst, (void)src_alloc, (void)src, (void)bytes;
    return false;
  }
  // True when pointers from alloc() are host memory (copies between two such devices are memcpy).
  virtual bool host_memory() const { return false; }
  // Sets `bytes` bytes at p to `byte` (POISON, allocate below). Host memory: memset; a device's own
  // memory overrides it; memory never touched here (another process's, CUDANULL's) ignores it.
  virtual void fill(void* p, uint8_t byte, size_t bytes);
};

// The byte POISON=1 fills new memory with: 0xFF is a NaN in float32, bf16 and fp16, -1 in signed
// integers, the largest unsigned value and a bool that is neither 0 nor 1.
constexpr uint8_t kPoisonByte = 0xFF;

// alloc(bytes) of `a`, then with POISON=1 every byte set to kPoisonByte, so a kernel that reads
// memory nothing wrote (its own output it did not write whole, a Jit arena's slot read before its
// kernel) shows NaNs instead of whatever the allocator handed back. How buffers, Jit arenas and
// BEAM's outputs get memory.
void* allocate(Allocator& a, size_t bytes);

// A compiler's word on one kernel's resources (Compiler::resource_report): one line, and whether it
// says the kernel runs slower than its source asks (spills, serialized mmas).
struct ResourceReport {
  std::string text;
  bool warning = false;
};

class Compiler {
 public:
  virtual ~Compiler() = default;
  // Compiles source; errors are internal errors that show the source and the compiler's message.
  virtual std::vector<uint8_t> compile(const std::string& source) const = 0;
  // compile() of each source, out[i] for sources[i]; a compiler that builds several sources in one
  // run (the C compiler: runtime/c_batch.h) overrides it and batches(). The default compiles one at
  // a time.
  virtual std::vector<std::vector<uint8_t>> compile_many(const std::vector<std::string>& sources) const {
    std::vector<std::vector<uint8_t>> out;
    for (const std::string& s : sources) out.push_back(compile(s));
    return out;
  }
  // Whether compile_many of several sources costs less than a compile() of each (compile_programs
  // then gives it groups of many sources; else one source a call).
  virtual bool batches() const { return false; }
  // Identifies compiler, flags and target: part of every cache key.
  virtual std::string key() const = 0;
  // What the compiler's assembler says of source's kernel (PTXAS=1; NVRTC: registers, spills,
  // wgmma serialization, runtime/ptxas_report.h); none where the compiler says nothing.
  virtual std::optional<ResourceReport> resource_report(const std::string& /*source*/) const {
    return std::nullopt;
  }
};

// Arguments of one kernel launch.
struct KernelArgs {
  std::vector<void*> buffers;  // by DEFINE_GLOBAL slot
  std::vector<int64_t> sizes;  // elements of each buffer (for bounds checks)
};

struct LaunchDims;  // codegen/gpu_launch.h

class Program {
 public:
  virtual ~Program() = default;
  virtual void run(const KernelArgs& args) = 0;
  // A GPU program's launch geometry (its grid and block); null for the host's programs.
  virtual const LaunchDims* launch_dims() const { return nullptr; }
  // Runs once and returns the seconds the kernel took on the device (BEAM's timer). The default
  // times run() with the host clock: right where run() returns when the kernel is done; devices
  // that launch asynchronously time on the device (CUDA: events).
  virtual double timed_run(const KernelArgs& args);
};

class BeamSpace;  // runtime/beam.h

class Device {
 public:
  virtual ~Device() = default;
  virtual const std::string& name() const = 0;
  // The hardware it runs on as its driver names it (a GPU: "NVIDIA H100 80GB HBM3"); "" for the
  // host's devices and for those that model a GPU without one (CUDACHECK, CUDANULL).
  virtual std::string hardware() const { return ""; }
  // The process that owns the device: -1 for this one; r for "NAME@r", a device of process r of a
  // distributed run (runtime/transport.h). Kernels of another process's device do not run here.
  virtual int remote_rank() const { return -1; }
  virtual Allocator& allocator() = 0;
  virtual const Renderer* renderer() const = 0;  // null: the device runs LinearPrograms itself
  virtual const Compiler* compiler() const = 0;  // null when there is no renderer
  // The Opts this device applies to a kernel when BEAM is off (NOOPT=1: none). The reference
  // interpreter runs kernels as scheduled.
  virtual std::vector<Opt> heuristic_opts(const NodeRef& ast) const {
    (void)ast;
    return {};
  }
  // The Opt lists BEAM=n searches for a kernel (runtime/beam.h), or null where BEAM does not apply
  // (then heuristic_opts is used). The default: heuristic_opts(ast) extended one CPU Opt at a time.
  virtual std::unique_ptr<BeamSpace> beam_space(const NodeRef& ast) const;
  // False for a compile check that runs nothing (CUDANULL): values read back, and the times of
  // what runs there, mean nothing.
  virtual bool runs_kernels() const { return true; }
  // prog is the lowered kernel; source/binary are the renderer's and compiler's output (empty for
  // devices without them).
  virtual std::unique_ptr<Program> load(const LinearProgram& prog, const std::string& source,
                                        const std::vector<uint8_t>& binary) = 0;
  // Called before load() of each of these programs (realize's new kernels, BEAM's candidates), so
  // a device that builds more for a program than its binary builds it for all of them at once: the
  // compile-check devices compile their kernels' C programs together (runtime/compile_check.h).
  virtual void prepare_loads(const std::vector<const LinearProgram*>& progs) { (void)progs; }
};

// The device named "NAME" or "NAME:i" ("X:0" is "X"); created on first use. Unknown names are user
// errors listing the devices there are. "NAME@r" is that device of process r of a distributed run:
// this process's own device when r is its rank, else a stand-in that holds no memory.
Device& get_device(const std::string& name);
// Canonical spelling of a device name ("INTERP:0" -> "INTERP").
std::string canonical_device(const std::string& name);
// Whether the device ("NAME", "NAME:i", "NAME@r") is a GPU or a compile check modelling one (CUDA,
// CUDACHECK, CUDANULL, HIPCHECK): the front end shapes some graphs by it (tensor/reduce.cpp). Any
// process answers the same for every device of a distributed run.
bool is_gpu_device(const std::string& name);
// Names of the device kinds this build has.
std::vector<std::string> device_kinds();

}  // namespace lg
