// HIP compile checks in batches (runtime/hip_batch.h): HIPRECORD records each kernel's HIP source
// and computes what the interpreter computes; a batch is the prelude once and each kernel in its own
// namespace; the recorded kernels compile together with hipcc (skipped without it), and a kernel
// that does not compile is named. HipBatch.TheRecordedSourcesOfThisRunCompile is the end of the
// ctest fixture hip_record (tests/CMakeLists.txt): it compiles what the HIPRECORD tests recorded.
#include <gtest/gtest.h>

#include <cstdlib>
#include <filesystem>
#include <fstream>

#include "codegen/heuristic_gpu.h"
#include "codegen/render_hip.h"
#include "common/cache_dir.h"
#include "common/realized_values.h"
#include "ir/build.h"
#include "runtime/buffer.h"
#include "runtime/compile_check.h"
#include "runtime/hip_batch.h"
#include "runtime/hipcc.h"
#include "runtime/realize.h"
#include "schedule/schedule.h"

namespace lg {
namespace {

#define SKIP_WITHOUT_HIPCC() \
  if (!hipcc_available()) GTEST_SKIP() << "hipcc is not on PATH (Debian: apt-get install hipcc)"

// sum over rows of (x * x + x) for a 32 x w float32 x on device: an elementwise part and a row
// reduction, two kinds of kernels. (A process loads a kernel once: tests that record use their own w.)
NodeRef row_sums(const std::string& device, int64_t w) {
  const int64_t n = 32 * w;
  NodeRef b = new_buffer(device_node(device), dtypes::float32, n);
  std::vector<float> host(n);
  for (int64_t i = 0; i < n; i++) host[i] = 0.25f * static_cast<float>((i * 7) % 11 - 5);
  buffer_copy_in(*b, host.data(), n * 4);
  NodeRef x = make(Op::RESHAPE, dtypes::float32, {b}, Shape{32, w});
  NodeRef y = make(Op::CONTIGUOUS, dtypes::float32, {x * x + x});
  return make(Op::RESHAPE, dtypes::float32, {make(Op::REDUCE_AXIS, dtypes::float32, {y}, ReduceArg{Op::ADD, {1}})}, Shape{32});
}

std::vector<float> compute(const std::string& device, int64_t w) { return testing_util::realized_float32(row_sums(device, w)); }

size_t files_in(const std::string& dir) {
  size_t n = 0;
  std::error_code ec;
  for (const auto& e : std::filesystem::directory_iterator(dir, ec)) n += e.path().extension() == ".hip";
  return n;
}

// Two kernels' sources as the HIP renderer writes them.
std::vector<std::string> two_sources() {
  Schedule s = create_schedule(make(Op::SINK, dtypes::void_, {row_sums("CPU", 256)}));
  std::vector<std::string> out;
  for (const ScheduleItem& item : s.items)
    if (item.kind == ScheduleItem::Kind::Kernel)
      out.push_back(HipRenderer().render(lower_kernel(item.ast, item.name, gpu_heuristic_opts(item.ast))));
  EXPECT_EQ(out.size(), 2u);
  return out;
}

size_t count(const std::string& s, const std::string& what) {
  size_t n = 0;
  for (size_t p = s.find(what); p != std::string::npos; p = s.find(what, p + 1)) n++;
  return n;
}

TEST(HipBatch, HipRecordRecordsEachKernelAndComputesWhatTheInterpreterComputes) {
  testing_util::CacheDir dir;
  std::vector<float> got = compute("HIPRECORD", 256), want = compute("INTERP", 256);
  ASSERT_EQ(got.size(), want.size());
  for (size_t i = 0; i < got.size(); i++) EXPECT_EQ(got[i], want[i]) << i;
  EXPECT_EQ(files_in(hip_record_dir()), 2u) << "the elementwise kernel and the row sums";
  compute("HIPRECORD", 256);
  EXPECT_EQ(files_in(hip_record_dir()), 2u) << "a kernel is recorded once";
}

TEST(HipBatch, ABatchIsThePreludeOnceAndEachKernelInANamespaceOfItsOwn) {
  std::vector<std::string> s = two_sources();
  std::string b = hip_batch_source(s);
  EXPECT_EQ(count(b, "#include <hip/hip_runtime.h>"), 1u) << b;
  EXPECT_EQ(count(b, " lg_kernel("), 0u) << b;
  EXPECT_EQ(count(b, " lg_kernel_0("), 1u);
  EXPECT_EQ(count(b, " lg_kernel_1("), 1u);
  EXPECT_EQ(count(b, "namespace lg_batch_0 {"), 1u);
  EXPECT_EQ(count(b, "namespace lg_batch_1 {"), 1u);
  EXPECT_DEATH(hip_batch_source({"int x;"}), "does not start with the HIP prelude");
}

TEST(HipBatch, RecordedKernelsCompileTogetherAndAKernelThatDoesNotIsNamed) {
  SKIP_WITHOUT_HIPCC();
  testing_util::CacheDir dir;
  compute("HIPRECORD", 128);
  HipBatchResult r = compile_recorded_hip_sources(hip_record_dir(), 1, 2);
  EXPECT_EQ(r.kernels, 2u);
  EXPECT_EQ(r.batches, 2u);
  r = compile_recorded_hip_sources(hip_record_dir());
  EXPECT_EQ(r.kernels, 2u);
  EXPECT_EQ(r.batches, 1u);
  std::ofstream(hip_record_dir() + "/broken.hip") << kHipPrelude << "extern \"C\" __global__ void lg_kernel(float* d) { d[0] = undeclared; }\n";
  EXPECT_DEATH(compile_recorded_hip_sources(hip_record_dir()), "broken.hip does not compile(.|\n)*hipcc failed(.|\n)*undeclared");
}

// The ctest fixture hip_record (tests/CMakeLists.txt) around the HIPRECORD tests of a ctest run:
// its setup empties the record folder (under LAZYGRAD_CACHE_DIR), its cleanup compiles every source
// recorded there with hipcc. Both skip outside it (LG_HIP_RECORD_STEP names the step).
bool fixture_step(const char* step) {
  const char* s = std::getenv("LG_HIP_RECORD_STEP");
  return s != nullptr && std::string(s) == step;
}

TEST(HipBatch, TheRecordFolderIsEmptiedBeforeARun) {
  if (!fixture_step("clear")) GTEST_SKIP() << "run by the ctest HIPRECORD.clear_recorded_sources";
  std::filesystem::remove_all(hip_record_dir());
  EXPECT_FALSE(std::filesystem::exists(hip_record_dir()));
}

TEST(HipBatch, TheRecordedSourcesOfThisRunCompile) {
  if (!fixture_step("compile")) GTEST_SKIP() << "run by the ctest HIPRECORD.compile_recorded_sources";
  SKIP_WITHOUT_HIPCC();
  HipBatchResult r = compile_recorded_hip_sources(hip_record_dir());
  std::printf("compiled %zu recorded HIP kernels in %zu hipcc calls (%s)\n", r.kernels, r.batches, hip_record_dir().c_str());
  EXPECT_GT(r.kernels, 0u) << "nothing recorded in " << hip_record_dir();
}

}  // namespace
}  // namespace lg
