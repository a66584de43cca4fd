#include "ir/build.h"

#include <atomic>
#include <cmath>

#include "base/error.h"
#include "ir/scalar.h"

namespace lg {

NodeRef cnst(DType t, double v, const NodeRef& device) {
  std::vector<NodeRef> src;
  if (device) src.push_back(device);
  if (is_float(t)) return make(Op::CONST, t, std::move(src), round_to_float_dtype(v, t));
  return make(Op::CONST, t, std::move(src), cast_value(Value::of_float(v), dtypes::float64, t).i);
}

NodeRef cnst_int(DType t, int64_t v, const NodeRef& device) {
  if (is_float(t)) return cnst(t, static_cast<double>(v), device);
  std::vector<NodeRef> src;
  if (device) src.push_back(device);
  return make(Op::CONST, t, std::move(src), wrap_to_int_dtype(v, t));
}

NodeRef bool_const(bool v) { return make(Op::CONST, dtypes::boolean, {}, int64_t{v}); }

NodeRef alu(Op op, const NodeRef& a) { return make(op, a->dtype, {a}); }

NodeRef alu(Op op, const NodeRef& a, const NodeRef& b) {
  DType t = is_comparison(op) ? DType{Scalar::Bool, a->dtype.count} : a->dtype;
  return make(op, t, {a, b});
}

NodeRef where(const NodeRef& c, const NodeRef& a, const NodeRef& b) {
  return make(Op::WHERE, a->dtype, {c, a, b});
}

NodeRef cast(const NodeRef& x, DType t) { return x->dtype == t ? x : make(Op::CAST, t, {x}); }

static NodeRef like(const NodeRef& a, int64_t v) {
  return cnst_int(a->dtype, v, a->op == Op::CONST && !a->src.empty() ? a->src[0] : NodeRef{});
}

NodeRef operator+(const NodeRef& a, const NodeRef& b) { return alu(Op::ADD, a, b); }
NodeRef operator-(const NodeRef& a, const NodeRef& b) {
  return is_float(a->dtype) ? alu(Op::ADD, a, alu(Op::NEG, b))
                            : alu(Op::ADD, a, alu(Op::MUL, b, like(b, -1)));
}
NodeRef operator*(const NodeRef& a, const NodeRef& b) { return alu(Op::MUL, a, b); }
NodeRef operator/(const NodeRef& a, const NodeRef& b) { return alu(Op::IDIV, a, b); }
NodeRef operator%(const NodeRef& a, const NodeRef& b) { return alu(Op::MOD, a, b); }
NodeRef operator+(const NodeRef& a, int64_t b) { return a + like(a, b); }
NodeRef operator-(const NodeRef& a, int64_t b) { return a + like(a, -b); }
NodeRef operator*(const NodeRef& a, int64_t b) { return a * like(a, b); }
NodeRef operator/(const NodeRef& a, int64_t b) { return a / like(a, b); }
NodeRef operator%(const NodeRef& a, int64_t b) { return a % like(a, b); }
NodeRef lt(const NodeRef& a, const NodeRef& b) { return alu(Op::CMPLT, a, b); }
NodeRef lt(const NodeRef& a, int64_t b) { return lt(a, like(a, b)); }
NodeRef ge(const NodeRef& a, int64_t b) { return logical_not(lt(a, b)); }
NodeRef ne(const NodeRef& a, const NodeRef& b) { return alu(Op::CMPNE, a, b); }
NodeRef eq(const NodeRef& a, const NodeRef& b) { return alu(Op::CMPEQ, a, b); }
NodeRef logical_and(const NodeRef& a, const NodeRef& b) { return alu(Op::AND, a, b); }
NodeRef logical_not(const NodeRef& a) { return alu(Op::XOR, a, bool_const(true)); }

namespace {
std::atomic<uint64_t> next_uid{1};
}  // namespace

NodeRef new_buffer(const NodeRef& device, DType dtype, int64_t size) {
  LG_CHECK(device && device->op == Op::DEVICE, "new_buffer needs a DEVICE");
  return make(Op::BUFFER, dtype, {device}, BufferArg{next_uid.fetch_add(1), size});
}

uint64_t next_buffer_uid() { return next_uid.load(); }

NodeRef device_node(const std::string& name) { return make(Op::DEVICE, dtypes::void_, {}, name); }

NodeRef range(int64_t end, int64_t id, AxisType type) {
  return make(Op::RANGE, dtypes::index, {index_const(end)}, RangeArg{id, type});
}

}  // namespace lg
