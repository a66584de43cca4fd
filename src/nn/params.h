#pragma once
// Named parameter collections: every model and optimizer state is a list of (name, Tensor) in a
// fixed order, so checkpoints, optimizers and loaders agree on names and order.
#include <string>
#include <utility>
#include <vector>

#include "tensor/tensor.h"

namespace lg::nn {

// An ordered list of uniquely named tensors. Tensors are handles: the list shares them with the
// layers that own them, so an optimizer's assign() updates the layer's weights.
class ParamList {
 public:
  // Appends t under `name`; a user error if the name is already taken.
  void add(const std::string& name, const Tensor& t);
  // Appends every entry of other with `prefix` + "." before its name.
  void add_all(const std::string& prefix, const ParamList& other);
  bool contains(const std::string& name) const;
  const Tensor& at(const std::string& name) const;  // a user error naming the missing entry
  Tensor& at(const std::string& name);
  size_t size() const { return items_.size(); }
  int64_t numel() const;  // total elements
  std::vector<Tensor> tensors() const;
  const std::vector<std::pair<std::string, Tensor>>& items() const { return items_; }
  auto begin() const { return items_.begin(); }
  auto end() const { return items_.end(); }

 private:
  std::vector<std::pair<std::string, Tensor>> items_;
};

}  // namespace lg::nn
