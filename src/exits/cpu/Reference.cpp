//===- Reference.cpp - Tensor IR to loop IR, the definition ----------------===//
//
// Written for clarity: each operation is a loop nest over its result (or,
// for concatenate, over each operand) whose body computes one element
// (Elements.h). This file is the whole reference lowering (`keel run
// --exit reference`), the definition of every operation; the scheduled
// lowering (Scheduled.cpp) reuses its per-operation code and overrides
// where values are computed and stored.
//
//===----------------------------------------------------------------------===//
#include "Reference.h"

#include "keel/exits/cpu/Lower.h"
#include "keel/runtime/Buffer.h"

#include <algorithm>
#include <map>
#include <set>

namespace keel::cpu {

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

using namespace loop;

std::string entryName(const std::string &name) { return name + ".entry"; }

namespace detail {

ExprPtr i64(int64_t v) { return makeConst(Type::I64, static_cast<uint64_t>(v)); }

namespace {

/// The address of the module's constant data `index`.
ExprPtr makeGlobal(size_t index) {
  auto g = std::make_unique<Expr>();
  g->kind = Expr::Kind::Global;
  g->type = Type::Ptr;
  g->bits = index;
  return g;
}

} // namespace

ExprPtr constantData(Module &out, std::vector<uint8_t> bytes) {
  out.constants.push_back(std::move(bytes));
  return makeGlobal(out.constants.size() - 1);
}

Function ReferenceLowering::run() {
  fn_.name = f_.name;
  fn_.loc = location(f_.loc);
  for (ValueId p : f_.params)
    buffer_[p] = newSlot(Type::Ptr);
  for (size_t i = 0; i < f_.resultTypes.size(); ++i)
    resultSlots_.push_back(newSlot(Type::Ptr));
  fn_.params = fn_.slots.size();
  fn_.result = Type::Void;
  block_ = &fn_.body;
  lowerOps(f_.ops, nullptr);
  return std::move(fn_);
}

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

Slot ReferenceLowering::newSlot(Type t) {
  fn_.slots.push_back(t);
  return static_cast<Slot>(fn_.slots.size() - 1);
}

void ReferenceLowering::assign(Slot slot, ExprPtr value) {
  auto s = std::make_unique<Stmt>();
  s->kind = Stmt::Kind::Assign;
  s->slot = slot;
  s->value = std::move(value);
  emit(std::move(s));
}

std::vector<Slot> ReferenceLowering::openNest(const std::vector<int64_t> &shape, size_t independent) {
  std::vector<Slot> counters;
  bool parallelizable = threaded_ && block_ == &fn_.body;
  for (size_t d = 0; d < shape.size(); ++d) {
    int64_t n = shape[d];
    bool parallel = parallelizable && d < independent && n > 1;
    parallelizable = parallelizable && !parallel && n == 1;
    counters.push_back(openLoop(i64(0), i64(n), parallel));
  }
  return counters;
}

Slot ReferenceLowering::openLoop(ExprPtr from, ExprPtr to, bool parallel) {
  Slot counter = newSlot(Type::I64);
  auto loop = std::make_unique<Stmt>();
  loop->kind = Stmt::Kind::For;
  loop->slot = counter;
  loop->from = std::move(from);
  loop->to = std::move(to);
  loop->parallel = parallel;
  std::vector<StmtPtr> *body = &loop->body;
  emit(std::move(loop));
  block_ = body;
  return counter;
}

std::vector<Ix> ReferenceLowering::ixs(const std::vector<Slot> &counters) {
  std::vector<Ix> out;
  for (Slot s : counters)
    out.push_back({static_cast<int64_t>(s), 0});
  return out;
}

ExprPtr ReferenceLowering::address(const TensorType &t, const std::vector<Ix> &index) {
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

ExprPtr ReferenceLowering::loadFrom(Slot ptr, DType t, ExprPtr addr) {
  ExprPtr e = makeLoad(storageType(t), var(ptr), std::move(addr));
  if (t == DType::Bool)
    return makeCompare(CompareOp::Ne, std::move(e), makeConst(Type::U8, 0));
  return e;
}

ExprPtr ReferenceLowering::load(ValueId v, const std::vector<Ix> &index) {
  return loadFrom(buffer_.at(v), type(v).dtype, inBuffer(v, address(type(v), index)));
}

ExprPtr ReferenceLowering::pointwise(const ir::Op &o, const std::vector<Ix> &i) {
  const std::vector<ValueId> &x = o.operands;
  switch (o.kind) {
  case OpKind::Unary: return unaryElement(o.unary, type(x[0]).dtype, load(x[0], i));
  case OpKind::Binary: return binaryElement(loop::binaryOp(o.binary), type(x[0]).dtype, load(x[0], i), load(x[1], i));
  case OpKind::Compare: return makeCompare(o.compare, load(x[0], i), load(x[1], i));
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

std::vector<Ix> ReferenceLowering::mappedIndex(const ir::Op &o, const std::vector<Ix> &i) const {
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

void ReferenceLowering::storeTo(Slot ptr, DType t, ExprPtr addr, ExprPtr value) {
  auto s = std::make_unique<Stmt>();
  s->kind = Stmt::Kind::Store;
  s->slot = ptr;
  s->index = std::move(addr);
  s->value = makeCast(std::move(value), storageType(t));
  emit(std::move(s));
}

void ReferenceLowering::store(ValueId v, ExprPtr addr, ExprPtr value) {
  storeTo(buffer_.at(v), type(v).dtype, inBuffer(v, std::move(addr)), std::move(value));
}

void ReferenceLowering::define(ValueId v, const ir::Op &o) {
  buffer_[v] = allocateScratch(*type(v).elementCount() * storageBytes(type(v).dtype), o);
  owned_.insert(v);
}

Slot ReferenceLowering::bufferOf(ValueId v, const ir::Op &) { return buffer_.at(v); }

void ReferenceLowering::copyInto(Slot to, ValueId from) {
  const TensorType &t = type(from);
  std::vector<StmtPtr> *saved = block_;
  std::vector<Ix> index = ixs(openNest(t.shape, kEveryLoop));
  storeTo(to, t.dtype, address(t, index), load(from, index));
  block_ = saved;
}

void ReferenceLowering::copyValue(ValueId to, ValueId from) {
  std::vector<StmtPtr> *saved = block_;
  std::vector<Ix> index = ixs(openNest(type(from).shape, kEveryLoop));
  store(to, address(type(to), index), load(from, index));
  block_ = saved;
}

void ReferenceLowering::free(ValueId v) {
  if (owned_.erase(v))
    release(buffer_.at(v));
}

void ReferenceLowering::lowerOps(const std::vector<ir::Op> &ops, std::vector<ValueId> *regionResults) {
  for (size_t p = 0; p < ops.size(); ++p) {
    const ir::Op &o = ops[p];
    if (o.kind == OpKind::Return) {
      if (regionResults) {
        *regionResults = o.operands;
        continue;
      }
      lowerReturn(o);
      continue;
    }
    lowerOp(o);
    lowered(ops, p, regionResults != nullptr);
  }
}

void ReferenceLowering::lowerReturn(const ir::Op &o) {
  for (size_t i = 0; i < o.operands.size(); ++i) {
    ValueId v = o.operands[i];
    if (!(buffer_.count(v) && buffer_.at(v) == resultSlots_[i]))
      copyInto(resultSlots_[i], v);
  }
  for (ValueId v : std::set<ValueId>(owned_))
    free(v);
}

void ReferenceLowering::lowered(const std::vector<ir::Op> &, size_t, bool) {}

bool ReferenceLowering::isReturned(const std::vector<ir::Op> &ops, ValueId v) {
  const ir::Op &ret = ops.back();
  return std::find(ret.operands.begin(), ret.operands.end(), v) != ret.operands.end();
}

void ReferenceLowering::lowerOp(const ir::Op &o) {
  switch (o.kind) {
  case OpKind::Unary: case OpKind::Binary: case OpKind::Compare: case OpKind::Select: case OpKind::Convert:
  case OpKind::Copy: case OpKind::Relayout:
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
    elementwise(o, [&](const std::vector<Ix> &i) { return load(o.operands[0], mappedIndex(o, i)); });
    return;
  case OpKind::Reshape: reshape(o); return;
  case OpKind::Concatenate: concatenate(o); return;
  case OpKind::Reduce: reduce(o); return;
  case OpKind::DotGeneral: dotGeneral(o); return;
  case OpKind::Call: call(o); return;
  case OpKind::Fusion: fusion(o); return;
  case OpKind::Return: return; // handled by lowerOps
  }
}

void ReferenceLowering::call(const ir::Op &o) {
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
}

void ReferenceLowering::fusion(const ir::Op &o) {
  for (size_t i = 0; i < o.region->params.size(); ++i)
    bindRegionParam(o.operands[i], o.region->params[i]);
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
    } else if (count[v] == 1 && inCallerResult(v)) {
      buffer_[r] = buffer_.at(v);
    } else {
      define(r, o);
      copyValue(r, v);
    }
  }
  for (ValueId v : returned)
    free(v);
}

void ReferenceLowering::bindRegionParam(ValueId operand, ValueId param) { buffer_[param] = buffer_.at(operand); }

bool ReferenceLowering::inCallerResult(ValueId) const { return false; }

void ReferenceLowering::constant(const ir::Op &o) {
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

void ReferenceLowering::reshape(const ir::Op &o) {
  elementwise(o, [&](const std::vector<Ix> &i) { return reshapedLoad(o, i); });
}

ExprPtr ReferenceLowering::reshapedLoad(const ir::Op &o, const std::vector<Ix> &i) {
  ValueId x = o.operands[0], r = o.results[0];
  const TensorType &in = type(x);
  TensorType rowMajorOut = TensorType::make(type(r).dtype, type(r).shape);
  Slot linear = newSlot(Type::I64);
  assign(linear, address(rowMajorOut, i));
  if (in.hasDefaultLayout() && buffer_.count(x)) // stored row-major: position p is element p
    return loadFrom(buffer_.at(x), in.dtype, inBuffer(x, var(linear)));
  // Operand index d = (p / rowstride_d) % size_d, within each group of
  // dimensions whose sizes' products agree (reshapeGroups): a dimension
  // kept as it was takes its index unchanged, a merge or split divides
  // only the indices of its own group.
  std::vector<Ix> j(in.rank());
  for (const ReshapeGroup &g : reshapeGroups(in.shape, type(r).shape)) {
    if (g.in.size() == 1 && g.out.size() == 1) {
      j[g.in[0]] = i[g.out[0]];
      continue;
    }
    std::vector<int64_t> inSizes, outSizes;
    std::vector<Ix> outIndex;
    for (size_t d : g.in)
      inSizes.push_back(in.shape[d]);
    for (size_t d : g.out) {
      outSizes.push_back(type(r).shape[d]);
      outIndex.push_back(i[d]);
    }
    Slot position = newSlot(Type::I64);
    assign(position, address(TensorType::make(in.dtype, outSizes), outIndex));
    std::vector<int64_t> rs = strides(TensorType::make(in.dtype, inSizes));
    for (size_t k = 0; k < g.in.size(); ++k) {
      Slot s = newSlot(Type::I64);
      assign(s, makeBinary(BinaryOp::Rem, makeBinary(BinaryOp::Div, var(position), i64(rs[k])), i64(inSizes[k])));
      j[g.in[k]] = {static_cast<int64_t>(s), 0};
    }
  }
  return load(x, j);
}

std::vector<ReshapeGroup> reshapeGroups(const std::vector<int64_t> &in, const std::vector<int64_t> &out) {
  auto product = [](const std::vector<int64_t> &shape) {
    int64_t p = 1;
    for (int64_t n : shape)
      p *= n;
    return p;
  };
  // No element, or nothing to group: one group of everything.
  if (product(in) == 0 || in.empty() || out.empty()) {
    ReshapeGroup all;
    for (size_t d = 0; d < in.size(); ++d)
      all.in.push_back(d);
    for (size_t d = 0; d < out.size(); ++d)
      all.out.push_back(d);
    return {all};
  }
  std::vector<ReshapeGroup> groups;
  size_t a = 0, b = 0;
  while (a < in.size() || b < out.size()) {
    ReshapeGroup g;
    int64_t pa = 1, pb = 1;
    // Grow the side with the smaller product until both agree with a
    // dimension on each side; a dimension of size 1 that comes next joins.
    while (a < in.size() || b < out.size()) {
      bool inOne = a < in.size() && in[a] == 1, outOne = b < out.size() && out[b] == 1;
      bool balanced = pa == pb && !g.in.empty() && !g.out.empty();
      if (balanced && !inOne && !outOne)
        break;
      bool takeIn = balanced ? inOne : b >= out.size() || (a < in.size() && (pa < pb || g.in.empty()));
      if (takeIn) {
        pa *= in[a];
        g.in.push_back(a++);
      } else {
        pb *= out[b];
        g.out.push_back(b++);
      }
    }
    groups.push_back(std::move(g));
  }
  return groups;
}

void ReferenceLowering::concatenate(const ir::Op &o) {
  ValueId r = o.results[0];
  define(r, o);
  int64_t offset = 0;
  for (ValueId x : o.operands) {
    std::vector<StmtPtr> *saved = block_;
    std::vector<Ix> i = ixs(openNest(type(x).shape, kEveryLoop));
    std::vector<Ix> j = i;
    j[static_cast<size_t>(o.axis)].offset = offset;
    store(r, address(type(r), j), load(x, i));
    block_ = saved;
    offset += type(x).shape[static_cast<size_t>(o.axis)];
  }
}

void ReferenceLowering::accumulate(ir::Combiner c, DType acc, Slot accSlot, ExprPtr x) {
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

std::vector<Ix> ReferenceLowering::reductionOperandIndex(const ir::Op &o, size_t rank, const std::vector<Ix> &kept,
                                                         const std::vector<Ix> &reduced) {
  std::vector<Ix> j;
  size_t nextKept = 0, nextReduced = 0;
  for (size_t d = 0; d < rank; ++d) {
    bool isReduced = std::binary_search(o.dims.begin(), o.dims.end(), static_cast<int64_t>(d));
    j.push_back(isReduced ? reduced[nextReduced++] : kept[nextKept++]);
  }
  return j;
}

void ReferenceLowering::reduce(const ir::Op &o) {
  ValueId x = o.operands[0], r = o.results[0];
  const TensorType &in = type(x);
  DType acc = *o.acc;
  define(r, o);
  std::vector<StmtPtr> *saved = block_;
  bool topLevel = block_ == &fn_.body;
  std::vector<Slot> kept = openNest(type(r).shape, kEveryLoop);
  std::vector<StmtPtr> *keptBody = block_;
  std::vector<int64_t> reducedShape;
  int64_t count = 1;
  for (int64_t a : o.dims) {
    reducedShape.push_back(in.shape[static_cast<size_t>(a)]);
    count *= in.shape[static_cast<size_t>(a)];
  }
  // Operand index of the kept counters and the reduced indices.
  auto operandIndex = [&](const std::vector<Ix> &reduced) { return reductionOperandIndex(o, in.rank(), ixs(kept), reduced); };
  if (o.order == ir::SumOrder::Tree) { // reduce.sum (the verifier's rule)
    Slot sum = treeSum(
        acc, count,
        [&](const Ix &p) { return convert(load(x, operandIndex(positionIndex(reducedShape, p))), in.dtype, acc); },
        chunksOnThreads(type(r), topLevel), o);
    block_ = keptBody;
    store(r, address(type(r), ixs(kept)), convert(var(sum), acc, type(r).dtype));
    block_ = saved;
    return;
  }
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
  std::vector<Ix> j = operandIndex(ixs(openNest(reducedShape)));
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

std::vector<Ix> ReferenceLowering::positionIndex(const std::vector<int64_t> &shape, const Ix &p) {
  if (shape.size() == 1)
    return {p};
  ExprPtr position = p.slot < 0 ? i64(p.offset)
                                : makeBinary(BinaryOp::Add,
                                             makeBinary(BinaryOp::Mul, var(static_cast<Slot>(p.slot)), i64(p.scale)),
                                             i64(p.offset));
  Slot linear = newSlot(Type::I64);
  assign(linear, std::move(position));
  std::vector<Ix> j;
  int64_t stride = 1;
  for (int64_t n : shape)
    stride *= n;
  for (int64_t n : shape) {
    stride /= n;
    Slot s = newSlot(Type::I64);
    assign(s, makeBinary(BinaryOp::Rem, makeBinary(BinaryOp::Div, var(linear), i64(stride)), i64(n)));
    j.push_back({static_cast<int64_t>(s), 0});
  }
  return j;
}

Slot ReferenceLowering::treeSum(DType acc, int64_t count, const std::function<ExprPtr(const Ix &)> &term,
                                bool chunksOnThreads, const ir::Op &o) {
  constexpr int64_t kGroups = kTreeChunk / kTreeLanes; // groups of 16 terms in a full chunk
  auto add = [&](ExprPtr a, ExprPtr b) { return binaryElement(BinaryOp::Add, acc, std::move(a), std::move(b)); };
  // `for counter in from .. to` around what `body` emits.
  auto forLoop = [&](ExprPtr from, ExprPtr to, bool parallel, const std::function<void(Slot)> &body) {
    std::vector<StmtPtr> *here = block_;
    body(openLoop(std::move(from), std::move(to), parallel));
    block_ = here;
  };
  // One chunk's value: its terms from group `first` on (`groups` groups of
  // 16, then `tail` more at the group index `tailGroup`), lane k taking
  // term 16 * group + k; the lanes halved. Fresh lane slots each time, so
  // a chunk in a parallel loop assigns only slots of its own.
  auto chunk = [&](const std::function<ExprPtr()> &first, int64_t groups, int64_t tail, int64_t tailGroup) {
    std::vector<Slot> lanes;
    for (int64_t k = 0; k < kTreeLanes; ++k) {
      lanes.push_back(newSlot(computeType(acc)));
      assign(lanes.back(), identity(ir::Combiner::Sum, acc));
    }
    if (groups > 0)
      forLoop(first(), makeBinary(BinaryOp::Add, first(), i64(groups)), false, [&](Slot g) {
        for (int64_t k = 0; k < kTreeLanes; ++k)
          assign(lanes[static_cast<size_t>(k)],
                 add(var(lanes[static_cast<size_t>(k)]), term(Ix{static_cast<int64_t>(g), k, kTreeLanes})));
      });
    for (int64_t k = 0; k < tail; ++k)
      assign(lanes[static_cast<size_t>(k)],
             add(var(lanes[static_cast<size_t>(k)]), term(Ix{-1, tailGroup * kTreeLanes + k, 1})));
    for (int64_t half = kTreeLanes / 2; half >= 1; half /= 2)
      for (int64_t i = 0; i < half; ++i)
        assign(lanes[static_cast<size_t>(i)],
               add(var(lanes[static_cast<size_t>(i)]), var(lanes[static_cast<size_t>(i + half)])));
    return lanes[0];
  };
  int64_t full = count / kTreeChunk, rest = count % kTreeChunk;
  int64_t chunks = full + (rest > 0 ? 1 : 0);
  Slot result = newSlot(computeType(acc));
  if (chunks <= 1) { // no chunk tree: the one chunk's lanes (all the identity when count is 0)
    Slot value = full == 1 ? chunk([] { return i64(0); }, kGroups, 0, 0)
                           : chunk([] { return i64(0); }, rest / kTreeLanes, rest % kTreeLanes, rest / kTreeLanes);
    assign(result, var(value));
    return result;
  }
  // The chunk values in scratch memory, c[q] for chunk q.
  Slot values = allocateScratch(chunks * storageBytes(acc), o);
  forLoop(i64(0), i64(full), chunksOnThreads && full > 1, [&](Slot q) {
    Slot value = chunk([&] { return makeBinary(BinaryOp::Mul, var(q), i64(kGroups)); }, kGroups, 0, 0);
    storeTo(values, acc, var(q), var(value));
  });
  if (rest > 0) {
    int64_t first = full * kGroups, groups = rest / kTreeLanes;
    Slot value = chunk([&] { return i64(first); }, groups, rest % kTreeLanes, first + groups);
    storeTo(values, acc, i64(full), var(value));
  }
  // The balanced tree, one level at a time, in place: c[i] = c[2i] + c[2i+1]
  // (iteration i reads only entries at 2i and above, not yet overwritten),
  // an odd last entry moved up unchanged.
  for (int64_t n = chunks; n > 1; n = n / 2 + n % 2) {
    forLoop(i64(0), i64(n / 2), false, [&](Slot i) {
      ExprPtr twice = makeBinary(BinaryOp::Mul, var(i), i64(2));
      ExprPtr next = makeBinary(BinaryOp::Add, makeBinary(BinaryOp::Mul, var(i), i64(2)), i64(1));
      storeTo(values, acc, var(i), add(loadFrom(values, acc, std::move(twice)), loadFrom(values, acc, std::move(next))));
    });
    if (n % 2)
      storeTo(values, acc, i64(n / 2), loadFrom(values, acc, i64(n - 1)));
  }
  assign(result, loadFrom(values, acc, i64(0)));
  release(values);
  return result;
}

void ReferenceLowering::dotGeneral(const ir::Op &o) {
  define(o.results[0], o);
  logicalContraction(o);
}

ExprPtr ReferenceLowering::product(DType acc, ExprPtr a, DType ta, ExprPtr b, DType tb) {
  return binaryElement(BinaryOp::Mul, acc, convert(std::move(a), ta, acc), convert(std::move(b), tb, acc));
}

void ReferenceLowering::logicalContraction(const ir::Op &o) {
  ValueId a = o.operands[0], b = o.operands[1], r = o.results[0];
  const TensorType &ta = type(a), &tb = type(b), &tr = type(r);
  DType acc = *o.acc;
  std::vector<int64_t> lhsFree = freeDims(ta, o.lhsBatch, o.lhsContract);
  std::vector<int64_t> rhsFree = freeDims(tb, o.rhsBatch, o.rhsContract);
  std::vector<StmtPtr> *saved = block_;
  bool topLevel = block_ == &fn_.body;
  std::vector<Slot> result = openNest(tr.shape, kEveryLoop);
  std::vector<int64_t> contractShape;
  int64_t count = 1;
  for (int64_t d : o.lhsContract) {
    contractShape.push_back(ta.shape[static_cast<size_t>(d)]);
    count *= ta.shape[static_cast<size_t>(d)];
  }
  std::vector<StmtPtr> *elementBody = block_;
  auto at = [](Slot s) { return Ix{static_cast<int64_t>(s), 0}; };
  size_t nb = o.lhsBatch.size(), nl = lhsFree.size();
  // round(a * b) at the contracting indices `k`.
  auto term = [&](const std::vector<Ix> &k) {
    std::vector<Ix> ja(ta.rank()), jb(tb.rank());
    for (size_t q = 0; q < nb; ++q) {
      ja[static_cast<size_t>(o.lhsBatch[q])] = at(result[q]);
      jb[static_cast<size_t>(o.rhsBatch[q])] = at(result[q]);
    }
    for (size_t q = 0; q < nl; ++q)
      ja[static_cast<size_t>(lhsFree[q])] = at(result[nb + q]);
    for (size_t q = 0; q < rhsFree.size(); ++q)
      jb[static_cast<size_t>(rhsFree[q])] = at(result[nb + nl + q]);
    for (size_t q = 0; q < k.size(); ++q) {
      ja[static_cast<size_t>(o.lhsContract[q])] = k[q];
      jb[static_cast<size_t>(o.rhsContract[q])] = k[q];
    }
    ExprPtr x = load(a, ja), y = load(b, jb);
    return product(acc, std::move(x), ta.dtype, std::move(y), tb.dtype);
  };
  Slot accSlot;
  if (o.order == ir::SumOrder::Tree) {
    accSlot = treeSum(acc, count, [&](const Ix &p) { return term(positionIndex(contractShape, p)); },
                      chunksOnThreads(tr, topLevel), o);
  } else {
    accSlot = newSlot(computeType(acc));
    assign(accSlot, identity(ir::Combiner::Sum, acc));
    std::vector<Ix> k = ixs(openNest(contractShape));
    assign(accSlot, binaryElement(BinaryOp::Add, acc, var(accSlot), term(k)));
  }
  block_ = elementBody;
  store(r, address(tr, ixs(result)), convert(var(accSlot), acc, tr.dtype));
  block_ = saved;
}

std::vector<int64_t> ReferenceLowering::freeDims(const TensorType &t, const std::vector<int64_t> &batch,
                                                const std::vector<int64_t> &contract) {
  std::vector<int64_t> dims;
  for (size_t d = 0; d < t.rank(); ++d)
    if (std::find(batch.begin(), batch.end(), static_cast<int64_t>(d)) == batch.end() &&
        std::find(contract.begin(), contract.end(), static_cast<int64_t>(d)) == contract.end())
      dims.push_back(static_cast<int64_t>(d));
  return dims;
}

Slot ReferenceLowering::allocateScratch(int64_t bytes, const ir::Op &o) {
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

void lowerReference(const ir::Module &m, Module &out) {
  for (const ir::Function &f : m.functions) {
    out.functions.push_back(detail::ReferenceLowering(f, out).run());
    out.functions.push_back(detail::entryFunction(f, out));
  }
}

} // namespace keel::cpu
