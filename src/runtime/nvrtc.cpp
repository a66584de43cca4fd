#include "runtime/nvrtc.h"

#include <dlfcn.h>
#include <sys/stat.h>

#include <atomic>
#include <memory>
#include <regex>

#include "base/config.h"
#include "base/error.h"
#include "runtime/disk_cache.h"
#include "runtime/dynlib.h"
#include "runtime/ptxas_report.h"

namespace lg {
namespace {

std::atomic<size_t> compiles{0};

// The NVRTC entry points lazygrad uses (nvrtc.h's signatures; status 0 is NVRTC_SUCCESS).
using nvrtcProgram = void*;
struct NvrtcApi {
  int (*nvrtcVersion)(int*, int*);
  const char* (*nvrtcGetErrorString)(int);
  int (*nvrtcCreateProgram)(nvrtcProgram*, const char*, const char*, int, const char* const*, const char* const*);
  int (*nvrtcDestroyProgram)(nvrtcProgram*);
  int (*nvrtcCompileProgram)(nvrtcProgram, int, const char* const*);
  int (*nvrtcGetProgramLogSize)(nvrtcProgram, size_t*);
  int (*nvrtcGetProgramLog)(nvrtcProgram, char*);
  int (*nvrtcGetCUBINSize)(nvrtcProgram, size_t*);
  int (*nvrtcGetCUBIN)(nvrtcProgram, char*);
  int (*nvrtcGetPTXSize)(nvrtcProgram, size_t*);
  int (*nvrtcGetPTX)(nvrtcProgram, char*);
  std::string include_dir;  // holds cuda_fp16.h and cuda_bf16.h
  int major = 0, minor = 0;
};

bool is_file(const std::string& p) {
  struct stat st;
  return stat(p.c_str(), &st) == 0 && S_ISREG(st.st_mode);
}

std::vector<std::string> library_candidates() {
  std::vector<std::string> names = {"libnvrtc.so.13", "libnvrtc.so.12", "libnvrtc.so"};
  for (const std::string& root : {config().cuda_path, std::string("/usr/local/cuda")})
    if (!root.empty())
      for (const char* lib : {"/lib64/libnvrtc.so", "/lib/libnvrtc.so"}) names.push_back(root + lib);
  return names;
}

// The toolkit include folder: CUDA_PATH's, the one beside the loaded library's folder, or
// /usr/local/cuda's; "" when none has the 16-bit float headers.
std::string find_include_dir(void* some_symbol) {
  std::vector<std::string> roots;
  if (!config().cuda_path.empty()) roots.push_back(config().cuda_path);
  Dl_info info;
  if (dladdr(some_symbol, &info) && info.dli_fname) {
    std::string lib = info.dli_fname;
    std::string dir = lib.substr(0, lib.rfind('/'));
    roots.push_back(dir + "/..");
  }
  roots.push_back("/usr/local/cuda");
  for (const std::string& r : roots)
    if (is_file(r + "/include/cuda_fp16.h") && is_file(r + "/include/cuda_bf16.h")) return r + "/include";
  return "";
}

// Loads NVRTC once; on failure, the error says what was tried (returned on every call).
struct Loaded {
  std::unique_ptr<DynLib> lib;
  NvrtcApi api{};
  std::string error;
};

const Loaded& loaded() {
  // Never destroyed: programs and buffers released during static destruction still call into
  // the library, so it stays loaded until the process ends.
  static const Loaded& l = *new Loaded([] {
    Loaded x;
    std::vector<std::string> names = library_candidates();
    x.lib = std::make_unique<DynLib>(names);
    if (!x.lib->loaded()) {
      x.error = str("cannot load NVRTC (", x.lib->why(), "); install the CUDA toolkit or set CUDA_PATH");
      return x;
    }
    NvrtcApi& a = x.api;
    const DynLib& d = *x.lib;
    d.bind(a.nvrtcVersion, "nvrtcVersion");
    d.bind(a.nvrtcGetErrorString, "nvrtcGetErrorString");
    d.bind(a.nvrtcCreateProgram, "nvrtcCreateProgram");
    d.bind(a.nvrtcDestroyProgram, "nvrtcDestroyProgram");
    d.bind(a.nvrtcCompileProgram, "nvrtcCompileProgram");
    d.bind(a.nvrtcGetProgramLogSize, "nvrtcGetProgramLogSize");
    d.bind(a.nvrtcGetProgramLog, "nvrtcGetProgramLog");
    d.bind(a.nvrtcGetCUBINSize, "nvrtcGetCUBINSize");
    d.bind(a.nvrtcGetCUBIN, "nvrtcGetCUBIN");
    d.bind(a.nvrtcGetPTXSize, "nvrtcGetPTXSize");
    d.bind(a.nvrtcGetPTX, "nvrtcGetPTX");
    LG_CHECK(a.nvrtcVersion(&a.major, &a.minor) == 0, "nvrtcVersion failed");
    a.include_dir = find_include_dir(reinterpret_cast<void*>(a.nvrtcVersion));
    if (a.include_dir.empty())
      x.error = str("NVRTC (", d.path(), ") loaded, but no CUDA include folder with cuda_fp16.h and cuda_bf16.h was ",
                    "found; set CUDA_PATH to the toolkit");
    return x;
  }());
  return l;
}

const NvrtcApi& api() {
  const Loaded& l = loaded();
  LG_USER_CHECK(l.error.empty(), "CUDA: ", l.error);
  return l.api;
}

void check(int status, const char* call) {
  if (status != 0) internal_error(__FILE__, __LINE__, str(call, " failed: ", api().nvrtcGetErrorString(status), " (", status, ")"));
}

// A program handle destroyed on every path out.
struct ProgramHandle {
  nvrtcProgram p = nullptr;
  ~ProgramHandle() {
    if (p) api().nvrtcDestroyProgram(&p);
  }
};

}  // namespace

std::string default_cuda_arch() { return config().cuda_arch.empty() ? "sm_90a" : config().cuda_arch; }

bool nvrtc_available(std::string* why) {
  const Loaded& l = loaded();
  if (why) *why = l.error;
  return l.error.empty();
}

size_t nvrtc_compiles() { return compiles.load(); }

NvrtcCompiler::NvrtcCompiler(std::string arch) : arch_(std::move(arch)) {
  LG_USER_CHECK(std::regex_match(arch_, std::regex("(sm|compute)_[0-9]+[a-z]?")), "CUDA architecture \"", arch_,
                "\" is not of the form sm_90, sm_90a or compute_90 (set CUDA_ARCH)");
  const NvrtcApi& a = api();
  include_dir_ = a.include_dir;
  options_ = {"--gpu-architecture=" + arch_, "--fmad=false", "-std=c++17", "-I" + include_dir_};
  // MBARRIER_WATCHDOG_MS other than the prelude's default (codegen/render_cuda.cpp); 0: a limit
  // no wait reaches. Only then an option, so the default's cached kernels keep their key.
  if (const int ms = config().mbarrier_watchdog_ms; ms != kDefaultMbarrierWatchdogMs)
    options_.push_back(
        str("-DLG_MBARRIER_WATCHDOG_NS=", ms == 0 ? ~uint64_t{0} : uint64_t(ms) * 1000000, "ull"));
  key_ = str("nvrtc ", a.major, ".", a.minor);
  for (const std::string& o : options_) key_ += " " + o;
}

NvrtcCompiler::Output NvrtcCompiler::run(const std::string& source, bool ptxas_verbose) const {
  const NvrtcApi& a = api();
  ProgramHandle prog;
  check(a.nvrtcCreateProgram(&prog.p, source.c_str(), "lg_kernel.cu", 0, nullptr, nullptr), "nvrtcCreateProgram");
  std::vector<const char*> opts;
  for (const std::string& o : options_) opts.push_back(o.c_str());
  if (ptxas_verbose) opts.push_back("--ptxas-options=-v");  // the log only: the cubin is the same
  int status = a.nvrtcCompileProgram(prog.p, static_cast<int>(opts.size()), opts.data());
  compiles++;
  size_t log_size = 0;
  check(a.nvrtcGetProgramLogSize(prog.p, &log_size), "nvrtcGetProgramLogSize");
  Output out;
  out.log.assign(log_size, '\0');
  check(a.nvrtcGetProgramLog(prog.p, out.log.data()), "nvrtcGetProgramLog");
  out.log.resize(out.log.find('\0') == std::string::npos ? out.log.size()
                                                         : out.log.find('\0'));  // the size counts the NUL
  if (status != 0)
    internal_error(__FILE__, __LINE__,
                   str("nvrtcCompileProgram failed (", a.nvrtcGetErrorString(status), ", ", key_, "):\n",
                       out.log, "\n--- source ---\n", source));
  bool cubin = arch_.rfind("sm_", 0) == 0;  // a real architecture: machine code; virtual: PTX
  size_t size = 0;
  check(cubin ? a.nvrtcGetCUBINSize(prog.p, &size) : a.nvrtcGetPTXSize(prog.p, &size), cubin ? "nvrtcGetCUBINSize" : "nvrtcGetPTXSize");
  out.binary.resize(size);
  char* dst = reinterpret_cast<char*>(out.binary.data());
  check(cubin ? a.nvrtcGetCUBIN(prog.p, dst) : a.nvrtcGetPTX(prog.p, dst), cubin ? "nvrtcGetCUBIN" : "nvrtcGetPTX");
  LG_CHECK(!out.binary.empty(), "NVRTC returned an empty ", cubin ? "cubin" : "PTX");
  return out;
}

std::vector<uint8_t> NvrtcCompiler::compile(const std::string& source) const {
  // With PTXAS=1 the compile also keeps ptxas's report, so a kernel compiled once is reported
  // from the cache after (resource_report)
  if (!config().ptxas || arch_.rfind("sm_", 0) != 0) return run(source, false).binary;
  Output out = run(source, true);
  const std::string lines = ptxas_lines(out.log);
  cache_put("ptxas", key_ + "\n" + source, {lines.begin(), lines.end()});
  return std::move(out.binary);
}

std::optional<ResourceReport> NvrtcCompiler::resource_report(const std::string& source) const {
  if (arch_.rfind("sm_", 0) != 0) return std::nullopt;  // PTX: ptxas runs in the driver, at load
  std::string log;
  if (std::optional<std::vector<uint8_t>> hit = cache_get("ptxas", key_ + "\n" + source)) {
    log.assign(hit->begin(), hit->end());
  } else {
    log = ptxas_lines(run(source, true).log);
    cache_put("ptxas", key_ + "\n" + source, {log.begin(), log.end()});
  }
  PtxasReport r = parse_ptxas_log(log);
  return ResourceReport{describe(r), slower_than_written(r)};
}

}  // namespace lg
