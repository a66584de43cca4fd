#include "runtime/interp.h"

#include <chrono>
#include <cstdlib>
#include <cstring>
#include <unordered_map>

#include "base/error.h"
#include "ir/scalar.h"
#include "runtime/interp_attention.h"

namespace lg {
namespace {

// Zeroed heap memory for every size: the reference device keeps memory simple (no pool).
class CallocAllocator : public Allocator {
 public:
  void* alloc(size_t bytes) override {
    void* p = std::calloc(bytes == 0 ? 1 : bytes, 1);
    LG_CHECK(p != nullptr, "out of host memory allocating ", bytes, " bytes");
    return p;
  }
  void free(void* p, size_t) override { std::free(p); }
  void copy_in(void* dst, const void* host, size_t bytes) override { std::memcpy(dst, host, bytes); }
  void copy_out(void* host, const void* src, size_t bytes) override { std::memcpy(host, src, bytes); }
  bool host_memory() const override { return true; }
};

// One instruction of the interpreter's compiled form of a LinearProgram. Registers are numbered by
// op position; an ACCUMULATE writes its DEFINE_ACC's register.
struct Inst {
  Op op;
  DType dtype;  // result dtype (LOAD/STORE/INDEX: element dtype)
  DType in;     // dtype of the ALU sources
  int dst = -1;
  int src[3] = {-1, -1, -1};
  int nsrc = 0;
  int slot = -1;  // buffer slot (INDEX, LOAD, STORE)
  int jump = -1;  // RANGE: pc after its END; END: pc of the loop body start
  Value imm{};    // CONST value
  bool add = false;  // STORE: adds to the element (an atomic add, ir/node.h is_atomic_add)
};

class InterpProgram : public Program {
 public:
  explicit InterpProgram(const LinearProgram& prog) : name_(prog.name), globals_(prog.globals) {
    compile(prog);
  }

  void run(const KernelArgs& args) override {
    LG_CHECK(args.buffers.size() == globals_.size(), name_, ": ", args.buffers.size(), " buffers for ",
             globals_.size(), " slots");
    std::vector<Value> r(nregs_);
    // slots: the kernel's buffers, then its own arrays (DEFINE_LOCAL), zeroed for every run
    std::vector<void*> buffers(args.buffers);
    std::vector<int64_t> sizes(args.sizes);
    std::vector<std::vector<char>> locals;
    for (const auto& [dtype, elements] : locals_) {
      locals.emplace_back(static_cast<size_t>(elements) * itemsize(dtype));
      buffers.push_back(locals.back().data());
      sizes.push_back(elements);
    }
    const size_t n = code_.size();
    for (size_t pc = 0; pc < n;) {
      const Inst& in = code_[pc];
      switch (in.op) {
        case Op::CONST: r[in.dst] = in.imm; break;
        case Op::RANGE:
          r[in.dst].i = 0;
          if (r[in.src[0]].i <= 0) {
            pc = in.jump;
            continue;
          }
          break;
        case Op::END:
          if (++r[in.src[0]].i < r[in.src[1]].i) {
            pc = in.jump;
            continue;
          }
          break;
        case Op::INDEX: {
          int64_t off = r[in.src[0]].i;
          if (in.src[1] >= 0 && !r[in.src[1]].i) {
            r[in.dst].i = -1;
            break;
          }
          LG_CHECK(off >= 0 && off < sizes[in.slot], "kernel ", name_, ": index ", off,
                   " out of bounds of buffer ", in.slot, " (", sizes[in.slot], " elements)");
          r[in.dst].i = off;
          break;
        }
        case Op::LOAD: {
          int64_t off = r[in.src[0]].i;
          if (off < 0)
            r[in.dst] = is_float(in.dtype) ? Value::of_float(0) : Value::of_int(0);
          else
            r[in.dst] =
                load_value(static_cast<const char*>(buffers[in.slot]) + off * itemsize(in.dtype), in.dtype);
          break;
        }
        case Op::STORE: {
          int64_t off = r[in.src[0]].i;
          if (off < 0) break;
          char* p = static_cast<char*>(buffers[in.slot]) + off * itemsize(in.dtype);
          Value v = r[in.src[1]];
          if (in.add) {  // one program at a time runs here, so an atomic add is a plain one
            Value both[2] = {load_value(p, in.dtype), v};
            v = eval_alu(Op::ADD, in.dtype, in.dtype, both, 2);
          }
          store_value(p, in.dtype, v);
          break;
        }
        case Op::DEFINE_ACC:
        case Op::ACCUMULATE: r[in.dst] = r[in.src[0]]; break;
        case Op::ATTENTION: interp_attention(attention_[in.slot], in.in, r[in.src[0]].i, args.buffers, args.sizes); break;
        default: {
          Value a[3] = {r[in.src[0]], in.nsrc > 1 ? r[in.src[1]] : Value{},
                        in.nsrc > 2 ? r[in.src[2]] : Value{}};
          r[in.dst] = eval_alu(in.op, in.dtype, in.in, a, in.nsrc);
        }
      }
      pc++;
    }
  }

 private:
  std::string name_;
  std::vector<DType> globals_;
  std::vector<Inst> code_;
  std::vector<AttentionKernel> attention_;  // the ATTENTION ops' kernels (Inst::slot indexes them)
  std::vector<std::pair<DType, int64_t>> locals_;  // DEFINE_LOCAL arrays: slots after the globals
  int nregs_ = 0;

  void compile(const LinearProgram& prog) {
    std::unordered_map<const Node*, int> reg, slot, range_pc;
    auto R = [&](const NodeRef& n) {
      auto it = reg.find(n.get());
      LG_CHECK(it != reg.end(), "interp: ", op_name(n->op), " used before it is computed");
      return it->second;
    };
    for (const NodeRef& n : prog.ops) {
      Inst in{n->op, n->dtype, n->dtype};
      int me = nregs_++;
      switch (n->op) {
        case Op::DEFINE_GLOBAL: slot[n.get()] = static_cast<int>(n->get_arg<int64_t>()); continue;
        case Op::CONST:
          in.imm = is_float(n->dtype) ? Value::of_float(std::get<double>(n->arg))
                                      : Value::of_int(std::get<int64_t>(n->arg));
          break;
        case Op::RANGE:
          in.src[0] = R(n->src[0]);
          range_pc[n.get()] = static_cast<int>(code_.size());
          break;
        case Op::END: {
          int start = range_pc.at(n->src[0].get());
          in.src[0] = R(n->src[0]);
          in.src[1] = code_[start].src[0];
          in.jump = start + 1;
          code_[start].jump = static_cast<int>(code_.size()) + 1;
          break;
        }
        case Op::INDEX:
          in.dtype = n->dtype.base();
          in.slot = slot.at(n->src[0].get());
          in.src[0] = R(n->src[1]);
          if (n->src.size() == 3) in.src[1] = R(n->src[2]);
          break;
        case Op::LOAD:
        case Op::STORE:
          in.dtype = n->src[0]->dtype.base();
          in.slot = slot.at(n->src[0]->src[0].get());
          in.src[0] = R(n->src[0]);
          if (n->op == Op::STORE) in.src[1] = R(n->src[1]);
          in.add = is_atomic_add(*n);
          break;
        case Op::DEFINE_ACC: in.src[0] = R(n->src[0]); break;
        case Op::ACCUMULATE:
          me = R(n->src[0]);
          in.src[0] = R(n->src[1]);
          break;
        case Op::ATTENTION:  // (block, out, inputs...): the slots in order (schedule/kernelize.h)
          for (size_t i = 1; i < n->src.size(); i++)
            LG_CHECK(slot.at(n->src[i].get()) == static_cast<int>(i - 1), "interp: ATTENTION slots out of order");
          in.src[0] = R(n->src[0]);
          in.in = n->src[2]->dtype.base();
          in.slot = static_cast<int>(attention_.size());
          attention_.push_back(AttentionKernel::from_arg(n->get_arg<Shape>()));
          break;
        case Op::DEFINE_VAR:
          internal_error(__FILE__, __LINE__,
                         str("interp: kernel ", name_, " reads variable ", n->get_arg<VarArg>().name,
                             ", which no launch binds"));
        // A staged or packed array (codegen/smem.h, codegen/pack.h): the program's threads are
        // loops here, as in the C renderers, so it is one array that the COOP loops fill whole. A
        // BARRIER names the array (the same slot) or, with no sources, waits for nothing.
        case Op::DEFINE_LOCAL:
          slot[n.get()] = static_cast<int>(globals_.size() + locals_.size());
          locals_.emplace_back(n->dtype.base(), n->get_arg<BufferArg>().size);
          continue;
        case Op::BARRIER:
          if (!n->src.empty()) slot[n.get()] = slot.at(n->src[0].get());
          continue;
        case Op::BLOCK_MMA:
          internal_error(__FILE__, __LINE__,
                         str("interp: kernel ", name_, " has BLOCK_MMA (Opt BLOCK_MMA, tensor cores): only the CUDA "
                             "heuristic makes it; the C and CUDA renderers run it"));
        case Op::WMMA:
          internal_error(__FILE__, __LINE__,
                         str("interp: kernel ", name_, " has WMMA (Opt TC, tensor cores): only the CUDA heuristic "
                             "makes it; the C and CUDA renderers run it"));
        default:
          LG_CHECK(is_alu(n->op), "interp cannot run ", op_name(n->op));
          in.nsrc = static_cast<int>(n->src.size());
          for (int i = 0; i < in.nsrc; i++) in.src[i] = R(n->src[i]);
          in.in = n->op == Op::WHERE ? n->src[1]->dtype : n->src[0]->dtype;
      }
      in.dst = me;
      reg[n.get()] = me;
      code_.push_back(in);
    }
  }
};

class InterpDevice : public Device {
 public:
  explicit InterpDevice(std::string name) : name_(std::move(name)) {}
  const std::string& name() const override { return name_; }
  Allocator& allocator() override { return alloc_; }
  const Renderer* renderer() const override { return nullptr; }
  const Compiler* compiler() const override { return nullptr; }
  std::unique_ptr<Program> load(const LinearProgram& prog, const std::string&,
                                const std::vector<uint8_t>&) override {
    return std::make_unique<InterpProgram>(prog);
  }

 private:
  std::string name_;
  CallocAllocator alloc_;
};

}  // namespace

std::unique_ptr<Device> make_interp_device(const std::string& name) {
  return std::make_unique<InterpDevice>(name);
}

}  // namespace lg
