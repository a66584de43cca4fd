#pragma once
// A PatternMatcher is an ordered list of named rules (pattern -> callback), indexed by root op.
// A callback returns the replacement node, or an empty NodeRef to decline.
#include <any>
#include <array>
#include <functional>
#include <string>
#include <vector>

#include "rewrite/pattern.h"

namespace lg {

// The bindings a callback sees: captured nodes by name and the rewrite's context.
class Match {
 public:
  Match(const NodeRef& root, const Captures& caps, std::any* ctx) : root_(root), caps_(caps), ctx_(ctx) {}
  const NodeRef& root() const { return root_; }
  NodeRef operator[](std::string_view name) const;  // the captured node (aborts if absent)
  bool has(std::string_view name) const { return caps_.find(name) != nullptr; }
  // The context passed to rewrite() as std::any holding a T*.
  template <class T>
  T& ctx() const {
    return *std::any_cast<T*>(*ctx_);
  }

 private:
  const NodeRef& root_;
  const Captures& caps_;
  std::any* ctx_;
};

using RuleFn = std::function<NodeRef(const Match&)>;

struct Rule {
  std::string name;
  Pat pat;
  RuleFn fn;
};

class PatternMatcher {
 public:
  PatternMatcher() = default;
  explicit PatternMatcher(std::vector<Rule> rules);
  // Rules of a followed by rules of b.
  friend PatternMatcher operator+(const PatternMatcher& a, const PatternMatcher& b);

  // The first rule (in list order) that matches n and returns a node other than n; null if none.
  NodeRef rewrite(const NodeRef& n, std::any* ctx, const Rule** fired = nullptr) const;
  const std::vector<Rule>& rules() const { return rules_; }

 private:
  std::vector<Rule> rules_;
  std::array<std::vector<int>, kNumOps> by_op_;
};

}  // namespace lg
