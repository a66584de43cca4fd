// The CPU device: compiled kernels agree with INTERP, the disk cache, compile errors, BEAM, threads.
#include <gtest/gtest.h>

#include <algorithm>
#include <atomic>
#include <cstring>
#include <filesystem>
#include <thread>

#include "base/config.h"
#include "codegen/program.h"
#include "common/cache_dir.h"
#include "common/ir_matmul.h"
#include "ir/build.h"
#include "runtime/beam.h"
#include "runtime/buffer.h"
#include "runtime/cpu.h"
#include "runtime/kernel_graph_util.h"
#include "runtime/program_build.h"
#include "runtime/realize.h"
#include "runtime/thread_pool.h"
#include "schedule/schedule.h"

namespace lg {
namespace {

using graph_testing::input;
using graph_testing::values;
using testing_util::CacheDir;
using testing_util::ir_matmul;

std::vector<float> compute(const std::string& device) {
  NodeRef a = input(device, {16, 12}, 0.5f), b = input(device, {12, 8}, 0.25f);
  return values(realize(make(Op::SINK, dtypes::void_, {ir_matmul(a, b)}))[0]);
}

TEST(Cpu, CompiledMatmulEqualsTheInterpreter) { EXPECT_EQ(compute("CPU"), compute("INTERP")); }

TEST(Cpu, DiskCacheHitsAfterTheFirstCompile) {
  CacheDir dir;
  NodeRef a = input("CPU", {4, 4}, 1), b = input("CPU", {4, 4}, 2);
  Schedule s = create_schedule(make(Op::SINK, dtypes::void_, {a * b + a}));
  LinearProgram p = lower_kernel(s.items[0].ast, s.items[0].name);
  Device& cpu = get_device("CPU");
  EXPECT_TRUE(build_program(cpu, p).compiled);
  size_t compiles = cpu_compiles();
  EXPECT_FALSE(build_program(cpu, p).compiled);
  EXPECT_EQ(cpu_compiles(), compiles);
  config().cache = false;
  EXPECT_TRUE(build_program(cpu, p).compiled);  // CACHE=0: always compile
  config().cache = true;
}

// realize builds a schedule's new programs first, their compiles on the thread pool at once
// (runtime/realize.cpp): each kernel compiled once, the values those of the interpreter, and a
// second realize of the same graph compiles nothing. (Shapes no other test here uses: programs are
// kept per kernel for the process.)
std::vector<std::vector<float>> three_kernels(const std::string& device) {
  NodeRef a = input(device, {13, 11}, 0.5f), b = input(device, {11, 7}, 0.25f);
  NodeRef sink = make(Op::SINK, dtypes::void_,
                      {ir_matmul(a, b), make(Op::REDUCE_AXIS, a->dtype, {a}, ReduceArg{Op::MAX, {1}}), a * a + a});
  std::vector<std::vector<float>> out;
  for (const NodeRef& v : realize(sink)) out.push_back(values(v));
  return out;
}

TEST(Cpu, AScheduleCompilesItsNewKernelsTogetherAndEachOnce) {
  CacheDir dir;
  size_t compiles = cpu_compiles(), built = programs_built(), runs = cpu_compiler_runs();
  std::vector<std::vector<float>> got = three_kernels("CPU");
  EXPECT_EQ(got, three_kernels("INTERP"));
  EXPECT_GE(cpu_compiles() - compiles, 3u);
  EXPECT_EQ(cpu_compiles() - compiles, programs_built() - built - 3);  // minus the interpreter's
  // one compiler run per group of kernels (runtime/c_batch.h), a group per thread at most
  EXPECT_LE(cpu_compiler_runs() - runs,
            std::min<size_t>(static_cast<size_t>(threads()), cpu_compiles() - compiles));
  compiles = cpu_compiles();
  EXPECT_EQ(three_kernels("CPU"), got);
  EXPECT_EQ(cpu_compiles(), compiles);
}

// One kernel on two CPU devices in one schedule: the same source for the same compiler, built once.
TEST(Cpu, AKernelRenderedAlikeForTwoDevicesCompilesOnce) {
  CacheDir dir;
  NodeRef a = input("CPU:0", {9, 5}, 0.5f), b = input("CPU:1", {9, 5}, 0.5f);
  size_t compiles = cpu_compiles(), built = programs_built();
  std::vector<NodeRef> out = realize(make(Op::SINK, dtypes::void_, {a * a + a, b * b + b}));
  EXPECT_EQ(programs_built() - built, 2u);
  EXPECT_EQ(cpu_compiles() - compiles, 1u);
  EXPECT_EQ(values(out[0]), values(out[1]));
  EXPECT_EQ(values(out[0])[1], 0.5f * 2 * (0.5f * 2) + 0.5f * 2);  // x[1] = 0.5 * (7 % 11 - 5) = 1
}

TEST(Cpu, ConcurrentWritersOfOneCacheEntryAreSafe) {
  CacheDir dir;
  NodeRef a = input("CPU", {8}, 1);
  Schedule s = create_schedule(make(Op::SINK, dtypes::void_, {a * a * a}));
  LinearProgram p = lower_kernel(s.items[0].ast, s.items[0].name);
  std::atomic<int> ok{0};
  std::vector<std::thread> ts;
  for (int i = 0; i < 4; i++) ts.emplace_back([&] { ok += build_program(get_device("CPU"), p).program != nullptr; });
  for (auto& t : ts) t.join();
  EXPECT_EQ(ok.load(), 4);
  EXPECT_FALSE(build_program(get_device("CPU"), p).compiled);
}

TEST(Cpu, ReusedLargeBuffersHoldTheNewResult) {
  // 2 MiB of float32: above the allocator's mapping threshold, so the second round's buffers are
  // the first round's freed memory, stale values and all; the kernel must overwrite every element.
  const int64_t n = 512 * 1024;
  Device& cpu = get_device("CPU");
  for (float scale : {1.0f, -3.0f}) {
    NodeRef a = input("CPU", {n}, scale);
    NodeRef sum = realize(make(Op::SINK, dtypes::void_, {a + a}))[0];
    std::vector<float> got = values(sum);
    for (int64_t i = 0; i < n; i += 4099) ASSERT_EQ(got[i], 2 * scale * static_cast<float>((i * 7) % 11 - 5)) << i;
  }
  void* p = cpu.allocator().alloc(size_t{4} << 20);
  cpu.allocator().free(p, size_t{4} << 20);
  EXPECT_EQ(cpu.allocator().alloc(size_t{4} << 20), p) << "a freed mapping comes back for the same size";
  cpu.allocator().free(p, size_t{4} << 20);
}

TEST(CpuDeathTest, CompileErrorsShowTheCompilerMessageAndTheSource) {
  EXPECT_DEATH(get_device("CPU").compiler()->compile("void lg_kernel(void) { int x = ; }\n"),
               "C compiler failed(.|\n)*expected expression(.|\n)*--- source ---(.|\n)*int x = ;");
}

TEST(Beam, FindsOptsThatKeepTheResultAndCachesThem) {
  CacheDir dir;
  NodeRef a = input("CPU", {16, 32}, 1), b = input("CPU", {32, 16}, 1);
  Schedule s = create_schedule(make(Op::SINK, dtypes::void_, {ir_matmul(a, b)}));
  const ScheduleItem& item = s.items[0];
  std::vector<Opt> opts = beam_search(get_device("CPU"), item, 2);
  // The search starts from the heuristic's list and only extends it: its result is never a list
  // the search did not compare with the heuristic's.
  std::vector<Opt> heuristic = get_device("CPU").heuristic_opts(item.ast);
  ASSERT_FALSE(heuristic.empty());
  ASSERT_GE(opts.size(), heuristic.size());
  EXPECT_TRUE(std::equal(heuristic.begin(), heuristic.end(), opts.begin())) << to_string(opts);
  size_t compiles = cpu_compiles();
  EXPECT_EQ(beam_search(get_device("CPU"), item, 2), opts);  // from the disk cache
  EXPECT_EQ(cpu_compiles(), compiles);
  // Integer-valued inputs: the sums are exact in any order.
  auto run = [&](const std::vector<Opt>& o) {
    auto p = build_program(get_device("CPU"), lower_kernel(item.ast, item.name, o)).program;
    KernelArgs args;
    for (const NodeRef& x : item.buffers) {
      args.buffers.push_back(buffer_memory(*x).ptr);
      args.sizes.push_back(x->get_arg<BufferArg>().size);
    }
    p->run(args);
    return values(item.buffers[0]);
  };
  EXPECT_EQ(run(opts), run({}));
}

TEST(ThreadPool, ParallelForCoversEveryIndexOnce) {
  std::vector<std::atomic<int>> hits(1000);
  parallel_for(1000, [&](int64_t b, int64_t e) {
    for (int64_t i = b; i < e; i++) hits[i]++;
  });
  for (auto& h : hits) EXPECT_EQ(h.load(), 1);
  parallel_for(0, [&](int64_t, int64_t) { FAIL(); });
}

}  // namespace
}  // namespace lg
