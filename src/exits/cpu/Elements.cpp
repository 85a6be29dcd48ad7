//===- Elements.cpp - Keel's element semantics as loop IR expressions -----===//
//
// One function per kind of element (unary, binary, conversion), each a
// short composition of loop IR operations whose meaning the code generator
// fixes (docs/semantics.md).
//
//===----------------------------------------------------------------------===//
#include "keel/exits/cpu/Elements.h"

#include "keel/exits/cpu/Lower.h"

namespace keel::cpu {

using namespace loop;
using ir::DType;

Type storageType(DType t) {
  if (t == DType::Bool)
    return Type::U8;
  return typeOf(t == DType::I4 ? DType::I8 : t);
}

Type computeType(DType t) { return t == DType::Bool ? Type::Bool : storageType(t); }

int64_t storageBytes(DType t) { return typeBits(storageType(t)) / 8; }

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

ExprPtr encodingConst(DType t, uint64_t bits) {
  return makeConst(computeType(t), storedValue(t, bits) & (t == DType::I4 ? 0xFF : ~uint64_t{0}));
}

ExprPtr identity(ir::Combiner c, DType acc) { return encodingConst(acc, ir::identityEncoding(c, acc)); }

namespace {

ExprPtr i64(int64_t v) { return makeConst(Type::I64, static_cast<uint64_t>(v)); }

/// i4 arithmetic wraps at 4 bits: ((v + 8) & 15) - 8, in i8.
ExprPtr wrap4(ExprPtr v) {
  ExprPtr masked = makeBinary(BinaryOp::And, makeBinary(BinaryOp::Add, std::move(v), makeConst(Type::I8, 8)),
                              makeConst(Type::I8, 15));
  return makeBinary(BinaryOp::Sub, std::move(masked), makeConst(Type::I8, 8));
}

bool isLowPrecision(DType t) { return ir::isFloatType(t) && t != DType::F32 && t != DType::F64; }

/// `op` on f32 for a low-precision dtype: widen exactly, compute, round once.
template <typename F> ExprPtr viaF32(DType t, F op, std::vector<ExprPtr> args) {
  for (ExprPtr &a : args)
    a = makeCast(std::move(a), Type::F32);
  return makeCast(op(std::move(args)), computeType(t));
}

} // namespace

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
#define KEEL_MATH_FUNCTION(Enum, name, mlir, stablehlo, summary)                                           \
  case ir::UnaryCode::Enum:                                                                                 \
    return apply(UnaryOp::Enum);
#include "keel/support/MathFunctions.def"
#undef KEEL_MATH_FUNCTION
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


/// f16, bf16 and tf32 + - * / are the numerics library's correctly rounded
/// operations; every other low-precision operation widens to f32 exactly,
/// computes there and rounds once (for + - * / on fp8 that is correctly
/// rounded too: 24 >= 2 * 4 + 2).
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

const transforms::Capabilities &cpuCapabilities() {
  static const transforms::Capabilities caps = [] {
    transforms::Capabilities c;
    c.exit = "CPU";
    c.basicArithmetic = transforms::DTypeSet::allFloats();
    c.mathFunctions = transforms::DTypeSet::allFloats();
    c.totalIntegerDivision = c.saturatingFloatToInteger = c.saturatingFp8e4m3fn = c.convertingIota = true;
    c.treeOrder = true; // Reference.cpp's treeSum
    return c;
  }();
  return caps;
}

} // namespace keel::cpu
