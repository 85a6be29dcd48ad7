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
    case OpKind::Reduce: case OpKind::DotGeneral: inThenConverted(o, *o.acc); return; // the accumulator's result
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
    Op o = std::move(attrs);
    o.kind = kind;
    o.operands = std::move(operands);
    TensorType t = f_.valueTypes[like];
    t.dtype = dtype;
    o.resultTypes = {t};
    ValueId r = into ? *into : f_.newValue(t);
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
