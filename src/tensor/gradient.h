#pragma once
// Reverse-mode differentiation of tensor-stage graphs, one rule per primitive op (house style rule 9).
//
// pm_gradient() is a PatternMatcher whose rules match a tensor-stage node `ret`; the rewrite context
// is a GradCtx* holding the gradient of ret (same shape and dtype as ret). A rule returns
// SINK(g0, g1, ...): one entry per source of ret, the gradient of the loss with respect to that source
// (the source's shape and dtype), or no_gradient() for a source that gets none. Composites (softmax,
// cross_entropy, matmul, ...) have no rules: they are built from primitives, so their gradients are.
//
// Gradients are lazy graphs: nothing runs until they are realized, so forward and backward can be
// realized in one schedule.
#include <vector>

#include "rewrite/matcher.h"

namespace lg {

struct GradCtx {
  NodeRef grad;  // the gradient of the node a rule matched
};

const PatternMatcher& pm_gradient();

// The marker a gradient rule puts in place of a source that gets no gradient (an empty SINK).
const NodeRef& no_gradient();

// Gradients of `root` (any shape) with respect to each of `targets`, given root_grad (root's shape
// and dtype), by walking the nodes between the targets and root in reverse topological order and
// summing the contributions of every user of a node. Only float nodes carry gradients. A target that
// root does not depend on (through differentiable ops) gets an empty NodeRef.
std::vector<NodeRef> compute_gradient(const NodeRef& root, const NodeRef& root_grad,
                                      const std::vector<NodeRef>& targets);

}  // namespace lg
