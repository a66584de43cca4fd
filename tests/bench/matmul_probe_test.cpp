// bench/matmul_probe.h's analysis on outputs with the faults a wrong matmul kernel makes: what each
// probe line must say about them. (The probes' products on a device: ctest bench_matmul_probe.)
#include "bench/matmul_probe.h"

#include <gtest/gtest.h>

#include <cmath>
#include <functional>
#include <limits>

namespace lg::bench {
namespace {

// An index probe's two products for an n x n output whose entry (i, j) holds index src(i, j).
using Count = std::pair<int64_t, int64_t>;  // (offset or XOR, entries)
struct Products {
  std::vector<double> hi, lo;
};
Products encode(int64_t n, const std::function<int64_t(int64_t, int64_t)>& src) {
  Products p{std::vector<double>(n * n), std::vector<double>(n * n)};
  for (int64_t i = 0; i < n; i++)
    for (int64_t j = 0; j < n; j++) {
      p.hi[i * n + j] = static_cast<double>(src(i, j) / 32);
      p.lo[i * n + j] = static_cast<double>(src(i, j) % 32);
    }
  return p;
}

TEST(MatmulProbe, ACorrectOutputIsOk) {
  Products p = encode(64, [](int64_t i, int64_t) { return i; });
  ProbeOutcome r = analyze_index_probe(p.hi, p.lo, 64, true);
  EXPECT_TRUE(r.ok());
  EXPECT_EQ(r.text(), "ok");
  EXPECT_EQ(analyze_sum_probe(std::vector<double>(64 * 64, 64.0), 64).text(), "ok");
}

TEST(MatmulProbe, ASwizzleOfEightRowGroupsShowsAsOneXorInTheBandsItHits) {
  // rows 64-127 of a 256 x 256 output came from the rows at i XOR 8 (a 16-byte chunk swizzle of the
  // second warpgroup's rows): bands 2 and 3 of 8 are wrong in every column
  const int64_t n = 256;
  Products p = encode(n, [](int64_t i, int64_t) { return i >= 64 && i < 128 ? i ^ 8 : i; });
  ProbeOutcome r = analyze_index_probe(p.hi, p.lo, n, true);
  EXPECT_FALSE(r.ok());
  EXPECT_EQ(r.wrong, 64 * n);
  EXPECT_EQ(r.nan, 0);
  EXPECT_EQ(r.unreadable, 0);
  EXPECT_EQ(r.map, "......../......../########/########/......../......../......../........");
  ASSERT_EQ(r.xors.size(), 1u);
  EXPECT_EQ(r.xors[0], Count(8, 64 * n));
  ASSERT_EQ(r.offsets.size(), 2u);  // +8 for rows 64-71 mod 16, -8 for 72-79 mod 16: as many each
  EXPECT_EQ(r.offsets[0], Count(-8, 32 * n));
  EXPECT_EQ(r.offsets[1], Count(8, 32 * n));
  ASSERT_EQ(r.first.size(), 4u);
  EXPECT_EQ(r.first[0], "(64,0):got72/want64");
  EXPECT_EQ(r.text().rfind("FAIL wrong=16384/65536 nan=0 unreadable=0 map=......../......../########/", 0),
            0u)
      << r.text();
  EXPECT_NE(
      r.text().find(" offsets=-8:8192,8:8192 xors=8:16384 first=(64,0):got72/want64;(64,1):got72/want64;"),
      std::string::npos)
      << r.text();
}

TEST(MatmulProbe, AColumnShiftShowsAsAnOffsetInSomeCells) {
  // columns 128-255 came from the columns 64 to their left (a B tile copied from the wrong place),
  // in the first 16 rows only: half of the top band row's rows in its right half, so 'x' cells
  const int64_t n = 256;
  Products p = encode(n, [](int64_t i, int64_t j) { return i < 16 && j >= 128 ? j - 64 : j; });
  ProbeOutcome r = analyze_index_probe(p.hi, p.lo, n, false);
  EXPECT_EQ(r.wrong, 16 * 128);
  EXPECT_EQ(r.map, "....xxxx/......../......../......../......../......../......../........");
  ASSERT_EQ(r.offsets.size(), 1u);
  EXPECT_EQ(r.offsets[0], Count(-64, 16 * 128));
}

TEST(MatmulProbe, NansZerosAndSumsOfSeveralIndicesAreUnreadableOrWrong) {
  const int64_t n = 64;
  Products p = encode(n, [](int64_t i, int64_t) { return i; });
  p.hi[0] = std::numeric_limits<double>::quiet_NaN();  // a tile read before its copy landed
  p.lo[1] = 40;                                        // two indices summed: lo past 31
  p.hi[2] = 5;                                         // index 160 + 0: past n
  p.hi[n + 5] = 0, p.lo[n + 5] = 0;                    // zeros where row 1 should be: index 0
  ProbeOutcome r = analyze_index_probe(p.hi, p.lo, n, true);
  EXPECT_EQ(r.wrong, 4);
  EXPECT_EQ(r.nan, 1);
  EXPECT_EQ(r.unreadable, 3);
  ASSERT_EQ(r.first.size(), 4u);
  EXPECT_EQ(r.first[0], "(0,0):got?nan,0/want0");
  EXPECT_EQ(r.first[1], "(0,1):got?0,40/want0");
  EXPECT_EQ(r.first[2], "(0,2):got?5,0/want0");
  EXPECT_EQ(r.first[3], "(1,5):got0/want1");
  ASSERT_EQ(r.offsets.size(), 1u);
  EXPECT_EQ(r.offsets[0], Count(-1, 1));
}

TEST(MatmulProbe, AMissingKTileShowsAsTheSumsShortfall) {
  // every output of the top-left 128 x 128 summed 448 of 512 k: one 64-k tile missing
  const int64_t n = 512;
  std::vector<double> got(n * n, 512.0);
  for (int64_t i = 0; i < 128; i++)
    for (int64_t j = 0; j < 128; j++) got[i * n + j] = 448.0;
  ProbeOutcome r = analyze_sum_probe(got, n);
  EXPECT_EQ(r.wrong, 128 * 128);
  EXPECT_EQ(r.map, "##....../##....../......../......../......../......../......../........");
  ASSERT_EQ(r.offsets.size(), 1u);
  EXPECT_EQ(r.offsets[0], Count(-64, 128 * 128));
  EXPECT_TRUE(r.xors.empty());  // sums are no indices
  EXPECT_EQ(r.text().find("xors="), std::string::npos);
}

}  // namespace
}  // namespace lg::bench
