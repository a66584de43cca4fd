#include "nn/flat_layout.h"

#include <algorithm>
#include <numeric>

#include "base/error.h"

namespace lg::nn {

static int64_t elements(const Shape& s) {
  return std::accumulate(s.begin(), s.end(), int64_t{1}, std::multiplies<>());
}

FlatLayout::FlatLayout(const std::vector<Shape>& shapes, const std::vector<int>& groups)
    : shapes_(shapes), groups_(groups), offsets_(shapes.size()) {
  LG_CHECK(shapes.size() == groups.size(), "FlatLayout: one group per entry");
  int k = groups.empty() ? 0 : *std::max_element(groups.begin(), groups.end()) + 1;
  for (int g = 0; g < k; g++) {
    group_begin_.push_back(total_);
    bool used = false;
    for (size_t i = 0; i < shapes.size(); i++) {
      if (groups[i] != g) continue;
      used = true;
      offsets_[i] = total_;
      total_ += padded_numel(i);
    }
    LG_CHECK(used, "FlatLayout: group ", g, " has no entry");
  }
  int64_t whole = total_ > kManyChunksFrom ? kWholeChunks : total_ >= kWholeVectorsFrom ? kWholeVectors : 1;
  total_ = (total_ + whole - 1) / whole * whole;
}

int64_t FlatLayout::numel(size_t i) const { return elements(shapes_.at(i)); }
int64_t FlatLayout::padded_numel(size_t i) const { return (numel(i) + kAlign - 1) / kAlign * kAlign; }

Tensor FlatLayout::view(const Tensor& flat, size_t i) const {
  LG_CHECK(flat.ndim() == 1 && flat.numel() == total_, "FlatLayout: a flat buffer of ", total_,
           " elements was expected");
  return flat.slice(0, offset(i), offset(i) + numel(i)).reshape(shape(i));
}

Tensor FlatLayout::zeros(DType dtype, const std::string& device) const {
  return Tensor::zeros({total_}, dtype, device).contiguous().realize();
}

// The zero fill is realized first; then the entries' copies write their disjoint runs in one
// schedule (the padding keeps the zeros).
Tensor FlatLayout::pack(const std::vector<Tensor>& xs, DType dtype, const std::string& device) const {
  LG_CHECK(xs.size() == size(), "FlatLayout::pack: one tensor per entry");
  Tensor flat = zeros(dtype, device);
  std::vector<Tensor> writes;
  for (size_t i = 0; i < xs.size(); i++) {
    LG_CHECK(xs[i].shape() == shape(i), "FlatLayout::pack: entry ", i, " has the wrong shape");
    Tensor run = view(flat, i);
    writes.push_back(run.assign(xs[i]));
  }
  Tensor::realize(writes);
  return flat;
}

}  // namespace lg::nn
