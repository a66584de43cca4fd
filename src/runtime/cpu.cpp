#include "runtime/cpu.h"

#include <dlfcn.h>
#include <sys/mman.h>
#include <unistd.h>

#include <atomic>
#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <filesystem>
#include <fstream>

#include "base/config.h"
#include "base/error.h"
#include "codegen/heuristic.h"
#include "codegen/render_c.h"
#include "runtime/c_batch.h"
#include "runtime/file_text.h"
#include "runtime/host_allocator.h"
#include "runtime/host_cpu.h"
#include "runtime/thread_pool.h"
#include "runtime/tool_path.h"

namespace lg {
namespace {

std::atomic<size_t> compiles{0}, compiler_runs{0};

// clang (or gcc) from the command line; flags keep IEEE semantics (no contraction into FMA, no
// fast-math) so results match the interpreter, and -fwrapv makes signed overflow wrap as the IR says.
// The object is linked by `ld` itself when it is on the PATH: a kernel needs no C runtime start
// files, and the compiler driver's link step (finding them and the default libraries) took about
// 0.06 s of a kernel's 0.15 s build.
// Optimization: -O2, except that a checking device's sources of more than kCheckLargeSource bytes
// build at -O0 (the flags otherwise alike, so the values are the same: IEEE semantics hold at every
// level). Those are the C programs of GPU kernels whose every mma.sync is unrolled (about 300 KiB
// of C took 6-25 s each at -O2 and 0.3 s at -O0); they only have to compute the right values.
inline constexpr size_t kCheckLargeSource = 100 << 10;
class CCompiler : public Compiler {
 public:
  explicit CCompiler(bool checking) : checking_(checking) {
    cc_ = !config().cc.empty() ? config().cc : !find_on_path("clang").empty() ? "clang" : "gcc";
    flags_ = "-march=native -mprefer-vector-width=512 -std=c11 -fPIC -ffp-contract=off -fwrapv -fno-math-errno -fno-strict-aliasing";
    direct_link_ = !find_on_path("ld").empty();
    if (config().debug >= 1)
      std::fprintf(stderr, "CPU compiler: %s -O2 %s for %s (linked by %s)%s\n", cc_.c_str(), flags_.c_str(),
                   host_cpu_signature().c_str(), direct_link_ ? "ld" : cc_.c_str(),
                   checking_ ? str("; -O0 for sources over ", kCheckLargeSource, " bytes").c_str() : "");
  }

  // -march=native compiles for this processor: its signature keeps kernels apart between machines
  // (runtime/host_cpu.h).
  std::string key() const override {
    return str(cc_, " ", flags_, " (", host_cpu_signature(), ")",
               checking_ ? str(" -O0 over ", kCheckLargeSource, " bytes, else") : "", " -O2 ", version());
  }

  std::vector<uint8_t> compile(const std::string& source) const override {
    char dir[] = "/tmp/lazygrad-cc-XXXXXX";
    LG_CHECK(mkdtemp(dir) != nullptr, "cannot create a temporary folder for the C compiler");
    std::string d = dir, src = d + "/kernel.c", obj = d + "/kernel.o", so = d + "/kernel.so", err = d + "/err.txt";
    std::ofstream(src) << source;
    const char* opt = checking_ && source.size() > kCheckLargeSource ? "-O0" : "-O2";
    std::string cmd = direct_link_ ? str(cc_, " ", opt, " ", flags_, " -c ", src, " -o ", obj, " 2> ", err, " && ld -shared ",
                                         obj, " -o ", so, " -lm 2>> ", err)
                                   : str(cc_, " ", opt, " ", flags_, " -shared ", src, " -o ", so, " -lm 2> ", err);
    int rc = std::system(cmd.c_str());
    std::string so_bytes = rc == 0 ? read_file_text(so) : "", msg = read_file_text(err);
    std::error_code ec;
    std::filesystem::remove_all(d, ec);
    compiles++;
    compiler_runs++;
    if (rc != 0)
      internal_error(__FILE__, __LINE__, str("C compiler failed (", cmd, "):\n", msg, "\n--- source ---\n", source));
    return {so_bytes.begin(), so_bytes.end()};
  }

  // The batchable sources (runtime/c_batch.h) build as one unit: one compiler run, then `ld` links
  // each kernel's shared object out of the unit's object, keeping only the sections its function
  // reaches (-ffunction-sections, --gc-sections) and exporting it as lg_kernel. The others (a
  // kernel with helpers of its own, a checking device's large -O0 source, no `ld` on the PATH)
  // build one at a time. A unit that fails builds again one source at a time, so the failing
  // kernel's error is compile()'s: its own message and source.
  bool batches() const override { return direct_link_; }
  std::vector<std::vector<uint8_t>> compile_many(const std::vector<std::string>& sources) const override {
    std::vector<std::vector<uint8_t>> out(sources.size());
    std::vector<size_t> unit;
    for (size_t i = 0; i < sources.size(); i++)
      if (direct_link_ && c_batchable(sources[i]) && !(checking_ && sources[i].size() > kCheckLargeSource))
        unit.push_back(i);
      else
        out[i] = compile(sources[i]);
    if (unit.size() >= 2 && compile_unit(sources, unit, out)) return out;
    for (size_t i : unit) out[i] = compile(sources[i]);
    return out;
  }

 private:
  // Builds sources[unit[k]] as one unit into out[unit[k]]; false when the compiler or a link failed.
  bool compile_unit(const std::vector<std::string>& sources, const std::vector<size_t>& unit,
                    std::vector<std::vector<uint8_t>>& out) const {
    auto start = std::chrono::steady_clock::now();
    char dir[] = "/tmp/lazygrad-cc-XXXXXX";
    LG_CHECK(mkdtemp(dir) != nullptr, "cannot create a temporary folder for the C compiler");
    std::string d = dir;
    std::vector<std::string> own;
    for (size_t i : unit) own.push_back(sources[i]);
    std::string text = c_batch_source(own);
    std::ofstream(d + "/unit.c") << text;
    std::ofstream(d + "/exports.map") << "{ global: lg_kernel; local: *; };\n";
    // One script, not one shell per link: a unit may hold hundreds of kernels.
    std::string script = str("set -e\ncd ", d, "\n", cc_, " -O2 ", flags_,
                             " -ffunction-sections -fdata-sections -c unit.c -o unit.o\n");
    for (size_t k = 0; k < unit.size(); k++)
      script +=
          str("ld -shared --gc-sections --version-script exports.map --defsym lg_kernel=", c_batch_entry(k),
              " unit.o -o k", k, ".so -lm\n");
    std::ofstream(d + "/build.sh") << script;
    bool ok = std::system(str("sh ", d, "/build.sh > ", d, "/err.txt 2>&1").c_str()) == 0;
    for (size_t k = 0; ok && k < unit.size(); k++) {
      std::string so = read_file_text(str(d, "/k", k, ".so"));
      ok = !so.empty();
      out[unit[k]].assign(so.begin(), so.end());
    }
    std::string msg = ok ? "" : read_file_text(d + "/err.txt");
    std::error_code ec;
    std::filesystem::remove_all(d, ec);
    compiler_runs++;
    if (!ok && config().debug >= 1)
      std::fprintf(stderr, "CPU compiler: a unit of %zu kernels failed; building them one at a time:\n%s\n", unit.size(),
                   msg.substr(0, 2000).c_str());
    if (!ok) return false;
    compiles += unit.size();
    if (config().debug >= 2)
      std::fprintf(stderr, "CPU compiler: %zu kernels in one unit (%zu KiB of C) in %.2f s\n", unit.size(),
                   text.size() >> 10,
                   std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count());
    return true;
  }

  bool checking_;
  std::string cc_, flags_;
  bool direct_link_ = false;
  std::string version() const {
    static std::string v = [this] {  // the first line of `cc --version`, with its newline
      std::string out = tool_output(cc_, "--version");
      size_t nl = out.find('\n');
      return nl == std::string::npos ? out : out.substr(0, nl + 1);
    }();
    return v;
  }
};

using KernelFn = void (*)(void**, int64_t, int64_t);

class CpuProgram : public Program {
 public:
  CpuProgram(const LinearProgram& prog, const std::vector<uint8_t>& so) : name_(prog.name), extent_(parallel_extent(prog)) {
    // Load the shared object from an in-memory file: nothing to clean up on disk. The file stays
    // open while the program lives: the dynamic loader knows a library by its path, and a reused
    // /proc/self/fd/N would hand back the kernel loaded under that name before.
    fd_ = memfd_create("lg_kernel", MFD_CLOEXEC);
    LG_CHECK(fd_ >= 0, "memfd_create failed for kernel ", name_);
    LG_CHECK(write(fd_, so.data(), so.size()) == static_cast<ssize_t>(so.size()), "cannot write kernel ", name_);
    std::string path = "/proc/self/fd/" + std::to_string(fd_);
    handle_ = dlopen(path.c_str(), RTLD_NOW | RTLD_LOCAL);
    LG_CHECK(handle_ != nullptr, "dlopen of kernel ", name_, " failed: ", dlerror());
    fn_ = reinterpret_cast<KernelFn>(dlsym(handle_, "lg_kernel"));
    LG_CHECK(fn_ != nullptr, "kernel ", name_, " has no lg_kernel symbol");
  }
  ~CpuProgram() override {
    dlclose(handle_);
    close(fd_);
  }

  void run(const KernelArgs& args) override {
    void** bufs = const_cast<void**>(args.buffers.data());
    if (extent_ <= 1) return fn_(bufs, 0, extent_);
    parallel_for(extent_, [&](int64_t b, int64_t e) { fn_(bufs, b, e); });
  }

 private:
  std::string name_;
  int64_t extent_;
  int fd_ = -1;
  void* handle_ = nullptr;
  KernelFn fn_ = nullptr;
};

class CpuDevice : public Device {
 public:
  CpuDevice(std::string name, bool checking) : name_(std::move(name)), compiler_(checking) {}
  const std::string& name() const override { return name_; }
  Allocator& allocator() override { return alloc_; }
  const Renderer* renderer() const override { return &renderer_; }
  const Compiler* compiler() const override { return &compiler_; }
  std::vector<Opt> heuristic_opts(const NodeRef& ast) const override { return cpu_heuristic_opts(ast); }
  std::unique_ptr<Program> load(const LinearProgram& prog, const std::string&, const std::vector<uint8_t>& binary) override {
    return std::make_unique<CpuProgram>(prog, binary);
  }

 private:
  std::string name_;
  HostAllocator alloc_;
  CRenderer renderer_;
  CCompiler compiler_;
};

}  // namespace

std::unique_ptr<Device> make_cpu_device(const std::string& name) { return std::make_unique<CpuDevice>(name, false); }

std::unique_ptr<Device> make_checking_cpu_device(const std::string& name) { return std::make_unique<CpuDevice>(name, true); }

size_t cpu_compiles() { return compiles.load(); }

size_t cpu_compiler_runs() { return compiler_runs.load(); }

}  // namespace lg
