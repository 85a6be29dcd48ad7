//===- LowerTensor.cpp - Tensor IR to loop IR, the scalar reference -------===//
//
// Written for clarity: each operation is a loop nest over its result (or,
// for concatenate, over each operand) whose body computes one element.
// Element values live in their "compute" type (pred as bool, i4 in an i8
// with 4-bit wrapping) and are stored in their storage type (pred as a 0/1
// byte, i4 as a sign-extended byte). With an empty schedule this file is
// the whole lowering, the definition of every operation (`keel run --exit
// reference`); where a schedule (Schedule.h) reads a value through its
// user's loop or orders a contraction's loops differently, the members in
// LowerScheduled.cpp and the read-through in `load` realize it.
//
//===----------------------------------------------------------------------===//
#include "keel/loop/LowerTensor.h"

#include "TensorLowering.h"

#include "keel/loop/Schedule.h"

#include "keel/runtime/Buffer.h"

#include <algorithm>
#include <functional>
#include <map>
#include <optional>
#include <set>

namespace keel::loop {

// The entry functions pass dtypes to the runtime as KeelDType codes: the
// runtime's codes are the element type table's, in the same order (one
// check per entry).
namespace {
constexpr int KEEL_Bool = KEEL_PRED; // KEEL_##Enum for the Bool row
#define KEEL_ELEMENT_TYPE(Enum, Spelling, Bits, Kind)                                              \
  static_assert(static_cast<int>(ElementType::Enum) == KEEL_##Enum, "KeelDType order: " Spelling);
#include "keel/support/ElementTypes.def"
#undef KEEL_ELEMENT_TYPE
static_assert(kNumElementTypes == KEEL_NUM_DTYPES);
} // namespace

using ir::DType;
using ir::OpKind;
using ir::TensorType;
using ir::ValueId;

Type storageType(DType t) {
  if (t == DType::Bool)
    return Type::U8;
  return typeOf(t == DType::I4 ? DType::I8 : t);
}

std::string entryName(const std::string &name) { return name + ".entry"; }

uint64_t storedValue(DType t, uint64_t encoding) {
  return t == DType::I4 ? static_cast<uint64_t>(static_cast<int64_t>(encoding ^ 8) - 8) : encoding;
}

std::vector<uint8_t> storedBytes(DType t, const std::vector<uint64_t> &encodings) {
  size_t width = static_cast<size_t>(typeBits(storageType(t)) / 8);
  std::vector<uint8_t> bytes;
  bytes.reserve(encodings.size() * width);
  for (uint64_t e : encodings) {
    uint64_t v = storedValue(t, e);
    for (size_t b = 0; b < width; ++b)
      bytes.push_back(static_cast<uint8_t>(v >> (8 * b)));
  }
  return bytes;
}

namespace detail {

Type computeType(DType t) { return t == DType::Bool ? Type::Bool : storageType(t); }

int64_t storageBytes(DType t) { return typeBits(storageType(t)) / 8; }

ExprPtr i64(int64_t v) { return makeConst(Type::I64, static_cast<uint64_t>(v)); }

/// i4 arithmetic wraps at 4 bits: ((v + 8) & 15) - 8, in i8.
ExprPtr wrap4(ExprPtr v) {
  ExprPtr masked = makeBinary(BinaryOp::And, makeBinary(BinaryOp::Add, std::move(v), makeConst(Type::I8, 8)),
                              makeConst(Type::I8, 15));
  return makeBinary(BinaryOp::Sub, std::move(masked), makeConst(Type::I8, 8));
}

/// An encoding of `t` (as the IR holds it) as a constant of its compute type.
ExprPtr encodingConst(DType t, uint64_t bits) {
  return makeConst(computeType(t), storedValue(t, bits) & (t == DType::I4 ? 0xFF : ~uint64_t{0}));
}

/// The address of the module's constant data `index`.
ExprPtr makeGlobal(size_t index) {
  auto g = std::make_unique<Expr>();
  g->kind = Expr::Kind::Global;
  g->type = Type::Ptr;
  g->bits = index;
  return g;
}

/// Read-only bytes in the module, as a Global expression.
ExprPtr constantData(Module &out, std::vector<uint8_t> bytes) {
  out.constants.push_back(std::move(bytes));
  return makeGlobal(out.constants.size() - 1);
}

/// One element converted from `from` to `to` (docs/semantics.md): to pred
/// is `!= 0`; to i4 wraps integers and saturates floats to [-8, 7]; the rest
/// is the loop IR's cast (one rounding; floats to integers saturate).
ExprPtr convert(ExprPtr v, DType from, DType to) {
  if (from == to)
    return v;
  if (to == DType::Bool)
    return makeCompare(CompareOp::Ne, std::move(v), makeConst(computeType(from), 0));
  if (to == DType::I4) {
    if (!ir::isFloatType(from))
      return wrap4(makeCast(std::move(v), Type::I8));
    ExprPtr wide = makeCast(std::move(v), Type::I64);
    wide = makeBinary(BinaryOp::Max, makeBinary(BinaryOp::Min, std::move(wide), i64(7)), i64(-8));
    return makeCast(std::move(wide), Type::I8);
  }
  return makeCast(std::move(v), computeType(to));
}

bool isLowPrecision(DType t) { return ir::isFloatType(t) && t != DType::F32 && t != DType::F64; }

/// `op` on f32 for a low-precision dtype: widen exactly, compute, round once.
template <typename F> ExprPtr viaF32(DType t, F op, std::vector<ExprPtr> args) {
  for (ExprPtr &a : args)
    a = makeCast(std::move(a), Type::F32);
  return makeCast(op(std::move(args)), computeType(t));
}

} // namespace detail

using namespace detail;

ExprPtr unaryElement(ir::UnaryCode code, DType t, ExprPtr x) {
  auto unary = [](UnaryOp op) {
    return [op](std::vector<ExprPtr> a) { return makeUnary(op, std::move(a[0])); };
  };
  auto apply = [&](UnaryOp op) {
    std::vector<ExprPtr> args;
    args.push_back(std::move(x));
    if (isLowPrecision(t) && isMathOp(op))
      return viaF32(t, unary(op), std::move(args));
    return unary(op)(std::move(args));
  };
  switch (code) {
  case ir::UnaryCode::Neg: return t == DType::I4 ? wrap4(apply(UnaryOp::Neg)) : apply(UnaryOp::Neg);
  case ir::UnaryCode::Abs: return t == DType::I4 ? wrap4(apply(UnaryOp::Abs)) : apply(UnaryOp::Abs);
  case ir::UnaryCode::Exp: return apply(UnaryOp::Exp);
  case ir::UnaryCode::Log: return apply(UnaryOp::Log);
  case ir::UnaryCode::Tanh: return apply(UnaryOp::Tanh);
  case ir::UnaryCode::Sigmoid: return apply(UnaryOp::Sigmoid);
  case ir::UnaryCode::Gelu: return apply(UnaryOp::Gelu);
  case ir::UnaryCode::Silu: return apply(UnaryOp::Silu);
  case ir::UnaryCode::Sqrt: return apply(UnaryOp::Sqrt);
  case ir::UnaryCode::Rsqrt: return apply(UnaryOp::Rsqrt);
  case ir::UnaryCode::Relu: { // maximum(x, +0): NaN stays NaN, -0 becomes +0
    auto relu = [](std::vector<ExprPtr> a) {
      Type ty = a[0]->type;
      return makeBinary(BinaryOp::Max, std::move(a[0]), makeConst(ty, 0));
    };
    std::vector<ExprPtr> args;
    args.push_back(std::move(x));
    return isLowPrecision(t) ? viaF32(t, relu, std::move(args)) : relu(std::move(args));
  }
  case ir::UnaryCode::Not: return makeUnary(t == DType::Bool ? UnaryOp::Not : UnaryOp::BitNot, std::move(x));
  }
  return x;
}

BinaryOp binaryOp(ir::BinaryCode c) {
  switch (c) {
  case ir::BinaryCode::Add: return BinaryOp::Add;
  case ir::BinaryCode::Sub: return BinaryOp::Sub;
  case ir::BinaryCode::Mul: return BinaryOp::Mul;
  case ir::BinaryCode::Div: return BinaryOp::Div;
  case ir::BinaryCode::Rem: return BinaryOp::Rem;
  case ir::BinaryCode::Pow: return BinaryOp::Pow;
  case ir::BinaryCode::Min: return BinaryOp::Min;
  case ir::BinaryCode::Max: return BinaryOp::Max;
  case ir::BinaryCode::And: return BinaryOp::And;
  case ir::BinaryCode::Or: return BinaryOp::Or;
  case ir::BinaryCode::Xor: return BinaryOp::Xor;
  }
  return BinaryOp::Add;
}

/// `a op b` in dtype t. f16, bf16 and tf32 + - * / are the numerics
/// library's correctly rounded operations; every other low-precision
/// operation widens to f32 exactly, computes there and rounds once (for
/// + - * / on fp8 that is correctly rounded too: 24 >= 2 * 4 + 2).
ExprPtr binaryElement(BinaryOp op, DType t, ExprPtr a, ExprPtr b) {
  auto apply = [op](std::vector<ExprPtr> x) { return makeBinary(op, std::move(x[0]), std::move(x[1])); };
  std::vector<ExprPtr> args;
  args.push_back(std::move(a));
  args.push_back(std::move(b));
  bool helper = (t == DType::F16 || t == DType::BF16 || t == DType::TF32) &&
                (op == BinaryOp::Add || op == BinaryOp::Sub || op == BinaryOp::Mul || op == BinaryOp::Div);
  if (isLowPrecision(t) && !helper)
    return viaF32(t, apply, std::move(args));
  ExprPtr r = apply(std::move(args));
  bool wraps = op == BinaryOp::Add || op == BinaryOp::Sub || op == BinaryOp::Mul || op == BinaryOp::Div ||
               op == BinaryOp::Rem;
  if (t == DType::I4 && wraps)
    return wrap4(std::move(r));
  return r;
}

namespace detail {

CompareOp compareOp(ir::CompareDir d) {
  switch (d) {
  case ir::CompareDir::Eq: return CompareOp::Eq;
  case ir::CompareDir::Ne: return CompareOp::Ne;
  case ir::CompareDir::Lt: return CompareOp::Lt;
  case ir::CompareDir::Le: return CompareOp::Le;
  case ir::CompareDir::Gt: return CompareOp::Gt;
  case ir::CompareDir::Ge: return CompareOp::Ge;
  }
  return CompareOp::Eq;
}

/// The first value of an accumulator: the combiner's identity (-0 for a
/// float sum, so that a sum of negative zeros stays -0 as in IEEE).
ExprPtr identity(ir::Combiner c, DType acc) { return encodingConst(acc, ir::identityEncoding(c, acc)); }

/// Element strides of a type's layout.
std::vector<int64_t> strides(const TensorType &t) {
  std::vector<int64_t> s(t.rank(), 1);
  int64_t stride = 1;
  for (int64_t d : t.minorToMajor) {
    s[static_cast<size_t>(d)] = stride;
    stride *= t.shape[static_cast<size_t>(d)];
  }
  return s;
}

Slot FunctionLowering::newSlot(Type t) {
  fn_.slots.push_back(t);
  return static_cast<Slot>(fn_.slots.size() - 1);
}

void FunctionLowering::assign(Slot slot, ExprPtr value) {
  auto s = std::make_unique<Stmt>();
  s->kind = Stmt::Kind::Assign;
  s->slot = slot;
  s->value = std::move(value);
  emit(std::move(s));
}

std::vector<Slot> FunctionLowering::openNest(const std::vector<int64_t> &shape) {
  std::vector<Slot> counters;
  for (int64_t n : shape) {
    Slot s = newSlot(Type::I64);
    auto loop = std::make_unique<Stmt>();
    loop->kind = Stmt::Kind::For;
    loop->slot = s;
    loop->from = i64(0);
    loop->to = i64(n);
    std::vector<StmtPtr> *body = &loop->body;
    emit(std::move(loop));
    block_ = body;
    counters.push_back(s);
  }
  return counters;
}

std::vector<Ix> FunctionLowering::ixs(const std::vector<Slot> &counters) {
  std::vector<Ix> out;
  for (Slot s : counters)
    out.push_back({static_cast<int64_t>(s), 0});
  return out;
}

ExprPtr FunctionLowering::address(const TensorType &t, const std::vector<Ix> &index) {
  std::vector<int64_t> s = strides(t);
  int64_t constant = 0;
  ExprPtr sum;
  for (size_t d = 0; d < index.size(); ++d) {
    constant += index[d].offset * s[d];
    if (index[d].slot < 0)
      continue;
    ExprPtr term = makeBinary(BinaryOp::Mul, var(static_cast<Slot>(index[d].slot)), i64(index[d].scale * s[d]));
    sum = sum ? makeBinary(BinaryOp::Add, std::move(sum), std::move(term)) : std::move(term);
  }
  if (!sum)
    return i64(constant);
  return constant ? makeBinary(BinaryOp::Add, std::move(sum), i64(constant)) : std::move(sum);
}

ExprPtr FunctionLowering::loadFrom(Slot ptr, DType t, ExprPtr addr) {
  ExprPtr e = makeLoad(storageType(t), var(ptr), std::move(addr));
  if (t == DType::Bool)
    return makeCompare(CompareOp::Ne, std::move(e), makeConst(Type::U8, 0));
  return e;
}

ExprPtr FunctionLowering::load(ValueId v, const std::vector<Ix> &index) {
  if (auto it = s_.splats.find(v); it != s_.splats.end())
    return encodingConst(type(v).dtype, it->second);
  if (auto it = indexMaps_.find(v); it != indexMaps_.end())
    return it->second->kind == OpKind::Reshape ? reshapedLoad(*it->second, index)
                                               : load(it->second->operands[0], mappedIndex(*it->second, index));
  if (auto it = pointwiseOps_.find(v); it != pointwiseOps_.end()) {
    if (!s_.sharedInUser.count(v))
      return pointwise(*it->second, index);
    // Computed once per element of its user, into a scalar of this loop.
    std::vector<std::tuple<int64_t, int64_t, int64_t>> at;
    for (const Ix &x : index)
      at.emplace_back(x.slot, x.offset, x.scale);
    auto key = std::make_tuple(v, block_, at);
    auto found = shared_.find(key);
    if (found == shared_.end()) {
      Slot temp = newSlot(computeType(type(v).dtype));
      assign(temp, pointwise(*it->second, index));
      found = shared_.emplace(key, temp).first;
    }
    return var(found->second);
  }
  return loadFrom(buffer_.at(v), type(v).dtype, address(type(v), index));
}

ExprPtr FunctionLowering::pointwise(const ir::Op &o, const std::vector<Ix> &i) {
  const std::vector<ValueId> &x = o.operands;
  switch (o.kind) {
  case OpKind::Unary: return unaryElement(o.unary, type(x[0]).dtype, load(x[0], i));
  case OpKind::Binary: return binaryElement(binaryOp(o.binary), type(x[0]).dtype, load(x[0], i), load(x[1], i));
  case OpKind::Compare: return makeCompare(compareOp(o.compare), load(x[0], i), load(x[1], i));
  case OpKind::Select: return makeSelect(load(x[0], i), load(x[1], i), load(x[2], i));
  case OpKind::Convert: return convert(load(x[0], i), type(x[0]).dtype, type(o.results[0]).dtype);
  case OpKind::Copy: case OpKind::Relayout: return load(x[0], i);
  case OpKind::Constant: case OpKind::Iota: case OpKind::BroadcastInDim: case OpKind::Reshape:
  case OpKind::Transpose: case OpKind::Slice: case OpKind::Concatenate: case OpKind::Reduce:
  case OpKind::DotGeneral: case OpKind::Call: case OpKind::Return: case OpKind::Fusion:
    break;
  }
  return nullptr; // not pointwise: never asked
}

std::vector<Ix> FunctionLowering::mappedIndex(const ir::Op &o, const std::vector<Ix> &i) const {
  switch (o.kind) {
  case OpKind::BroadcastInDim: { // operand dimension d is result dimension dims[d], or stretches from 1
    std::vector<Ix> j;
    const TensorType &x = type(o.operands[0]);
    for (size_t d = 0; d < o.dims.size(); ++d)
      j.push_back(x.shape[d] == 1 ? Ix{} : i[static_cast<size_t>(o.dims[d])]);
    return j;
  }
  case OpKind::Transpose: { // result dimension d is operand dimension perm[d]
    std::vector<Ix> j(i.size());
    for (size_t d = 0; d < i.size(); ++d)
      j[static_cast<size_t>(o.dims[d])] = i[d];
    return j;
  }
  case OpKind::Slice: { // shifted by the start
    std::vector<Ix> j = i;
    for (size_t d = 0; d < j.size(); ++d)
      j[d].offset += o.dims[d];
    return j;
  }
  case OpKind::Unary: case OpKind::Binary: case OpKind::Compare: case OpKind::Select: case OpKind::Convert:
  case OpKind::Constant: case OpKind::Iota: case OpKind::Reshape: case OpKind::Concatenate: case OpKind::Reduce:
  case OpKind::DotGeneral: case OpKind::Copy: case OpKind::Relayout: case OpKind::Call: case OpKind::Return:
  case OpKind::Fusion:
    break;
  }
  return i; // not an index map: never asked
}

void FunctionLowering::storeTo(Slot ptr, DType t, ExprPtr addr, ExprPtr value) {
  auto s = std::make_unique<Stmt>();
  s->kind = Stmt::Kind::Store;
  s->slot = ptr;
  s->index = std::move(addr);
  s->value = makeCast(std::move(value), storageType(t));
  emit(std::move(s));
}

void FunctionLowering::store(ValueId v, ExprPtr addr, ExprPtr value) {
  storeTo(buffer_.at(v), type(v).dtype, std::move(addr), std::move(value));
}

void FunctionLowering::define(ValueId v, const ir::Op &o) {
  if (auto it = s_.intoResult.find(v); it != s_.intoResult.end()) {
    buffer_[v] = resultSlots_[it->second];
    return;
  }
  buffer_[v] = allocateScratch(*type(v).elementCount() * storageBytes(type(v).dtype), o);
  owned_.insert(v);
}

void FunctionLowering::copyInto(Slot to, ValueId from) {
  const TensorType &t = type(from);
  std::vector<StmtPtr> *saved = block_;
  std::vector<Ix> index = ixs(openNest(t.shape));
  storeTo(to, t.dtype, address(t, index), load(from, index));
  block_ = saved;
}

void FunctionLowering::free(ValueId v) {
  if (owned_.erase(v))
    release(buffer_.at(v));
}

void FunctionLowering::lowerOps(const std::vector<ir::Op> &ops, std::vector<ValueId> *regionResults) {
  // Broadcasts and inlined values are read through their operands: a use
  // of one is a use of those, which must live until then.
  std::map<ValueId, std::vector<ValueId>> readsThrough;
  for (const ir::Op &o : ops)
    if (o.results.size() == 1 && !s_.splats.count(o.results[0]) &&
        (s_.readThrough.count(o.results[0]) || s_.computedInUser.count(o.results[0])))
      readsThrough[o.results[0]] = o.operands;
  std::map<ValueId, size_t> last;
  auto use = [&](ValueId used, size_t p) { // v and everything it reads through live until p
    std::vector<ValueId> work{used};
    while (!work.empty()) {
      ValueId v = work.back();
      work.pop_back();
      auto [at, fresh] = last.try_emplace(v, p);
      if (!fresh && at->second == p)
        continue; // already walked at this position
      at->second = p;
      if (auto it = readsThrough.find(v); it != readsThrough.end())
        work.insert(work.end(), it->second.begin(), it->second.end());
    }
  };
  for (size_t p = 0; p < ops.size(); ++p) {
    for (ValueId r : ops[p].results)
      last[r] = p;
    for (ValueId v : ops[p].operands)
      use(v, p);
  }
  std::vector<std::vector<ValueId>> dying(ops.size());
  for (const auto &[v, at] : last)
    dying[at].push_back(v);
  for (size_t p = 0; p < ops.size(); ++p) {
    const ir::Op &o = ops[p];
    if (o.kind == OpKind::Return) {
      if (regionResults) {
        *regionResults = o.operands;
        continue;
      }
      for (size_t i = 0; i < o.operands.size(); ++i) {
        ValueId v = o.operands[i];
        if (!(buffer_.count(v) && buffer_.at(v) == resultSlots_[i]))
          copyInto(resultSlots_[i], v);
      }
      for (ValueId v : std::set<ValueId>(owned_))
        free(v);
      continue;
    }
    lowerOp(o);
    if (s_.freeEarly)
      for (ValueId v : dying[p])
        if (!(regionResults && isReturned(ops, v)))
          free(v);
  }
}

bool FunctionLowering::isReturned(const std::vector<ir::Op> &ops, ValueId v) {
  const ir::Op &ret = ops.back();
  return std::find(ret.operands.begin(), ret.operands.end(), v) != ret.operands.end();
}

void FunctionLowering::lowerOp(const ir::Op &o) {
  if (o.results.size() == 1 && s_.splats.count(o.results[0]))
    return; // never stored: loads become the constant (see load)
  switch (o.kind) {
  case OpKind::Unary: case OpKind::Binary: case OpKind::Compare: case OpKind::Select: case OpKind::Convert:
  case OpKind::Copy: case OpKind::Relayout:
    if (s_.computedInUser.count(o.results[0])) { // computed where its one user reads it (see load)
      pointwiseOps_[o.results[0]] = &o;
      return;
    }
    elementwise(o, [&](const std::vector<Ix> &i) { return pointwise(o, i); });
    return;
  case OpKind::Constant: constant(o); return;
  case OpKind::Iota: {
    DType t = type(o.results[0]).dtype;
    elementwise(o, [&](const std::vector<Ix> &i) {
      return convert(var(static_cast<Slot>(i[static_cast<size_t>(o.axis)].slot)), DType::I64, t);
    });
    return;
  }
  case OpKind::BroadcastInDim: case OpKind::Transpose: case OpKind::Slice:
    if (s_.readThrough.count(o.results[0])) { // never stored: loads read the operand (see load)
      indexMaps_[o.results[0]] = &o;
      return;
    }
    elementwise(o, [&](const std::vector<Ix> &i) { return load(o.operands[0], mappedIndex(o, i)); });
    return;
  case OpKind::Reshape:
    if (s_.readThrough.count(o.results[0])) { // loads compute the operand's index (see load)
      indexMaps_[o.results[0]] = &o;
      return;
    }
    reshape(o);
    return;
  case OpKind::Concatenate: concatenate(o); return;
  case OpKind::Reduce: reduce(o); return;
  case OpKind::DotGeneral: dotGeneral(o); return;
  case OpKind::Call: {
    std::vector<ExprPtr> buffers;
    for (ValueId a : o.operands)
      buffers.push_back(var(bufferOf(a, o)));
    for (ValueId r : o.results) {
      define(r, o);
      buffers.push_back(var(buffer_.at(r)));
    }
    auto s = std::make_unique<Stmt>();
    s->kind = Stmt::Kind::Eval;
    s->value = makeCall(o.callee, Type::Void, std::move(buffers));
    emit(std::move(s));
    return;
  }
  case OpKind::Fusion: {
    for (size_t i = 0; i < o.region->params.size(); ++i) {
      ValueId operand = o.operands[i], param = o.region->params[i];
      if (s_.splats.count(param))
        continue; // loads become the constant
      if (auto b = indexMaps_.find(operand); b != indexMaps_.end())
        indexMaps_[param] = b->second;
      else
        buffer_[param] = buffer_.at(operand);
    }
    std::vector<ValueId> returned;
    lowerOps(o.region->ops, &returned);
    std::map<ValueId, int> count;
    for (ValueId v : returned)
      ++count[v];
    for (size_t i = 0; i < o.results.size(); ++i) {
      ValueId v = returned[i], r = o.results[i];
      if (owned_.count(v) && count[v] == 1) { // hand the region's buffer over
        buffer_[r] = buffer_.at(v);
        owned_.erase(v);
        owned_.insert(r);
      } else if (s_.intoResult.count(v) && count[v] == 1 && buffer_.count(v)) { // in the caller's result already
        buffer_[r] = buffer_.at(v);
      } else {
        define(r, o);
        copyInto(buffer_.at(r), v);
      }
    }
    for (ValueId v : returned)
      free(v);
    return;
  }
  case OpKind::Return: return; // handled by lowerOps
  }
}

void FunctionLowering::constant(const ir::Op &o) {
  ValueId r = o.results[0];
  const TensorType &t = type(r);
  if (o.constant.size() == 1) {
    elementwise(o, [&](const std::vector<Ix> &) { return encodingConst(t.dtype, o.constant[0]); });
    return;
  }
  // Dense data: read-only bytes in row-major order.
  Slot data = newSlot(Type::Ptr);
  assign(data, constantData(out_, storedBytes(t.dtype, o.constant)));
  if (t.hasDefaultLayout()) {
    buffer_[r] = data;
    return;
  }
  TensorType rowMajor = TensorType::make(t.dtype, t.shape);
  elementwise(o, [&](const std::vector<Ix> &i) { return loadFrom(data, t.dtype, address(rowMajor, i)); });
}

void FunctionLowering::reshape(const ir::Op &o) {
  elementwise(o, [&](const std::vector<Ix> &i) { return reshapedLoad(o, i); });
}

ExprPtr FunctionLowering::reshapedLoad(const ir::Op &o, const std::vector<Ix> &i) {
  ValueId x = o.operands[0], r = o.results[0];
  const TensorType &in = type(x);
  TensorType rowMajorOut = TensorType::make(type(r).dtype, type(r).shape);
  Slot linear = newSlot(Type::I64);
  assign(linear, address(rowMajorOut, i));
  if (in.hasDefaultLayout() && buffer_.count(x)) // stored row-major: position p is element p
    return loadFrom(buffer_.at(x), in.dtype, var(linear));
  // Operand index d = (p / rowstride_d) % size_d.
  std::vector<Ix> j;
  TensorType rowMajorIn = TensorType::make(in.dtype, in.shape);
  std::vector<int64_t> rs = strides(rowMajorIn);
  for (size_t d = 0; d < in.rank(); ++d) {
    Slot s = newSlot(Type::I64);
    assign(s, makeBinary(BinaryOp::Rem, makeBinary(BinaryOp::Div, var(linear), i64(rs[d])), i64(in.shape[d])));
    j.push_back({static_cast<int64_t>(s), 0});
  }
  return load(x, j);
}

void FunctionLowering::concatenate(const ir::Op &o) {
  ValueId r = o.results[0];
  define(r, o);
  int64_t offset = 0;
  for (ValueId x : o.operands) {
    std::vector<StmtPtr> *saved = block_;
    std::vector<Ix> i = ixs(openNest(type(x).shape));
    std::vector<Ix> j = i;
    j[static_cast<size_t>(o.axis)].offset = offset;
    store(r, address(type(r), j), load(x, i));
    block_ = saved;
    offset += type(x).shape[static_cast<size_t>(o.axis)];
  }
}

void FunctionLowering::accumulate(ir::Combiner c, DType acc, Slot accSlot, ExprPtr x) {
  switch (c) {
  case ir::Combiner::Sum: assign(accSlot, binaryElement(BinaryOp::Add, acc, var(accSlot), std::move(x))); return;
  case ir::Combiner::Prod: assign(accSlot, binaryElement(BinaryOp::Mul, acc, var(accSlot), std::move(x))); return;
  case ir::Combiner::Max: assign(accSlot, binaryElement(BinaryOp::Max, acc, var(accSlot), std::move(x))); return;
  case ir::Combiner::Min: assign(accSlot, binaryElement(BinaryOp::Min, acc, var(accSlot), std::move(x))); return;
  case ir::Combiner::And: assign(accSlot, makeBinary(BinaryOp::And, var(accSlot), std::move(x))); return;
  case ir::Combiner::Or: assign(accSlot, makeBinary(BinaryOp::Or, var(accSlot), std::move(x))); return;
  case ir::Combiner::ArgMax:
  case ir::Combiner::ArgMin: return; // reduce() handles them
  }
}

void FunctionLowering::reduce(const ir::Op &o) {
  ValueId x = o.operands[0], r = o.results[0];
  const TensorType &in = type(x);
  DType acc = *o.acc;
  define(r, o);
  std::vector<StmtPtr> *saved = block_;
  std::vector<Slot> kept = openNest(type(r).shape);
  std::vector<StmtPtr> *keptBody = block_;
  Slot accSlot = newSlot(computeType(acc));
  assign(accSlot, identity(o.combiner, acc));
  bool arg = o.combiner == ir::Combiner::ArgMax || o.combiner == ir::Combiner::ArgMin;
  Slot best = 0, counter = 0;
  if (arg) {
    best = newSlot(Type::I64);
    counter = newSlot(Type::I64);
    assign(best, i64(0));
    assign(counter, i64(0));
  }
  std::vector<int64_t> reducedShape;
  for (int64_t a : o.dims)
    reducedShape.push_back(in.shape[static_cast<size_t>(a)]);
  std::vector<Slot> reduced = openNest(reducedShape);
  std::vector<Ix> j;
  size_t nextKept = 0, nextReduced = 0;
  for (size_t d = 0; d < in.rank(); ++d) {
    bool isReduced = std::binary_search(o.dims.begin(), o.dims.end(), static_cast<int64_t>(d));
    j.push_back({static_cast<int64_t>(isReduced ? reduced[nextReduced++] : kept[nextKept++]), 0});
  }
  ExprPtr element = convert(load(x, j), in.dtype, acc);
  if (!arg) {
    accumulate(o.combiner, acc, accSlot, std::move(element));
  } else {
    // The first index of the extreme value; a NaN beats every number and
    // the first NaN wins (NumPy's argmax/argmin).
    Slot value = newSlot(computeType(acc));
    assign(value, std::move(element));
    CompareOp better = o.combiner == ir::Combiner::ArgMax ? CompareOp::Gt : CompareOp::Lt;
    ExprPtr wins = makeCompare(better, var(value), var(accSlot));
    if (ir::isFloatType(acc)) {
      ExprPtr valueNaN = makeCompare(CompareOp::Ne, var(value), var(value));
      ExprPtr bestNaN = makeCompare(CompareOp::Ne, var(accSlot), var(accSlot));
      wins = makeBinary(BinaryOp::LogicalOr, std::move(wins),
                        makeBinary(BinaryOp::LogicalAnd, std::move(valueNaN), makeUnary(UnaryOp::Not, std::move(bestNaN))));
    }
    auto take = std::make_unique<Stmt>();
    take->kind = Stmt::Kind::If;
    take->value = makeBinary(BinaryOp::LogicalOr, makeCompare(CompareOp::Eq, var(counter), i64(0)), std::move(wins));
    std::vector<StmtPtr> *here = block_;
    block_ = &take->body;
    assign(accSlot, var(value));
    assign(best, var(counter));
    block_ = here;
    emit(std::move(take));
    assign(counter, makeBinary(BinaryOp::Add, var(counter), i64(1)));
  }
  block_ = keptBody;
  ExprPtr result = arg ? var(best) : convert(var(accSlot), acc, type(r).dtype);
  store(r, address(type(r), ixs(kept)), std::move(result));
  block_ = saved;
}

void FunctionLowering::dotGeneral(const ir::Op &o) {
  define(o.results[0], o);
  ContractionOrder order = ContractionOrder::Logical;
  if (auto it = s_.contractions.find(o.results[0]); it != s_.contractions.end())
    order = it->second;
  switch (order) {
  case ContractionOrder::Logical: logicalContraction(o); return;
  case ContractionOrder::Tiled:
    if (tiledContraction(o))
      return;
    break; // the schedule asked for tiles of a shape that has none: loop order instead
  case ContractionOrder::RhsFreeInner: break;
  }
  rhsFreeInnerContraction(o);
}

void FunctionLowering::logicalContraction(const ir::Op &o) {
  ValueId a = o.operands[0], b = o.operands[1], r = o.results[0];
  const TensorType &ta = type(a), &tb = type(b), &tr = type(r);
  DType acc = *o.acc;
  std::vector<int64_t> lhsFree = freeDims(ta, o.lhsBatch, o.lhsContract);
  std::vector<int64_t> rhsFree = freeDims(tb, o.rhsBatch, o.rhsContract);
  std::vector<StmtPtr> *saved = block_;
  std::vector<Slot> result = openNest(tr.shape);
  Slot accSlot = newSlot(computeType(acc));
  assign(accSlot, identity(ir::Combiner::Sum, acc));
  std::vector<int64_t> contractShape;
  for (int64_t d : o.lhsContract)
    contractShape.push_back(ta.shape[static_cast<size_t>(d)]);
  std::vector<StmtPtr> *elementBody = block_;
  std::vector<Slot> k = openNest(contractShape);
  std::vector<Ix> ja(ta.rank()), jb(tb.rank());
  auto at = [](Slot s) { return Ix{static_cast<int64_t>(s), 0}; };
  size_t nb = o.lhsBatch.size(), nl = lhsFree.size();
  for (size_t q = 0; q < nb; ++q) {
    ja[static_cast<size_t>(o.lhsBatch[q])] = at(result[q]);
    jb[static_cast<size_t>(o.rhsBatch[q])] = at(result[q]);
  }
  for (size_t q = 0; q < nl; ++q)
    ja[static_cast<size_t>(lhsFree[q])] = at(result[nb + q]);
  for (size_t q = 0; q < rhsFree.size(); ++q)
    jb[static_cast<size_t>(rhsFree[q])] = at(result[nb + nl + q]);
  for (size_t q = 0; q < k.size(); ++q) {
    ja[static_cast<size_t>(o.lhsContract[q])] = at(k[q]);
    jb[static_cast<size_t>(o.rhsContract[q])] = at(k[q]);
  }
  // The product, rounded to the accumulator, then added: no fused multiply-add.
  ExprPtr product = binaryElement(BinaryOp::Mul, acc, convert(load(a, ja), ta.dtype, acc),
                                  convert(load(b, jb), tb.dtype, acc));
  assign(accSlot, binaryElement(BinaryOp::Add, acc, var(accSlot), std::move(product)));
  block_ = elementBody;
  store(r, address(tr, ixs(result)), convert(var(accSlot), acc, tr.dtype));
  block_ = saved;
}

std::vector<int64_t> FunctionLowering::freeDims(const TensorType &t, const std::vector<int64_t> &batch,
                                                const std::vector<int64_t> &contract) {
  std::vector<int64_t> dims;
  for (size_t d = 0; d < t.rank(); ++d)
    if (std::find(batch.begin(), batch.end(), static_cast<int64_t>(d)) == batch.end() &&
        std::find(contract.begin(), contract.end(), static_cast<int64_t>(d)) == contract.end())
      dims.push_back(static_cast<int64_t>(d));
  return dims;
}

Slot FunctionLowering::allocateScratch(int64_t bytes, const ir::Op &o) {
  Slot slot = newSlot(Type::Ptr);
  assign(slot, makeAlloc(bytes, location(o.loc)));
  return slot;
}

/// `NAME.entry(buffers)`: `buffers` points to one KeelBuffer pointer per
/// parameter, then per result; each descriptor is checked against the
/// static type NAME was compiled for (keel_rt_buffer_data), then NAME is
/// called with the data pointers.
Function entryFunction(const ir::Function &f, Module &out) {
  Function e;
  e.name = entryName(f.name);
  e.slots = {Type::Ptr};
  e.params = 1;
  e.result = Type::Void;
  std::vector<uint8_t> name(f.name.begin(), f.name.end());
  name.push_back(0);
  size_t nameIndex = out.constants.size();
  constantData(out, std::move(name));
  std::vector<ExprPtr> data;
  size_t count = f.params.size() + f.resultTypes.size();
  for (size_t i = 0; i < count; ++i) {
    const TensorType &t = i < f.params.size() ? f.valueTypes[f.params[i]] : f.resultTypes[i - f.params.size()];
    std::vector<int64_t> expected = {static_cast<int64_t>(t.dtype), static_cast<int64_t>(t.rank())};
    expected.insert(expected.end(), t.shape.begin(), t.shape.end());
    expected.insert(expected.end(), t.minorToMajor.begin(), t.minorToMajor.end());
    std::vector<uint8_t> bytes;
    for (int64_t v : expected)
      for (int b = 0; b < 8; ++b)
        bytes.push_back(static_cast<uint8_t>(static_cast<uint64_t>(v) >> (8 * b)));
    auto check = std::make_unique<Expr>();
    check->kind = Expr::Kind::Runtime;
    check->type = Type::Ptr;
    check->callee = "keel_rt_buffer_data";
    check->operands.push_back(makeLoad(Type::Ptr, makeVar(0, Type::Ptr), i64(static_cast<int64_t>(i))));
    check->operands.push_back(constantData(out, std::move(bytes)));
    check->operands.push_back(makeConst(Type::I32, i));
    check->operands.push_back(makeGlobal(nameIndex));
    Slot slot = static_cast<Slot>(e.slots.size());
    e.slots.push_back(Type::Ptr);
    auto assign = std::make_unique<Stmt>();
    assign->kind = Stmt::Kind::Assign;
    assign->slot = slot;
    assign->value = std::move(check);
    e.body.push_back(std::move(assign));
    data.push_back(makeVar(slot, Type::Ptr));
  }
  auto s = std::make_unique<Stmt>();
  s->kind = Stmt::Kind::Eval;
  s->value = makeCall(f.name, Type::Void, std::move(data));
  e.body.push_back(std::move(s));
  return e;
}

} // namespace detail

void lowerTensorModule(const ir::Module &m, const Schedule &schedule, Module &out) {
  const FunctionSchedule reference;
  for (const ir::Function &f : m.functions) {
    auto it = schedule.find(f.name);
    out.functions.push_back(detail::FunctionLowering(f, it == schedule.end() ? reference : it->second, out).run());
    out.functions.push_back(detail::entryFunction(f, out));
  }
}

} // namespace keel::loop
