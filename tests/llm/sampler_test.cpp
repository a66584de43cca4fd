// The MLPerf samplers and the prefetching batch iterator: window lengths, the one-token overlap,
// each window once per epoch, determinism per seed, resumption from a recorded position.
#include <gtest/gtest.h>

#include <algorithm>
#include <filesystem>
#include <numeric>
#include <set>

#include "data_paths.h"
#include "llm/batch_iterator.h"
#include "llm/indexed_dataset.h"
#include "llm/sampler.h"

namespace lg::llm {
namespace {

namespace fs = std::filesystem;
using Ids = std::vector<int32_t>;

// Documents of lengths 5, 0, 17, 1, 9, 30, 2, 11; token j of document d is 1000*d + j.
class Samplers : public ::testing::Test {
 protected:
  void SetUp() override {
    dir_ = testing::fresh_temp_dir("sampler");
    std::string prefix = (dir_ / "d").string();
    IndexedDatasetWriter w(prefix, TokenDtype::I32);
    for (size_t d = 0; d < lengths_.size(); ++d) {
      Ids doc(lengths_[d]);
      for (int j = 0; j < lengths_[d]; ++j) doc[j] = 1000 * static_cast<int>(d) + j;
      w.add_document(doc);
    }
    w.finish();
    data_ = std::make_shared<const IndexedDataset>(prefix);
  }
  void TearDown() override { fs::remove_all(dir_); }

  // The token stream of documents in the given order.
  Ids stream(const std::vector<uint32_t>& order) const {
    Ids s;
    for (uint32_t d : order)
      for (int j = 0; j < lengths_[d]; ++j) s.push_back(1000 * static_cast<int>(d) + j);
    return s;
  }
  Ids sample(const WindowSource& src, uint64_t k) const {
    Ids w(src.seq_len() + 1);
    src.read(k, w.data());
    return w;
  }

  std::vector<int> lengths_ = {5, 0, 17, 1, 9, 30, 2, 11};  // 75 tokens
  fs::path dir_;
  std::shared_ptr<const IndexedDataset> data_;
};

TEST(SeededPermutation, IsAPermutationFixedBySeed) {
  std::vector<uint32_t> p = seeded_permutation(1000, 7);
  std::vector<uint32_t> sorted = p;
  std::sort(sorted.begin(), sorted.end());
  std::vector<uint32_t> identity(1000);
  std::iota(identity.begin(), identity.end(), 0u);
  EXPECT_EQ(sorted, identity);
  EXPECT_EQ(p, seeded_permutation(1000, 7));
  EXPECT_NE(p, seeded_permutation(1000, 8));
  // pinned, and checked against an independent Python mt19937_64 + Fisher-Yates: the same on every
  // compiler and standard library
  EXPECT_EQ(seeded_permutation(8, 42), (std::vector<uint32_t>{7, 0, 5, 1, 2, 4, 3, 6}));
}

TEST_F(Samplers, ValidationWindowsTileTheFileOrderStreamWithOneTokenOverlap) {
  const int64_t t = 8;
  ValidationSampler v(data_, t, 1000);
  EXPECT_EQ(v.num_samples(), (75u - 1) / t);  // 9 whole windows of 9 tokens
  Ids s = stream({0, 1, 2, 3, 4, 5, 6, 7});
  for (uint64_t k = 0; k < v.num_samples(); ++k)
    EXPECT_EQ(sample(v, k), Ids(s.begin() + k * t, s.begin() + k * t + t + 1)) << "window " << k;
  EXPECT_EQ(ValidationSampler(data_, t, 3).num_samples(), 3u);  // the first eval_samples
}

TEST_F(Samplers, TrainingVisitsEveryWindowOncePerEpochOfTheShuffledStream) {
  const int64_t t = 4;
  TrainSampler train(data_, t, 1234);
  const uint64_t w = train.windows_per_epoch();
  EXPECT_EQ(w, (75u - 1) / t);
  for (uint64_t e = 0; e < 3; ++e) {
    auto epoch = train.epoch(e);
    Ids s = stream(epoch->documents);
    std::set<Ids> seen;
    for (uint64_t j = 0; j < w; ++j) {
      uint64_t window = epoch->windows[j];
      Ids got = sample(train, e * w + j);
      ASSERT_EQ(got, Ids(s.begin() + window * t, s.begin() + window * t + t + 1));
      seen.insert(got);
    }
    EXPECT_EQ(seen.size(), w) << "epoch " << e;  // each window exactly once
  }
  EXPECT_NE(train.epoch(0)->windows, train.epoch(1)->windows);
}

TEST_F(Samplers, OrdersAreDeterministicPerSeedAndDifferAcrossSeeds) {
  TrainSampler a(data_, 4, 1), b(data_, 4, 1), c(data_, 4, 2);
  std::vector<Ids> sa, sb, sc;
  for (uint64_t k = 0; k < 40; ++k) {
    sa.push_back(sample(a, k));
    sb.push_back(sample(b, k));
    sc.push_back(sample(c, k));
  }
  EXPECT_EQ(sa, sb);
  EXPECT_NE(sa, sc);
}

TEST_F(Samplers, TooLittleDataIsAUserError) {
  EXPECT_THROW(TrainSampler(data_, 75, 0), Error);
  EXPECT_NO_THROW(TrainSampler(data_, 74, 0));
}

TEST_F(Samplers, BatchesShiftLabelsByOneAndResumeFromTheRecordedPosition) {
  auto train = std::make_shared<const TrainSampler>(data_, 4, 9);
  BatchIterator it(train, 3);
  std::optional<Batch> b0 = it.next();
  ASSERT_TRUE(b0);
  EXPECT_EQ(it.position(), 3u);
  for (int r = 0; r < 3; ++r) {
    Ids w = sample(*train, r);
    EXPECT_EQ(Ids(b0->inputs.begin() + r * 4, b0->inputs.begin() + r * 4 + 4), Ids(w.begin(), w.end() - 1));
    EXPECT_EQ(Ids(b0->labels.begin() + r * 4, b0->labels.begin() + r * 4 + 4), Ids(w.begin() + 1, w.end()));
  }
  std::vector<Ids> rest;
  for (int i = 0; i < 10; ++i) rest.push_back(it.next()->inputs);  // crosses epochs (18 windows each)
  BatchIterator resumed(train, 3, /*start=*/3);
  for (int i = 0; i < 10; ++i) EXPECT_EQ(resumed.next()->inputs, rest[i]) << "batch " << i;
}

TEST_F(Samplers, FiniteSourcesEndAfterTheLastWholeBatch) {
  auto v = std::make_shared<const ValidationSampler>(data_, 8, 1000);  // 9 windows
  BatchIterator it(v, 4);
  EXPECT_EQ(it.next()->first_sample, 0u);
  EXPECT_EQ(it.next()->first_sample, 4u);
  EXPECT_FALSE(it.next().has_value());
  EXPECT_EQ(it.position(), 8u);
}

TEST(BrownSamplers, ValidationWindowsOfTheBundledCorpus) {
  fs::path prefix = testing::data_dir() / "brown" / "brown-validation_text_document";
  if (!fs::exists(prefix.string() + ".idx")) GTEST_SKIP() << "run scripts/fetch_data.sh";
  auto data = std::make_shared<const IndexedDataset>(prefix.string());
  EXPECT_EQ(data->size(), 25u);
  ValidationSampler v(data, 8192, 1024);
  EXPECT_EQ(v.num_samples(), (data->total_tokens() - 1) / 8192);
}

}  // namespace
}  // namespace lg::llm
