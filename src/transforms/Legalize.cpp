//===- Legalize.cpp - Keel's element semantics as native ops --------------===//
//
// Each rule below rewrites one op that is not native for the exit into ops
// that compute the same bits; every op a rule makes goes through the same
// check, so a rule may lean on another (a narrowing into fp8e4m3fn made by
// the low-precision rule is clamped by the fp8e4m3fn rule). Made ops carry
// the location of the op they replace, and the last one defines its result.
//
//===----------------------------------------------------------------------===//
#include "keel/transforms/Legalize.h"

#include "keel/ir/Infer.h"
#include "keel/ir/Text.h"
#include "keel/numerics/Format.h"

#include <algorithm>
#include <cmath>
#include <map>
#include <optional>
#include <stdexcept>
#include <utility>

namespace keel::transforms {

using namespace ir;

DTypeSet DTypeSet::allFloats() {
  DTypeSet s;
  for (int i = 0; i < kNumElementTypes; ++i)
    if (isFloatType(static_cast<DType>(i)))
      s.bits_ |= uint32_t{1} << i;
  return s;
}

namespace {

bool isSigned(DType t) { return isIntegerType(t) && isSignedType(t); }

double largest(DType t) { return fp::toF64(*formatOf(t), fp::largestFinite(*formatOf(t))); }

/// Whether a value of `from` can lie beyond fp8e4m3fn's +-448.
bool exceedsFp8e4m3fn(DType from) {
  if (from == DType::FP8E4M3FN || from == DType::Bool)
    return false;
  if (isFloatType(from))
    return true;
  int bits = encodingBits(from);
  return isSigned(from) ? bits > 9 : bits > 8;
}

/// The encoding of `v` in `t` (exact for every value the rules use).
uint64_t encodingOf(DType t, double v) {
  if (isFloatType(t))
    return fp::fromF64(*formatOf(t), v);
  int bits = encodingBits(t);
  uint64_t mask = bits == 64 ? ~uint64_t{0} : (uint64_t{1} << bits) - 1;
  return static_cast<uint64_t>(static_cast<int64_t>(v)) & mask;
}

/// Whether every index of an iota of `t` along `axis` is a value of its
/// dtype in `dtypes`.
bool iotaIsExact(const TensorType &t, int64_t axis, const DTypeSet &dtypes) {
  if (!dtypes.has(t.dtype))
    return false;
  int64_t last = t.shape[static_cast<size_t>(axis)] - 1;
  if (isFloatType(t.dtype))
    return last <= (int64_t{1} << fp::info(*formatOf(t.dtype)).precision());
  int bits = encodingBits(t.dtype) - (isSigned(t.dtype) ? 1 : 0);
  return bits >= 63 || last <= static_cast<int64_t>((uint64_t{1} << bits) - 1);
}

bool isMathFunction(UnaryCode c) { return mathFunction(c).has_value() && c != UnaryCode::Sqrt; }

} // namespace

bool Capabilities::native(const Function &f, const Op &o) const {
  auto dtype = [&](ValueId v) { return f.valueTypes[v].dtype; };
  for (ValueId v : o.operands)
    if (leftToExit.has(dtype(v)))
      return true;
  for (const TensorType &t : o.resultTypes)
    if (leftToExit.has(t.dtype))
      return true;
  switch (o.kind) {
  case OpKind::Unary: {
    DType t = o.resultTypes[0].dtype;
    if (!isFloatType(t))
      return true;
    return isMathFunction(o.unary) ? mathFunctions.has(t) : basicArithmetic.has(t);
  }
  case OpKind::Binary: {
    DType t = o.resultTypes[0].dtype;
    if (isFloatType(t))
      return o.binary == BinaryCode::Pow ? mathFunctions.has(t) : basicArithmetic.has(t);
    if (o.binary == BinaryCode::Div || o.binary == BinaryCode::Rem)
      return totalIntegerDivision || o.guarded;
    return true;
  }
  case OpKind::Compare: {
    DType t = dtype(o.operands[0]);
    return !isFloatType(t) || basicArithmetic.has(t);
  }
  case OpKind::Convert: return conversionNative(dtype(o.operands[0]), o.resultTypes[0].dtype) || o.guarded;
  case OpKind::Reduce: case OpKind::DotGeneral: // the accumulator converted once into the result
    if (o.order == SumOrder::Tree && !treeOrder)
      return false;
    return (o.kind == OpKind::Reduce && (o.combiner == Combiner::ArgMax || o.combiner == Combiner::ArgMin)) ||
           !o.acc || conversionNative(*o.acc, o.resultTypes[0].dtype);
  case OpKind::Iota: return convertingIota || iotaIsExact(o.resultTypes[0], o.axis, exactIota);
  case OpKind::Select: case OpKind::Constant: case OpKind::BroadcastInDim:
  case OpKind::Reshape: case OpKind::Transpose: case OpKind::Slice: case OpKind::Concatenate:
  case OpKind::Copy: case OpKind::Relayout: case OpKind::Call: case OpKind::Return: case OpKind::Fusion:
    return true;
  }
  return true;
}

bool Capabilities::conversionNative(DType from, DType to) const {
  if (leftToExit.has(from) || leftToExit.has(to))
    return true;
  if (isFloatType(from) && isIntegerType(to))
    return saturatingFloatToInteger;
  if (to == DType::FP8E4M3FN && exceedsFp8e4m3fn(from))
    return saturatingFp8e4m3fn;
  return true;
}

void Capabilities::require(const Function &f, const Op &o) const {
  if (native(f, o))
    return;
  std::string types;
  for (ValueId v : o.operands)
    types += (types.empty() ? "" : ", ") + typeText(f.valueTypes[v]);
  throw std::logic_error("`" + opName(o) + "` (" + types + " -> " + typeText(o.resultTypes[0]) + ") reached the " +
                         std::string(exit) + " exit unlegalized: it cannot map it with Keel's meaning");
}

namespace {

/// Rewrites the blocks of one function, each op through emit().
class Legalizer {
public:
  Legalizer(Function &f, const Capabilities &caps) : f_(f), caps_(caps) {
    if (!caps.basicArithmetic.has(DType::F32) || !caps.basicArithmetic.has(DType::F64) ||
        !caps.mathFunctions.has(DType::F32) || !caps.mathFunctions.has(DType::F64))
      throw std::logic_error("the " + std::string(caps.exit) + " exit's capabilities lack f32 or f64 arithmetic");
  }

  /// Legalizes `ops` (a function body or a fusion region) in place; true
  /// if anything changed.
  bool block(std::vector<Op> &ops) {
    std::vector<Op> outer = std::move(out_);
    std::map<std::pair<std::string, uint64_t>, ValueId> outerConstants = std::move(constants_);
    out_.clear();
    constants_.clear();
    bool changed = false;
    for (Op &o : ops) {
      changed |= o.guarded;
      o.guarded = false;
      if (o.kind == OpKind::Fusion && o.region)
        changed |= block(o.region->ops);
      size_t before = out_.size();
      emit(std::move(o));
      changed |= out_.size() != before + 1;
    }
    ops = std::move(out_);
    out_ = std::move(outer);
    constants_ = std::move(outerConstants);
    return changed;
  }

private:
  //===-- Making ops -------------------------------------------------------===//

  /// Appends `o` if it is native, else what a rule writes for it.
  void emit(Op o) {
    if (caps_.native(f_, o)) {
      out_.push_back(std::move(o));
      return;
    }
    loc_ = o.loc;
    switch (o.kind) {
    case OpKind::Unary: case OpKind::Compare: throughF32(o); return;
    case OpKind::Binary:
      if (isFloatType(o.resultTypes[0].dtype))
        throughF32(o);
      else
        guardedDivision(o);
      return;
    case OpKind::Convert:
      if (isFloatType(dtype(o.operands[0])) && isIntegerType(o.resultTypes[0].dtype))
        floatToInteger(o);
      else
        clampIntoFp8e4m3fn(o);
      return;
    case OpKind::Iota: inThenConverted(o, DType::I64); return; // made in i64
    case OpKind::Reduce: case OpKind::DotGeneral:
      if (o.order == SumOrder::Tree && !caps_.treeOrder)
        treeWrittenOut(o);
      else
        inThenConverted(o, *o.acc); // the accumulator's result
      return;
    case OpKind::Select: case OpKind::Constant: case OpKind::BroadcastInDim:
    case OpKind::Reshape: case OpKind::Transpose: case OpKind::Slice: case OpKind::Concatenate:
    case OpKind::Copy: case OpKind::Relayout:
    case OpKind::Call: case OpKind::Return: case OpKind::Fusion:
      break;
    }
    throw std::logic_error("legalization has no rule for `" + opName(o) + "`");
  }

  DType dtype(ValueId v) const { return f_.valueTypes[v].dtype; }

  /// An op of `kind` on `operands` giving `like`'s shape and layout in
  /// `dtype`; its result is `into` when given (the replaced op's result).
  ValueId make(OpKind kind, std::vector<ValueId> operands, DType dtype, ValueId like, std::optional<ValueId> into,
               Op attrs = {}) {
    TensorType t = f_.valueTypes[like];
    t.dtype = dtype;
    return shaped(kind, std::move(operands), std::move(t), std::move(attrs), into);
  }
  /// An op of `kind` on `operands` giving `type`; its result is `into` when given.
  ValueId shaped(OpKind kind, std::vector<ValueId> operands, TensorType type, Op attrs = {},
                 std::optional<ValueId> into = std::nullopt) {
    Op o = std::move(attrs);
    o.kind = kind;
    o.operands = std::move(operands);
    o.resultTypes = {type};
    ValueId r = into ? *into : f_.newValue(std::move(type));
    o.results = {r};
    o.loc = loc_;
    emit(std::move(o));
    return r;
  }
  ValueId constant(DType t, double v, ValueId like) { return splat(t, encodingOf(t, v), like); }
  /// A splat of `encoding`, made once per block for each type.
  ValueId splat(DType t, uint64_t encoding, ValueId like) {
    TensorType type = f_.valueTypes[like];
    type.dtype = t;
    auto key = std::make_pair(typeText(type), encoding);
    if (auto it = constants_.find(key); it != constants_.end())
      return it->second;
    Op attrs;
    attrs.constant = {encoding};
    return constants_[key] = make(OpKind::Constant, {}, t, like, std::nullopt, std::move(attrs));
  }
  ValueId convert(ValueId x, DType to, std::optional<ValueId> into = std::nullopt, bool guarded = false) {
    Op attrs;
    attrs.guarded = guarded;
    return make(OpKind::Convert, {x}, to, x, into, std::move(attrs));
  }
  ValueId compare(CompareDir d, ValueId a, ValueId b) {
    Op attrs;
    attrs.compare = d;
    return make(OpKind::Compare, {a, b}, DType::Bool, a, std::nullopt, std::move(attrs));
  }
  ValueId binary(BinaryCode c, ValueId a, ValueId b, std::optional<ValueId> into = std::nullopt, bool guarded = false) {
    Op attrs;
    attrs.binary = c;
    attrs.guarded = guarded;
    return make(OpKind::Binary, {a, b}, dtype(a), a, into, std::move(attrs));
  }
  ValueId select(ValueId c, ValueId a, ValueId b, std::optional<ValueId> into = std::nullopt) {
    return make(OpKind::Select, {c, a, b}, dtype(a), a, into);
  }
  ValueId either(ValueId a, std::optional<ValueId> b) { return b ? binary(BinaryCode::Or, a, *b) : a; }

  //===-- The rules ----------------------------------------------------------===//

  /// Arithmetic on a float dtype the exit does not compute in: exactly in
  /// f32, the result rounded once (compare: no result to round).
  void throughF32(const Op &o) {
    Op wide = o;
    for (ValueId &v : wide.operands)
      v = convert(v, DType::F32);
    if (o.kind == OpKind::Compare)
      emit(std::move(wide));
    else
      inThenConverted(wide, DType::F32);
  }

  /// `o` giving `dtype` instead, then converted into its result.
  void inThenConverted(const Op &o, DType dtype) {
    Op wide = o;
    ValueId r = f_.newValue(f_.valueTypes[o.results[0]]);
    f_.valueTypes[r].dtype = dtype;
    wide.results = {r};
    wide.resultTypes[0].dtype = dtype;
    emit(std::move(wide));
    convert(r, o.resultTypes[0].dtype, o.results[0]);
  }

  ValueId reshaped(ValueId x, std::vector<int64_t> shape) {
    if (f_.valueTypes[x].shape == shape && f_.valueTypes[x].hasDefaultLayout())
      return x;
    return shaped(OpKind::Reshape, {x}, TensorType::make(dtype(x), std::move(shape)));
  }
  /// `x` with its dimensions in the order `perm` (row-major).
  ValueId transposed(ValueId x, const std::vector<int64_t> &perm) {
    const TensorType &t = f_.valueTypes[x];
    bool identity = true;
    for (size_t i = 0; i < perm.size(); ++i)
      identity &= perm[i] == static_cast<int64_t>(i);
    if (identity)
      return t.hasDefaultLayout() ? x : shaped(OpKind::Relayout, {x}, TensorType::make(t.dtype, t.shape));
    std::vector<int64_t> shape;
    for (int64_t d : perm)
      shape.push_back(t.shape[static_cast<size_t>(d)]);
    Op attrs;
    attrs.dims = perm;
    return shaped(OpKind::Transpose, {x}, TensorType::make(t.dtype, shape), std::move(attrs));
  }
  /// Elements [from, to) of `x`'s last dimension.
  ValueId lastSlice(ValueId x, int64_t from, int64_t to) {
    std::vector<int64_t> shape = f_.valueTypes[x].shape;
    Op attrs;
    attrs.dims.assign(shape.size(), 0);
    attrs.limits = shape;
    attrs.dims.back() = from;
    attrs.limits.back() = to;
    shape.back() = to - from;
    return shaped(OpKind::Slice, {x}, TensorType::make(dtype(x), shape), std::move(attrs));
  }
  /// `x`'s last dimension (n terms) padded with `encoding` to `total`.
  ValueId padded(ValueId x, int64_t total, uint64_t encoding) {
    std::vector<int64_t> shape = f_.valueTypes[x].shape;
    int64_t n = shape.back();
    if (total == n)
      return x;
    std::vector<int64_t> padShape = shape;
    padShape.back() = total - n;
    Op value;
    value.constant = {encoding};
    ValueId pad = shaped(OpKind::Constant, {}, TensorType::make(dtype(x), padShape), std::move(value));
    shape.back() = total;
    Op attrs;
    attrs.axis = static_cast<int64_t>(shape.size()) - 1;
    return shaped(OpKind::Concatenate, {x, pad}, TensorType::make(dtype(x), shape), std::move(attrs));
  }

  /// Groups of 16 terms per chunk for n terms: 256, or fewer for one chunk.
  static int64_t groupsPerChunk(int64_t n) { return n > kTreeChunk ? kTreeChunk / kTreeLanes : (n + kTreeLanes - 1) / kTreeLanes; }

  /// [P..., m, 16] lane sums to [P...]: the lanes halved (l[i] + l[i+8],
  /// then +4, +2, +1), then the m chunk values by a balanced tree (pairs
  /// (c[0] + c[1]), (c[2] + c[3]), ..., an odd last one carried up).
  ValueId laneAndChunkTree(ValueId lanes) {
    ValueId v = lanes;
    for (int64_t half = kTreeLanes / 2; half >= 1; half /= 2) { // (one statement per op: a fixed text order)
      ValueId low = lastSlice(v, 0, half);
      ValueId high = lastSlice(v, half, 2 * half);
      v = binary(BinaryCode::Add, low, high);
    }
    std::vector<int64_t> shape = f_.valueTypes[v].shape;
    shape.pop_back(); // [P..., m]
    v = reshaped(v, shape);
    for (int64_t m = shape.back(); m > 1; m = m / 2 + m % 2) {
      std::vector<int64_t> pairs = shape;
      pairs.back() = m / 2;
      pairs.push_back(2);
      ValueId even = reshaped(m % 2 ? lastSlice(v, 0, m - 1) : v, pairs);
      std::vector<int64_t> next = shape;
      next.back() = m / 2;
      ValueId left = lastSlice(even, 0, 1);
      ValueId right = lastSlice(even, 1, 2);
      ValueId sums = reshaped(binary(BinaryCode::Add, left, right), next);
      if (m % 2) {
        next.back() = m / 2 + 1;
        Op attrs;
        attrs.axis = static_cast<int64_t>(next.size()) - 1;
        sums = shaped(OpKind::Concatenate, {sums, lastSlice(v, m - 1, m)}, TensorType::make(dtype(v), next),
                      std::move(attrs));
      }
      v = sums;
      shape = next;
    }
    shape.pop_back();
    return reshaped(v, shape);
  }

  /// `x` converted (exactly: an accumulator is at least as wide) to `acc`.
  ValueId inAccumulator(ValueId x, DType acc) { return dtype(x) == acc ? x : convert(x, acc); }

  /// `value` (the sum in the accumulator, the result's shape, row-major)
  /// into the result `r` of `o`: converted, laid out as `r` is.
  void intoResult(const Op &o, ValueId value) {
    const TensorType &rt = o.resultTypes[0];
    if (rt.dtype != dtype(value))
      value = convert(value, rt.dtype);
    shaped(rt.hasDefaultLayout() ? OpKind::Reshape : OpKind::Relayout, {value}, rt, {}, o.results[0]);
  }

  /// A sum in the tree order, written out as its definition. Floats only:
  /// an integer sum (wrapping, so associative) is the sequential one. The
  /// terms (converted to the accumulator first, exactly) are padded with
  /// -0 to m chunks of g groups of 16 and reshaped [..., m, g, 16]; a
  /// sequential sum over g makes each lane; then laneAndChunkTree.
  void treeWrittenOut(const Op &o) {
    DType acc = *o.acc;
    const TensorType &x = f_.valueTypes[o.operands[0]];
    int64_t n = 1;
    for (int64_t d : o.kind == OpKind::Reduce ? o.dims : o.lhsContract)
      n *= x.shape[static_cast<size_t>(d)];
    if (!isFloatType(acc) || n <= 1) { // every order gives the same bits
      Op sequential = o;
      sequential.order = SumOrder::Sequential;
      emit(std::move(sequential));
      return;
    }
    int64_t g = groupsPerChunk(n), m = (n + kTreeChunk - 1) / kTreeChunk, total = m * g * kTreeLanes;
    uint64_t minusZero = identityEncoding(Combiner::Sum, acc);
    Op sum;
    sum.acc = acc;
    if (o.kind == OpKind::Reduce) {
      // [kept..., reduced...] -> [K..., n] -> [K..., m, g, 16]; lanes [K..., m, 16].
      std::vector<int64_t> perm, kept;
      for (size_t d = 0; d < x.rank(); ++d)
        if (!std::binary_search(o.dims.begin(), o.dims.end(), static_cast<int64_t>(d))) {
          perm.push_back(static_cast<int64_t>(d));
          kept.push_back(x.shape[d]);
        }
      perm.insert(perm.end(), o.dims.begin(), o.dims.end());
      ValueId v = transposed(inAccumulator(o.operands[0], acc), perm);
      std::vector<int64_t> flat = kept;
      flat.push_back(n);
      v = padded(reshaped(v, flat), total, minusZero);
      std::vector<int64_t> groups = kept, lanes = kept;
      groups.insert(groups.end(), {m, g, kTreeLanes});
      lanes.insert(lanes.end(), {m, kTreeLanes});
      sum.combiner = Combiner::Sum;
      sum.dims = {static_cast<int64_t>(kept.size()) + 1};
      ValueId laneSums = shaped(OpKind::Reduce, {reshaped(v, groups)}, TensorType::make(acc, lanes), std::move(sum));
      intoResult(o, laneAndChunkTree(laneSums));
      return;
    }
    // dot_general: each operand [batch..., free..., contracting...] -> [B, F, n]
    // -> padded (lhs with -0, rhs with +0: each padded term is -0 * +0 = -0)
    // -> [B, F, m, g, 16]; a contraction over g with batch (B, m, 16) gives
    // [B, m, 16, L, R], transposed to the lanes [B, L, R, m, 16].
    int64_t batch = 1;
    for (int64_t d : o.lhsBatch)
      batch *= x.shape[static_cast<size_t>(d)];
    auto operand = [&](ValueId v, const std::vector<int64_t> &batchDims, const std::vector<int64_t> &contract,
                       uint64_t pad, int64_t &free) {
      const TensorType &t = f_.valueTypes[v];
      std::vector<int64_t> perm = batchDims;
      free = 1;
      for (size_t d = 0; d < t.rank(); ++d) {
        int64_t dim = static_cast<int64_t>(d);
        if (std::find(batchDims.begin(), batchDims.end(), dim) == batchDims.end() &&
            std::find(contract.begin(), contract.end(), dim) == contract.end()) {
          perm.push_back(dim);
          free *= t.shape[d];
        }
      }
      perm.insert(perm.end(), contract.begin(), contract.end());
      ValueId w = padded(reshaped(transposed(inAccumulator(v, acc), perm), {batch, free, n}), total, pad);
      return reshaped(w, {batch, free, m, g, kTreeLanes});
    };
    int64_t l = 0, r = 0;
    ValueId lhs = operand(o.operands[0], o.lhsBatch, o.lhsContract, minusZero, l);
    ValueId rhs = operand(o.operands[1], o.rhsBatch, o.rhsContract, 0, r);
    sum.lhsBatch = sum.rhsBatch = {0, 2, 4};
    sum.lhsContract = sum.rhsContract = {3};
    ValueId products = shaped(OpKind::DotGeneral, {lhs, rhs}, TensorType::make(acc, {batch, m, kTreeLanes, l, r}), std::move(sum));
    ValueId lanes = transposed(products, {0, 3, 4, 1, 2});
    ValueId total3 = laneAndChunkTree(lanes); // [B, L, R]
    intoResult(o, reshaped(total3, o.resultTypes[0].shape));
  }

  /// Integer x / y and x % y where the target's division is undefined at
  /// y = 0 and at MIN / -1: divided by 1 there, then x / 0 = 0, x % 0 = x.
  void guardedDivision(const Op &o) {
    ValueId a = o.operands[0], b = o.operands[1];
    DType t = dtype(a);
    ValueId byZero = compare(CompareDir::Eq, b, constant(t, 0, b));
    ValueId unsafe = byZero;
    if (isSigned(t)) {
      int bits = encodingBits(t);
      ValueId isMin = compare(CompareDir::Eq, a, constant(t, -std::ldexp(1.0, bits - 1), a));
      ValueId minusOne = compare(CompareDir::Eq, b, constant(t, -1, b));
      unsafe = binary(BinaryCode::Or, byZero, binary(BinaryCode::And, isMin, minusOne));
    }
    ValueId divisor = select(unsafe, constant(t, 1, b), b);
    ValueId q = binary(o.binary, a, divisor, std::nullopt, true);
    select(byZero, o.binary == BinaryCode::Rem ? a : constant(t, 0, a), q, o.results[0]);
  }

  /// Float to integer, toward zero, saturating, NaN to 0, where the
  /// target's conversion is poison out of range: NaN and values out of
  /// range are converted as 0, and the bounds selected after.
  void floatToInteger(const Op &o) {
    ValueId x = o.operands[0];
    DType from = dtype(x), to = o.resultTypes[0].dtype;
    if (!caps_.basicArithmetic.has(from)) { // compared in f32, where the value is exact
      Op wide = o;
      wide.operands = {convert(x, DType::F32)};
      emit(std::move(wide));
      return;
    }
    int bits = encodingBits(to);
    bool signedTo = isSigned(to);
    double hi = std::ldexp(1.0, signedTo ? bits - 1 : bits), top = largest(from);
    bool infinities = fp::info(*formatOf(from)).hasInfinity;
    std::optional<ValueId> high, low;
    if (hi <= top)
      high = compare(CompareDir::Ge, x, constant(from, hi, x));
    else if (infinities)
      high = compare(CompareDir::Gt, x, constant(from, top, x));
    if (!signedTo)
      low = compare(CompareDir::Lt, x, constant(from, 0, x));
    else if (hi <= top)
      low = compare(CompareDir::Le, x, constant(from, -hi, x));
    else if (infinities)
      low = compare(CompareDir::Lt, x, constant(from, -top, x));
    ValueId nan = compare(CompareDir::Ne, x, x);
    ValueId bad = either(either(nan, high), low);
    ValueId safe = select(bad, constant(from, 0, x), x);
    if (!high && !low) {
      convert(safe, to, o.results[0], true);
      return;
    }
    ValueId r = convert(safe, to, std::nullopt, true);
    double minValue = signedTo ? -hi : 0;
    if (high && low)
      r = select(*high, largestInteger(to, r), r);
    if (low)
      select(*low, constant(to, minValue, r), r, o.results[0]);
    else
      select(*high, largestInteger(to, r), r, o.results[0]);
  }

  /// Into fp8e4m3fn where the target's rounding overflows to NaN: every
  /// value beyond +-448 is clamped to it first (Keel saturates; a NaN
  /// stays NaN as both comparisons are false).
  void clampIntoFp8e4m3fn(const Op &o) {
    ValueId x = o.operands[0];
    DType from = dtype(x);
    if (isFloatType(from) && !caps_.basicArithmetic.has(from)) { // clamped in f32, where the value is exact
      convert(convert(x, DType::F32), DType::FP8E4M3FN, o.results[0]);
      return;
    }
    ValueId bound = constant(from, 448, x);
    ValueId v = select(compare(CompareDir::Gt, x, bound), bound, x);
    if (isFloatType(from) || isSigned(from)) {
      ValueId lower = constant(from, -448, x);
      v = select(compare(CompareDir::Lt, x, lower), lower, v);
    }
    convert(v, DType::FP8E4M3FN, o.results[0], true);
  }

  /// The largest value of integer dtype `t` (2^63 - 1 is not a double).
  ValueId largestInteger(DType t, ValueId like) {
    int bits = encodingBits(t);
    uint64_t mask = bits == 64 ? ~uint64_t{0} : (uint64_t{1} << bits) - 1;
    return splat(t, isSigned(t) ? mask >> 1 : mask, like);
  }

  Function &f_;
  const Capabilities &caps_;
  std::vector<Op> out_;
  std::map<std::pair<std::string, uint64_t>, ValueId> constants_; ///< this block's splats
  Location loc_;
};

} // namespace

bool legalize(Module &m, const Capabilities &caps) {
  bool changed = false;
  for (Function &f : m.functions)
    changed |= Legalizer(f, caps).block(f.ops);
  return changed;
}

} // namespace keel::transforms
