#include "nn/params.h"

#include "base/error.h"

namespace lg::nn {

void ParamList::add(const std::string& name, const Tensor& t) {
  LG_USER_CHECK(!name.empty(), "ParamList: a parameter needs a name");
  LG_USER_CHECK(t.defined(), "ParamList: parameter \"", name, "\" is an empty Tensor");
  LG_USER_CHECK(!contains(name), "ParamList: two parameters are named \"", name, "\"");
  items_.emplace_back(name, t);
}

void ParamList::add_all(const std::string& prefix, const ParamList& other) {
  for (const auto& [name, t] : other) add(prefix.empty() ? name : prefix + "." + name, t);
}

bool ParamList::contains(const std::string& name) const {
  for (const auto& [n, t] : items_)
    if (n == name) return true;
  return false;
}

Tensor& ParamList::at(const std::string& name) {
  for (auto& [n, t] : items_)
    if (n == name) return t;
  user_error("ParamList: no parameter named \"", name, "\"");
}
const Tensor& ParamList::at(const std::string& name) const { return const_cast<ParamList*>(this)->at(name); }

int64_t ParamList::numel() const {
  int64_t n = 0;
  for (const auto& [name, t] : items_) n += t.numel();
  return n;
}

std::vector<Tensor> ParamList::tensors() const {
  std::vector<Tensor> out;
  for (const auto& [name, t] : items_) out.push_back(t);
  return out;
}

}  // namespace lg::nn
