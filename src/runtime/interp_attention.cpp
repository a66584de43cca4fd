#include "runtime/interp_attention.h"

#include <cmath>
#include <limits>

#include "base/error.h"
#include "ir/scalar.h"

namespace lg {
namespace {

struct Operands {
  const AttentionKernel& a;
  DType in;
  const std::vector<void*>& buffers;
  const std::vector<int64_t>& sizes;

  // Element i of slot `slot` (an input) as double.
  double at(int slot, int64_t i) const {
    LG_CHECK(i >= 0 && i < sizes[slot], "interp attention: index ", i, " out of slot ", slot, " (", sizes[slot], ")");
    DType t = slot == 5 ? dtypes::float32 : in;
    return load_value(static_cast<const char*>(buffers[slot]) + i * itemsize(t), t).f;
  }
  void put(int64_t i, double v) const {
    LG_CHECK(i >= 0 && i < sizes[0], "interp attention: output index ", i, " out of ", sizes[0]);
    static_cast<float*>(buffers[0])[i] = static_cast<float>(v);
  }
  int64_t qrow(int64_t b, int64_t h, int64_t s) const { return (b * a.H + h) * a.S + s; }
  int64_t krow(int64_t b, int64_t g, int64_t t) const { return (b * a.KV + g) * a.T + t; }
  bool visible(int64_t s, int64_t t) const { return !a.causal || t <= s; }
  // The scaled score of query row qr against key row kr.
  double score(int64_t qr, int64_t kr) const {
    double x = 0;
    for (int64_t e = 0; e < a.D; e++) x += at(1, qr * a.D + e) * at(2, kr * a.D + e);
    return x / std::sqrt(static_cast<double>(a.D));
  }
  double dot_v(int64_t qr, int64_t kr) const {  // dO[qr] . v[kr]
    double x = 0;
    for (int64_t e = 0; e < a.D; e++) x += at(4, qr * a.D + e) * at(3, kr * a.D + e);
    return x;
  }
};

void forward_row(const Operands& o, int64_t b, int64_t h, int64_t s) {
  const AttentionKernel& a = o.a;
  int64_t g = h / (a.H / a.KV), qr = o.qrow(b, h, s);
  std::vector<double> x(static_cast<size_t>(a.T), -std::numeric_limits<double>::infinity());
  double m = -std::numeric_limits<double>::infinity();
  for (int64_t t = 0; t < a.T; t++)
    if (o.visible(s, t)) m = std::max(m, x[t] = o.score(qr, o.krow(b, g, t)));
  double l = 0;
  std::vector<double> out(static_cast<size_t>(a.D), 0.0);
  for (int64_t t = 0; t < a.T; t++) {
    if (!o.visible(s, t)) continue;
    double p = std::exp(x[t] - m);
    l += p;
    for (int64_t e = 0; e < a.D; e++) out[e] += p * o.at(3, o.krow(b, g, t) * a.D + e);
  }
  for (int64_t e = 0; e < a.D; e++) o.put(qr * (a.D + 1) + e, out[e] / l);
  o.put(qr * (a.D + 1) + a.D, m + std::log(l));
}

// dS[s, t] = P (dO[s].v[t] - delta[s]) with P = exp(x - L[s]).
double grad_score(const Operands& o, int64_t qr, int64_t kr, double* p) {
  double lse = o.at(5, qr * 2), delta = o.at(5, qr * 2 + 1);
  *p = std::exp(o.score(qr, kr) - lse);
  return *p * (o.dot_v(qr, kr) - delta);
}

void grad_q_row(const Operands& o, int64_t b, int64_t h, int64_t s) {
  const AttentionKernel& a = o.a;
  int64_t g = h / (a.H / a.KV), qr = o.qrow(b, h, s);
  std::vector<double> dq(static_cast<size_t>(a.D), 0.0);
  for (int64_t t = 0; t < a.T; t++) {
    if (!o.visible(s, t)) continue;
    double p = 0, ds = grad_score(o, qr, o.krow(b, g, t), &p);
    for (int64_t e = 0; e < a.D; e++) dq[e] += ds * o.at(2, o.krow(b, g, t) * a.D + e);
  }
  for (int64_t e = 0; e < a.D; e++) o.put(qr * a.D + e, dq[e] / std::sqrt(static_cast<double>(a.D)));
}

void grad_kv_row(const Operands& o, int64_t b, int64_t g, int64_t t) {
  const AttentionKernel& a = o.a;
  int64_t kr = o.krow(b, g, t), rep = a.H / a.KV;
  std::vector<double> dk(static_cast<size_t>(a.D), 0.0), dv(static_cast<size_t>(a.D), 0.0);
  for (int64_t h = g * rep; h < (g + 1) * rep; h++)
    for (int64_t s = 0; s < a.S; s++) {
      if (!o.visible(s, t)) continue;
      int64_t qr = o.qrow(b, h, s);
      double p = 0, ds = grad_score(o, qr, kr, &p);
      for (int64_t e = 0; e < a.D; e++) {
        dk[e] += ds * o.at(1, qr * a.D + e);
        dv[e] += p * o.at(4, qr * a.D + e);
      }
    }
  for (int64_t e = 0; e < a.D; e++) {
    o.put(kr * 2 * a.D + e, dk[e] / std::sqrt(static_cast<double>(a.D)));
    o.put(kr * 2 * a.D + a.D + e, dv[e]);
  }
}

}  // namespace

void interp_attention(const AttentionKernel& a, DType in, int64_t block, const std::vector<void*>& buffers,
                      const std::vector<int64_t>& sizes) {
  LG_CHECK(static_cast<int>(buffers.size()) == 1 + a.inputs(), "interp attention: ", buffers.size(), " buffers");
  Operands o{a, in, buffers, sizes};
  int64_t nrb = a.row_blocks(), rb = block % nrb, head = block / nrb % a.heads(), b = block / nrb / a.heads();
  int64_t rows = a.kind == AttentionKind::GradKV ? a.T : a.S;
  for (int64_t r = rb * AttentionKernel::kRows; r < std::min(rows, (rb + 1) * AttentionKernel::kRows); r++) {
    switch (a.kind) {
      case AttentionKind::Forward: forward_row(o, b, head, r); break;
      case AttentionKind::GradQ: grad_q_row(o, b, head, r); break;
      case AttentionKind::GradKV: grad_kv_row(o, b, head, r); break;
    }
  }
}

}  // namespace lg
