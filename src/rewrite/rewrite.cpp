#include "rewrite/rewrite.h"

#include <algorithm>
#include <cstdio>
#include <unordered_map>
#include <unordered_set>

#include "base/config.h"
#include "base/error.h"
#include "ir/graph.h"

namespace lg {
namespace {

// The driver's state for one call. Frames replace recursion so graph depth never overflows the
// native stack. A frame rewrites one node; its result is handed to the frame below via `ret`.
class Driver {
 public:
  Driver(const PatternMatcher& pm, const RewriteOptions& o, std::any* ctx) : pm_(pm), o_(o), ctx_(ctx) {}

  NodeRef run(const NodeRef& root) {
    push(root);
    while (!stack_.empty()) step();
    return ret_;
  }

 private:
  enum Stage { kStart, kSources, kRebuilt, kTail };
  struct Frame {
    NodeRef orig;  // the node this frame was asked to rewrite
    NodeRef cur;   // after top-down rules
    Stage stage = kStart;
    size_t next = 0;
    std::vector<NodeRef> src;
  };

  const PatternMatcher& pm_;
  const RewriteOptions& o_;
  std::any* ctx_;
  std::vector<Frame> stack_;
  NodeRef ret_;
  // Results by node. Keys are held (first) so an address is never reused while it is a key.
  std::unordered_map<const Node*, std::pair<NodeRef, NodeRef>> done_;
  std::unordered_set<const Node*> active_;
  long steps_ = 0;
  const Rule* last_rule_ = nullptr;

  void push(const NodeRef& n) {
    Frame f;
    f.orig = n;
    stack_.push_back(std::move(f));
  }

  void finish(const NodeRef& result) {
    Frame& f = stack_.back();
    done_[f.orig.get()] = {f.orig, result};
    if (f.cur && f.cur != f.orig) done_[f.cur.get()] = {f.cur, result};
    active_.erase(f.orig.get());
    if (f.cur) active_.erase(f.cur.get());
    ret_ = result;
    stack_.pop_back();
  }

  NodeRef apply(const NodeRef& n) {
    const Rule* fired = nullptr;
    NodeRef r = pm_.rewrite(n, ctx_, &fired);
    if (!r) return r;
    last_rule_ = fired;
    if (++steps_ > o_.max_steps) fail("more than max_steps rule applications", n);
    if (o_.on_rule) o_.on_rule(*fired, n, r);
    return r;
  }

  [[noreturn]] void fail(const std::string& why, const NodeRef& at) {
    internal_error(__FILE__, __LINE__,
                   str("rewrite \"", o_.name, "\" does not terminate (", why, "); last rule: \"",
                       last_rule_ ? last_rule_->name : "none", "\"; at node:\n", to_string(at)));
  }

  void step() {
    Frame& f = stack_.back();
    switch (f.stage) {
      case kStart: {
        if (auto it = done_.find(f.orig.get()); it != done_.end()) {
          NodeRef r = it->second.second;
          ret_ = r;
          stack_.pop_back();
          return;
        }
        if (!active_.insert(f.orig.get()).second)
          fail("a rule's result contains the node being rewritten", f.orig);
        f.cur = f.orig;
        if (o_.top_down) {
          std::vector<NodeRef> chain{f.cur};  // held, so no address in it is reused meanwhile
          while (NodeRef r = apply(f.cur)) {
            if (auto it = done_.find(r.get()); it != done_.end()) {
              f.cur = r;
              finish(it->second.second);
              return;
            }
            if (std::find(chain.begin(), chain.end(), r) != chain.end()) fail("rules cycle on one node", r);
            chain.push_back(r);
            f.cur = r;
          }
          if (f.cur != f.orig) active_.insert(f.cur.get());
        }
        f.src.reserve(f.cur->src.size());
        f.stage = kSources;
        return;
      }
      case kSources: {
        if (f.next > 0) f.src.push_back(ret_);
        if (f.next < f.cur->src.size()) {
          NodeRef s = f.cur->src[f.next++];
          push(s);
          return;
        }
        f.stage = kRebuilt;
        return;
      }
      case kRebuilt: {
        NodeRef m = replace_src(f.cur, std::move(f.src));
        NodeRef r = (o_.top_down && m == f.cur) ? NodeRef{} : apply(m);
        if (!r) {
          finish(m);
          return;
        }
        if (active_.count(r.get())) fail("a rule's result contains the node being rewritten", r);
        f.stage = kTail;
        push(r);
        return;
      }
      case kTail: {
        NodeRef r = ret_;
        finish(r);
        return;
      }
    }
  }
};

}  // namespace

NodeRef rewrite(const NodeRef& root, const PatternMatcher& pm, const RewriteOptions& opts, std::any ctx) {
  LG_CHECK(opts.name != nullptr, "every rewrite must be named");
  NodeRef out = Driver(pm, opts, &ctx).run(root);
  if (config().debug >= 5)
    std::fprintf(stderr, "=== rewrite \"%s\" ===\n%s", opts.name, to_string(out).c_str());
  if (opts.spec && config().spec >= 2) verify(out, *opts.spec, opts.name);
  return out;
}

NodeRef substitute(const NodeRef& root, const std::vector<std::pair<NodeRef, NodeRef>>& with) {
  std::unordered_map<const Node*, NodeRef> map;
  for (auto& [from, to] : with) map[from.get()] = to;
  PatternMatcher pm({{"substitute", Pat::any().where([&](const Node& n) { return map.count(&n) > 0; }),
                      [&](const Match& m) { return map.at(m.root().get()); }}});
  return rewrite(root, pm, {.name = "substitute", .top_down = true});
}

}  // namespace lg
