#pragma once
// Named tensors stored as runs of one flat 1-D buffer: the optimizer's parameters, gradients and
// state, and TrainStep's compute copies. One layout serves every buffer of a set, so element k of
// the gradient buffer belongs to element k of the parameter buffer, and an update over the whole
// buffer is one kernel instead of one per tensor.
//
// Invariants:
//   - entry i occupies [offset(i), offset(i) + numel(i)); offsets are multiples of kAlign elements
//     (aligned vector loads in every dtype), and the gaps between entries are padding;
//   - entries are ordered by group (stable), so group g is the one run [group_begin(g),
//     group_end(g)) (with its padding), and the groups tile [0, numel());
//   - a buffer of at least kWholeVectorsFrom elements holds a multiple of kWholeVectors (the last
//     group's padding grows): a reduction over the whole buffer (the gradient norm) splits into 64
//     chunks (schedule/split_reduce.h) of whole 16-lane vectors (chunks of 519,178 elements, which
//     no 16-lane UPCAST divides, left the CPU's sum of squares over the `mini` model's 33.2M
//     scalar: 4 GFLOP/s); one of more than kManyChunksFrom elements, which splits into up to
//     kSplitMaxParts chunks, holds a multiple of kSplitMaxParts * kWholeVectors (at most 16 MB of
//     float32 padding), so each chunk is still whole vectors and whole GPU blocks of 256 threads
//     reading 16 bytes each;
//   - the padding is zero in every buffer made by pack() or zeros(), and updates keep it zero (an
//     elementwise update of zeros with a zero gradient), so sums over a whole buffer equal the sums
//     over its entries.
#include <string>
#include <vector>

#include "schedule/split_reduce.h"
#include "tensor/tensor.h"

namespace lg::nn {

class FlatLayout {
 public:
  static constexpr int64_t kAlign = 64;
  static constexpr int64_t kWholeVectors = 64 * 16, kWholeVectorsFrom = int64_t{1} << 15;
  static constexpr int64_t kManyChunksFrom = 64 * kSplitChunk, kWholeChunks = kSplitMaxParts * kWholeVectors;

  FlatLayout() = default;
  // Entry i has shape shapes[i] and belongs to group groups[i] (0, 1, ...; every group between 0
  // and the largest must be used).
  FlatLayout(const std::vector<Shape>& shapes, const std::vector<int>& groups);

  size_t size() const { return shapes_.size(); }
  int64_t numel() const { return total_; }  // elements of a buffer, padding included
  const Shape& shape(size_t i) const { return shapes_.at(i); }
  int64_t offset(size_t i) const { return offsets_.at(i); }
  int64_t numel(size_t i) const;
  int64_t padded_numel(size_t i) const;  // numel(i) rounded up to kAlign: the entry with its padding
  int group(size_t i) const { return groups_.at(i); }
  int groups() const { return static_cast<int>(group_begin_.size()); }
  int64_t group_begin(int g) const { return group_begin_.at(g); }
  int64_t group_end(int g) const { return g + 1 < groups() ? group_begin_.at(g + 1) : total_; }

  // Entry i's view of flat (a run of its elements, reshaped to shape(i)); Tensor::assign into it
  // writes that run.
  Tensor view(const Tensor& flat, size_t i) const;
  // A realized buffer of zeros of dtype on device.
  Tensor zeros(DType dtype, const std::string& device) const;
  // A realized buffer of dtype on device with xs[i] (cast to dtype) at entry i and zero padding.
  Tensor pack(const std::vector<Tensor>& xs, DType dtype, const std::string& device) const;

 private:
  std::vector<Shape> shapes_;
  std::vector<int> groups_;
  std::vector<int64_t> offsets_, group_begin_;
  int64_t total_ = 0;
};

}  // namespace lg::nn
