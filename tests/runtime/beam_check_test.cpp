// BEAM checks its candidates' values (runtime/beam_check.h): the comparison itself, and a search
// on a device that lies about some lists (fast, wrong) never choosing them.
#include <gtest/gtest.h>

#include <cmath>
#include <cstring>
#include <map>

#include "codegen/opt.h"
#include "codegen/program.h"
#include "common/cache_dir.h"
#include "common/ir_matmul.h"
#include "ir/build.h"
#include "runtime/beam.h"
#include "runtime/beam_check.h"
#include "runtime/buffer.h"
#include "runtime/realize.h"
#include "schedule/schedule.h"

namespace lg {
namespace {

template <typename T>
std::vector<uint8_t> bytes_of(const std::vector<T>& v) {
  std::vector<uint8_t> out(v.size() * sizeof(T));
  std::memcpy(out.data(), v.data(), out.size());
  return out;
}

std::vector<uint8_t> bf16_bytes(const std::vector<float>& v) {
  std::vector<uint16_t> h;
  for (float f : v) h.push_back(float_to_bf16_bits(f));
  return bytes_of(h);
}

TEST(BeamCheck, FloatOutputsMatchWithinTheDtypesTolerance) {
  std::vector<float> ref{1.0f, -2.0f, 3.0f, 0.5f};
  EXPECT_EQ(output_mismatch(bytes_of(ref), bytes_of(ref), dtypes::float32), "");
  std::vector<float> near = ref, far = ref;
  near[3] *= 1.0001f;  // summation-order noise
  far[3] = 0.52f;      // 4% off
  EXPECT_EQ(output_mismatch(bytes_of(ref), bytes_of(near), dtypes::float32), "");
  std::string why = output_mismatch(bytes_of(ref), bytes_of(far), dtypes::float32);
  EXPECT_NE(why.find("element 3 is 0.52"), std::string::npos) << why;
  EXPECT_NE(why.find("reference has 0.5"), std::string::npos) << why;
}

TEST(BeamCheck, ASumThatCancelsIsJudgedAgainstTheOutputsScale) {
  std::vector<float> ref{1000.0f, -1000.0f, 1e-3f}, got = ref;
  got[2] = 0.1f;  // 1e-4 of the scale (rms 816): rounding of a cancelled sum
  EXPECT_EQ(output_mismatch(bytes_of(ref), bytes_of(got), dtypes::float32), "");
  got[2] = 5.0f;  // 6e-3 of it: wrong
  EXPECT_NE(output_mismatch(bytes_of(ref), bytes_of(got), dtypes::float32), "");
}

TEST(BeamCheck, TheFirstMismatchIsReportedWhereverTheThreadsSplitTheOutput) {
  std::vector<float> ref(1 << 20), got;
  for (size_t i = 0; i < ref.size(); i++) ref[i] = static_cast<float>(i % 97) - 48;
  got = ref;
  got[700000] += 50;
  got[300001] += 50;
  got[999999] = std::nanf("");
  std::string why = output_mismatch(bytes_of(ref), bytes_of(got), dtypes::float32);
  EXPECT_EQ(why.find("element 300001 is"), 0u) << why;
  std::vector<int32_t> a(1 << 20, 3), b = a;
  b[654321] = 4;
  b[800000] = 5;
  EXPECT_EQ(output_mismatch(bytes_of(a), bytes_of(b), dtypes::int32).find("element 654321 "), 0u);
}

TEST(BeamCheck, NanAndInfinityMatchOnlyThemselves) {
  float nan = std::nanf(""), inf = INFINITY;
  std::vector<float> ref{nan, inf, 1.0f};
  EXPECT_EQ(output_mismatch(bytes_of(ref), bytes_of(ref), dtypes::float32), "");
  EXPECT_NE(output_mismatch(bytes_of(ref), bytes_of(std::vector<float>{1.0f, inf, 1.0f}), dtypes::float32),
            "");
  EXPECT_NE(output_mismatch(bytes_of(ref), bytes_of(std::vector<float>{nan, -inf, 1.0f}), dtypes::float32),
            "");
  EXPECT_NE(output_mismatch(bytes_of(ref), bytes_of(std::vector<float>{nan, inf, nan}), dtypes::float32), "");
}

TEST(BeamCheck, SixteenBitOutputsAllowTheirRounding) {
  std::vector<float> ref{1.0f, 3.0f, -0.25f};
  std::vector<float> ulp{1.0078125f, 3.0f, -0.25f};  // one bf16 ulp above 1
  EXPECT_EQ(output_mismatch(bf16_bytes(ref), bf16_bytes(ulp), dtypes::bfloat16), "");
  std::vector<float> off{1.0f, 3.25f, -0.25f};  // 8% off
  std::string why = output_mismatch(bf16_bytes(ref), bf16_bytes(off), dtypes::bfloat16);
  EXPECT_NE(why.find("element 1"), std::string::npos) << why;
  EXPECT_NE(why.find("bf16"), std::string::npos) << why;
  // fp16 keeps 11 bits: the same 1/128 step is 8 of its ulps near 1, within 1e-2.
  std::vector<uint16_t> h{float_to_f16_bits(1.0f)}, g{float_to_f16_bits(1.0078125f)},
      w{float_to_f16_bits(1.03125f)};
  EXPECT_EQ(output_mismatch(bytes_of(h), bytes_of(g), dtypes::float16), "");
  EXPECT_NE(output_mismatch(bytes_of(h), bytes_of(w), dtypes::float16), "");
}

TEST(BeamCheck, IntegerAndBoolOutputsMatchBitForBit) {
  EXPECT_EQ(output_tolerance(dtypes::int32), 0);
  EXPECT_EQ(output_mismatch(bytes_of(std::vector<int32_t>{7, -3}), bytes_of(std::vector<int32_t>{7, -3}),
                            dtypes::int32),
            "");
  std::string why = output_mismatch(bytes_of(std::vector<int32_t>{7, -3}),
                                    bytes_of(std::vector<int32_t>{7, -2}), dtypes::int32);
  EXPECT_NE(why.find("element 1"), std::string::npos) << why;
  EXPECT_NE(output_mismatch(bytes_of(std::vector<uint8_t>{1, 0}), bytes_of(std::vector<uint8_t>{1, 1}),
                            dtypes::boolean),
            "");
}

TEST(BeamCheck, APoisonedOutputIsNanInEveryFloatDtype) {
  Allocator& a = get_device("CPU").allocator();
  void* p = a.alloc(64);
  poison_output(a, p, 64);
  std::vector<uint8_t> host(64);
  a.copy_out(host.data(), p, 64);
  a.free(p, 64);
  for (uint8_t b : host) ASSERT_EQ(b, 0xFF);
  std::vector<float> ones(16, 1.0f);
  EXPECT_NE(output_mismatch(bytes_of(ones), host, dtypes::float32), "") << "an unwritten f32 element";
  EXPECT_NE(output_mismatch(bf16_bytes(ones), std::vector<uint8_t>(host.begin(), host.begin() + 32),
                            dtypes::bfloat16),
            "");
  EXPECT_TRUE(std::isnan(bf16_bits_to_float(0xFFFF)) && std::isnan(f16_bits_to_float(0xFFFF)));
}

// ---- a search on a device that lies ----

// Float-valued inputs (not integers): candidates that sum in other orders round differently.
NodeRef input(const Shape& shape, float phase) {
  NodeRef b = new_buffer(device_node("CPU"), dtypes::float32, shape[0] * shape[1]);
  std::vector<float> host(static_cast<size_t>(shape[0] * shape[1]));
  for (size_t i = 0; i < host.size(); i++) host[i] = std::sin(0.37f * static_cast<float>(i) + phase);
  buffer_copy_in(*b, host.data(), host.size() * 4);
  return make(Op::RESHAPE, dtypes::float32, {b}, shape);
}

using testing_util::ir_matmul;

enum class Lie { WrongElement, LastElementUnwritten };

// Runs the real program, then lies: about one element, or by leaving the last one unwritten. It
// claims to take a nanosecond, so without the check the search would choose it.
class LyingProgram : public Program {
 public:
  LyingProgram(std::unique_ptr<Program> real, Lie lie) : real_(std::move(real)), lie_(lie) {}
  void run(const KernelArgs& args) override {
    float* out = static_cast<float*>(args.buffers[0]);
    size_t n = static_cast<size_t>(args.sizes[0]);
    std::vector<float> keep(out, out + n);
    real_->run(args);
    if (lie_ == Lie::WrongElement)
      out[n / 2] += 1.0f;
    else
      out[n - 1] = keep[n - 1];
  }
  double timed_run(const KernelArgs& args) override {
    run(args);
    return 1e-9;
  }

 private:
  std::unique_ptr<Program> real_;
  Lie lie_;
};

// The CPU device, except that the programs of the sources it was told about lie.
class LyingDevice : public Device {
 public:
  const std::string& name() const override { return cpu_.name(); }
  Allocator& allocator() override { return cpu_.allocator(); }
  const Renderer* renderer() const override { return cpu_.renderer(); }
  const Compiler* compiler() const override { return cpu_.compiler(); }
  std::vector<Opt> heuristic_opts(const NodeRef& ast) const override { return cpu_.heuristic_opts(ast); }
  std::unique_ptr<Program> load(const LinearProgram& prog, const std::string& source,
                                const std::vector<uint8_t>& binary) override {
    std::unique_ptr<Program> p = cpu_.load(prog, source, binary);
    auto it = lies_.find(source);
    return it == lies_.end() ? std::move(p) : std::make_unique<LyingProgram>(std::move(p), it->second);
  }
  void lie_about(const ScheduleItem& item, const std::vector<Opt>& opts, Lie lie) {
    lies_[renderer()->render(lower_kernel(item.ast, item.name, opts, renderer()->vector_lanes()))] = lie;
  }

 private:
  Device& cpu_ = get_device("CPU");
  std::map<std::string, Lie> lies_;
};

// Starts from one list; its next lists are fixed; every other list has none.
class FixedSpace : public BeamSpace {
 public:
  FixedSpace(std::vector<Opt> start, std::vector<std::vector<Opt>> next)
      : start_(std::move(start)), next_(std::move(next)) {}
  std::vector<std::vector<Opt>> starts() override { return {start_}; }
  std::vector<std::vector<Opt>> next(const std::vector<Opt>& opts) override {
    return opts == start_ ? next_ : std::vector<std::vector<Opt>>{};
  }

 private:
  std::vector<Opt> start_;
  std::vector<std::vector<Opt>> next_;
};

// The first `count` lists one appended action from `start` that lower.
std::vector<std::vector<Opt>> extensions(const ScheduleItem& item, const std::vector<Opt>& start,
                                         size_t count) {
  std::vector<std::vector<Opt>> out;
  for (const Opt& o : beam_actions(apply_opts(item.ast, start))) {
    std::vector<Opt> l = start;
    l.push_back(o);
    try {
      lower_kernel(item.ast, item.name, l, get_device("CPU").renderer()->vector_lanes());
    } catch (const OptError&) {
      continue;
    }
    out.push_back(l);
    if (out.size() == count) break;
  }
  return out;
}

// A search of width 2 from the heuristic's list over three extensions of it, on a device whose
// programs for the first lie about one element and for the second leave the last one unwritten.
// Checks what every such search must give: the choice is the start or the honest third list, and
// both liars are reported.
struct LyingSearch {
  std::vector<std::vector<Opt>> lists;
  std::vector<Opt> chosen;
  std::string err;  // the search's stderr
};
LyingSearch search_with_two_lies(const ScheduleItem& item) {
  LyingDevice dev;
  std::vector<Opt> start = dev.heuristic_opts(item.ast);
  LyingSearch r{extensions(item, start, 3), {}, {}};
  EXPECT_EQ(r.lists.size(), 3u);
  if (r.lists.size() != 3) return r;
  dev.lie_about(item, r.lists[0], Lie::WrongElement);
  dev.lie_about(item, r.lists[1], Lie::LastElementUnwritten);
  FixedSpace space(start, r.lists);
  testing::internal::CaptureStderr();
  r.chosen = beam_search(dev, item, space, 2);
  r.err = testing::internal::GetCapturedStderr();
  EXPECT_TRUE(r.chosen == start || r.chosen == r.lists[2]) << to_string(r.chosen);
  for (int i : {0, 1})
    EXPECT_NE(r.err.find("the Opts " + to_string(r.lists[i]) + " compute other values"), std::string::npos)
        << r.err;
  return r;
}

TEST(BeamCheck, TheSearchNeverChoosesAListWhoseValuesDiffer) {
  testing_util::CacheDir dir;
  Schedule s =
      create_schedule(make(Op::SINK, dtypes::void_, {ir_matmul(input({24, 40}, 0), input({40, 16}, 1))}));
  LyingSearch r = search_with_two_lies(s.items.at(0));
  EXPECT_NE(r.chosen, r.lists[0]) << "a wrong element";
  EXPECT_NE(r.chosen, r.lists[1]) << "an unwritten element (the output is poisoned before each run)";
  EXPECT_EQ(r.err.find(to_string(r.lists[2]) + " compute other"), std::string::npos) << r.err;
}

// An update in place with two outputs (m <- m/2 + g, p <- p - m): the scratch outputs start from
// m's and p's values, so a candidate that leaves an element of m unwritten shows the old value
// there (poison would make every candidate's m all NaN alike), and the real buffers keep theirs.
TEST(BeamCheck, InPlaceOutputsStartFromTheirValuesAndStayUntouched) {
  testing_util::CacheDir dir;
  auto flat = [](float phase) { return input({1, 256}, phase)->src[0]; };  // the BUFFER under the view
  NodeRef m = flat(4), p = flat(5), g = flat(6);
  NodeRef half =
      make(Op::EXPAND, dtypes::float32,
           {make(Op::RESHAPE, dtypes::float32, {cnst(dtypes::float32, 0.5, device_node("CPU"))}, Shape{1})},
           Shape{256});
  NodeRef m_new = make(Op::ASSIGN, dtypes::float32, {m, m * half + g});
  NodeRef p_new = make(Op::ASSIGN, dtypes::float32, {p, p - m_new});
  Schedule s = create_schedule(make(Op::SINK, dtypes::void_, {m_new, p_new}));
  ASSERT_EQ(s.items.size(), 1u);
  const ScheduleItem& item = s.items[0];
  ASSERT_EQ(item.outputs, 2u);
  std::vector<float> m_before(256), p_before(256), after(256);
  buffer_copy_out(*m, m_before.data(), 1024);
  buffer_copy_out(*p, p_before.data(), 1024);
  LyingSearch r = search_with_two_lies(item);
  EXPECT_NE(r.err.find("output 0: "), std::string::npos) << r.err;
  buffer_copy_out(*m, after.data(), 1024);
  EXPECT_EQ(after, m_before);
  buffer_copy_out(*p, after.data(), 1024);
  EXPECT_EQ(after, p_before);
}

// The CPU's own search space on a float-valued matmul: candidates sum in other orders (UNROLL,
// UPCAST of the reduce axis) and none of them is taken for wrong.
TEST(BeamCheck, NoCandidateOfTheCpuSpaceIsRejectedForItsRounding) {
  testing_util::CacheDir dir;
  Schedule s =
      create_schedule(make(Op::SINK, dtypes::void_, {ir_matmul(input({8, 128}, 2), input({128, 8}, 3))}));
  testing::internal::CaptureStderr();
  beam_search(get_device("CPU"), s.items.at(0), 1);
  std::string err = testing::internal::GetCapturedStderr();
  EXPECT_EQ(err.find("compute other values"), std::string::npos) << err;
}

}  // namespace
}  // namespace lg
