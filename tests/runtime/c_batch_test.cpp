// Several C kernels in one compiler run (runtime/c_batch.h, CCompiler::compile_many): which
// sources may share a unit, the unit's text, one run for every batchable kernel with each kernel's
// own shared object computing its values, and a failing kernel named with its own error.
#include <dlfcn.h>
#include <gtest/gtest.h>
#include <sys/mman.h>
#include <unistd.h>

#include <algorithm>
#include <string>
#include <vector>

#include "common/cache_dir.h"
#include "ir/build.h"
#include "runtime/buffer.h"
#include "runtime/c_batch.h"
#include "runtime/cpu.h"
#include "runtime/program_build.h"
#include "schedule/schedule.h"

namespace lg {
namespace {

using testing_util::CacheDir;

struct Kernel {
  ScheduleItem item;
  LinearProgram prog;
  std::string source;
};

// A float32 input of n elements on CPU: x[i] = scale * ((i * 7) % 11 - 5).
NodeRef input(int64_t n, float scale, std::vector<float>& host) {
  NodeRef b = new_buffer(device_node("CPU"), dtypes::float32, n);
  host.resize(static_cast<size_t>(n));
  for (int64_t i = 0; i < n; i++) host[i] = scale * static_cast<float>((i * 7) % 11 - 5);
  buffer_copy_in(*b, host.data(), host.size() * 4);
  return b;
}

// The kernels of sink's schedule, lowered with the CPU heuristic and rendered as C.
std::vector<Kernel> kernels_of(const NodeRef& sink) {
  Device& cpu = get_device("CPU");
  std::vector<Kernel> out;
  for (const ScheduleItem& item : create_schedule(sink).items) {
    if (item.kind == ScheduleItem::Kind::Copy) continue;
    LinearProgram prog =
        lower_kernel(item.ast, item.name, choose_opts(cpu, item), cpu.renderer()->vector_lanes());
    std::string source = cpu.renderer()->render(prog);
    out.push_back({item, std::move(prog), std::move(source)});
  }
  return out;
}

// Three kernels and their values on the host: x * x + x (13 x 11), the maximum of each row of x,
// y + y + y (40 elements).
struct Three {
  std::vector<Kernel> kernels;
  std::vector<std::vector<float>> want;
};
Three three_kernels() {
  std::vector<float> xs, ys;
  NodeRef x = make(Op::RESHAPE, dtypes::float32, {input(13 * 11, 0.5f, xs)}, Shape{13, 11});
  NodeRef y = input(40, 0.25f, ys);
  NodeRef row_max = make(Op::REDUCE_AXIS, dtypes::float32, {x}, ReduceArg{Op::MAX, {1}});
  Three t{kernels_of(make(Op::SINK, dtypes::void_, {x * x + x, row_max, y + y + y})), {}};
  std::vector<float> a, m(13, -1e30f), b;
  for (float v : xs) a.push_back(v * v + v);
  for (size_t i = 0; i < xs.size(); i++) m[i / 11] = std::max(m[i / 11], xs[i]);
  for (float v : ys) b.push_back(v + v + v);
  t.want = {a, m, b};
  return t;
}

// A rendered source with a helper of its own between the prelude and the kernel: still valid C.
std::string with_helper(const std::string& source) {
  std::string s = source;
  s.insert(s.rfind("/* ", s.find("void lg_kernel(")), "static int lg_own_helper(void) { return 1; }\n");
  return s;
}

// Runs a loaded kernel on its schedule item's buffers; the output's values.
std::vector<float> run(Program& p, const ScheduleItem& item) {
  KernelArgs args;
  for (const NodeRef& b : item.buffers) {
    args.buffers.push_back(buffer_memory(*b).ptr);
    args.sizes.push_back(b->get_arg<BufferArg>().size);
  }
  p.run(args);
  std::vector<float> out(static_cast<size_t>(item.buffers[0]->get_arg<BufferArg>().size));
  buffer_copy_out(*item.buffers[0], out.data(), out.size() * 4);
  return out;
}

size_t count(const std::string& text, const std::string& what) {
  size_t n = 0;
  for (size_t at = text.find(what); at != std::string::npos; at = text.find(what, at + 1)) n++;
  return n;
}

TEST(CBatch, RenderedKernelsAreBatchableAndKernelsWithHelpersAreNot) {
  Three t = three_kernels();
  ASSERT_EQ(t.kernels.size(), 3u);
  std::vector<std::string> sources;
  for (const Kernel& k : t.kernels) {
    EXPECT_TRUE(c_batchable(k.source)) << k.item.name;
    EXPECT_FALSE(c_batchable(with_helper(k.source))) << k.item.name;
    sources.push_back(k.source);
  }
  EXPECT_FALSE(c_batchable("void lg_kernel(void** bufs, long begin, long end) {}\n"));
  EXPECT_FALSE(
      c_batchable(t.kernels[0].source + "void lg_kernel(void** b, long x, long y) {}\n"));  // two entries

  std::string unit = c_batch_source(sources);
  EXPECT_EQ(count(unit, "#include <stdint.h>"), 1u) << "the prelude once";
  EXPECT_EQ(count(unit, "void lg_kernel("), 0u);
  for (size_t i = 0; i < sources.size(); i++) {
    EXPECT_EQ(count(unit, "void " + c_batch_entry(i) + "("), 1u) << i;
    std::string own = sources[i].substr(sources[i].rfind("/* ", sources[i].find("void lg_kernel(")));
    own.replace(own.find("lg_kernel("), 10, c_batch_entry(i) + "(");
    EXPECT_NE(unit.find(own), std::string::npos) << "source " << i << "'s own part, renamed";
  }
}

TEST(CBatchDeathTest, AnUnbatchableSourceInAUnitIsAnInternalError) {
  Three t = three_kernels();
  EXPECT_DEATH(c_batch_source({t.kernels[0].source, with_helper(t.kernels[1].source)}),
               "C batch: source 1 is not a C renderer kernel");
}

TEST(CBatch, OneCompilerRunBuildsEveryBatchableKernelIntoItsOwnObject) {
  CacheDir dir;
  Device& cpu = get_device("CPU");
  Three t = three_kernels();
  std::vector<std::string> sources;
  for (const Kernel& k : t.kernels) sources.push_back(k.source);
  sources.push_back(with_helper(t.kernels[2].source));  // builds alone
  size_t runs = cpu_compiler_runs(), compiles = cpu_compiles();
  std::vector<std::vector<uint8_t>> bins = cpu.compiler()->compile_many(sources);
  EXPECT_EQ(cpu_compiler_runs() - runs, 2u) << "one run for the three batchable kernels, one for the other";
  EXPECT_EQ(cpu_compiles() - compiles, 4u);
  ASSERT_EQ(bins.size(), 4u);
  for (size_t i = 0; i < bins.size(); i++) {
    const Kernel& k = t.kernels[std::min<size_t>(i, 2)];
    std::unique_ptr<Program> p = cpu.load(k.prog, sources[i], bins[i]);
    EXPECT_EQ(run(*p, k.item), t.want[std::min<size_t>(i, 2)]) << "kernel " << i;
  }
  // Each object exports lg_kernel and nothing of the unit's other kernels.
  int fd = memfd_create("c_batch_test", MFD_CLOEXEC);
  ASSERT_GE(fd, 0);
  ASSERT_EQ(write(fd, bins[1].data(), bins[1].size()), static_cast<ssize_t>(bins[1].size()));
  void* h = dlopen(("/proc/self/fd/" + std::to_string(fd)).c_str(), RTLD_NOW | RTLD_LOCAL);
  ASSERT_NE(h, nullptr) << dlerror();
  EXPECT_NE(dlsym(h, "lg_kernel"), nullptr);
  for (size_t i = 0; i < 3; i++) EXPECT_EQ(dlsym(h, c_batch_entry(i).c_str()), nullptr) << i;
  dlclose(h);
  close(fd);
}

TEST(CBatchDeathTest, AKernelThatFailsInAUnitIsNamedWithItsOwnError) {
  Three t = three_kernels();
  std::string bad = t.kernels[1].source;
  bad.replace(bad.find("(void)begin;"), 12, "(void)begin; int x = ;");
  ASSERT_TRUE(c_batchable(bad));
  EXPECT_DEATH(
      {
        CacheDir dir;
        get_device("CPU").compiler()->compile_many({t.kernels[0].source, bad});
      },
      "C compiler failed(.|\n)*expected expression(.|\n)*--- source ---(.|\n)*int x = ;");
}

}  // namespace
}  // namespace lg
