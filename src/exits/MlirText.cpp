//===- MlirText.cpp - Types, literals, locations and affine maps in MLIR ===//
#include "keel/exits/MlirText.h"

#include <cstdio>
#include <numeric>
#include <tuple>
#include <utility>

namespace keel::exits {

using ir::DType;
using ir::TensorType;

std::string mlirElementType(DType t, Integers ints) {
  if (ints == Integers::Unsigned && ir::isIntegerType(t) && !ir::isSignedType(t))
    return "u" + mlirElementType(t);
  switch (t) {
  case DType::Bool: return "i1";
  case DType::I4: return "i4";
  case DType::I8: case DType::U8: return "i8";
  case DType::I16: case DType::U16: return "i16";
  case DType::I32: case DType::U32: return "i32";
  case DType::I64: case DType::U64: return "i64";
  case DType::F16: return "f16";
  case DType::BF16: return "bf16";
  case DType::TF32: return "f32";
  case DType::FP8E4M3FN: return "f8E4M3FN";
  case DType::FP8E5M2: return "f8E5M2";
  case DType::F32: return "f32";
  case DType::F64: return "f64";
  }
  return "?";
}

std::string mlirTensorType(const ir::TensorType &t, Integers ints) {
  std::string s = "tensor<";
  for (int64_t d : t.shape)
    s += std::to_string(d) + "x";
  return s + mlirElementType(t.dtype, ints) + ">";
}

std::string mlirLiteral(DType t, uint64_t encoding, Integers ints) {
  if (t == DType::Bool)
    return encoding ? "true" : "false";
  if (std::optional<fp::Format> f = ir::formatOf(t)) {
    char buf[24];
    std::snprintf(buf, sizeof buf, "0x%0*llX", fp::info(*f).hexDigits(), static_cast<unsigned long long>(encoding));
    return buf;
  }
  int bits = ir::encodingBits(t);
  uint64_t v = bits == 64 ? encoding : encoding & ((uint64_t{1} << bits) - 1);
  if (ints == Integers::Unsigned && !ir::isSignedType(t))
    return std::to_string(v);
  if (bits < 64 && (v >> (bits - 1)) & 1)
    v |= ~uint64_t{0} << bits; // sign-extend: the two's-complement value
  return std::to_string(static_cast<int64_t>(v));
}

std::string mlirConstant(const std::string &literal, const std::string &type) {
  return "arith.constant " + literal + (type == "i1" ? "" : " : " + type);
}

namespace {

void nested(std::string &out, const ir::TensorType &t, const std::vector<uint64_t> &encodings, Integers ints,
            size_t dim, size_t &next) {
  if (dim == t.rank()) {
    out += mlirLiteral(t.dtype, encodings[next++], ints);
    return;
  }
  out += "[";
  for (int64_t i = 0; i < t.shape[dim]; ++i) {
    if (i)
      out += ", ";
    nested(out, t, encodings, ints, dim + 1, next);
  }
  out += "]";
}

} // namespace

std::string mlirDense(const ir::TensorType &t, const std::vector<uint64_t> &encodings, Integers ints) {
  if (encodings.size() == 1)
    return "dense<" + mlirLiteral(t.dtype, encodings[0], ints) + ">";
  std::string out = "dense<";
  size_t next = 0;
  nested(out, t, encodings, ints, 0, next);
  return out + ">";
}

std::string mlirLocation(const ir::Location &l) {
  std::string text = ir::locationText(l);
  return text.empty() ? text : " " + text;
}

//===-- Affine expressions ------------------------------------------------===//

namespace {

AffineRef make(Affine::Kind kind, int64_t value, AffineRef lhs = nullptr, AffineRef rhs = nullptr) {
  return std::make_shared<const Affine>(Affine{kind, value, std::move(lhs), std::move(rhs)});
}

bool isConst(const AffineRef &e, int64_t v) { return e->kind == Affine::Kind::Const && e->value == v; }

/// Binding strength for printing: sums bind loosest.
int precedence(const Affine &e) {
  switch (e.kind) {
  case Affine::Kind::Add: return 0;
  case Affine::Kind::Mul: case Affine::Kind::FloorDiv: case Affine::Kind::Mod: return 1;
  case Affine::Kind::Dim: case Affine::Kind::Const: return 2;
  }
  return 0;
}

std::string operand(const AffineRef &e, int atLeast) {
  std::string s = affineText(e);
  return precedence(*e) < atLeast ? "(" + s + ")" : s;
}

} // namespace

AffineRef affineDim(int64_t position) { return make(Affine::Kind::Dim, position); }
AffineRef affineConst(int64_t value) { return make(Affine::Kind::Const, value); }

AffineRef affineAdd(AffineRef a, AffineRef b) {
  if (a->kind == Affine::Kind::Const && b->kind == Affine::Kind::Const)
    return affineConst(a->value + b->value);
  if (isConst(a, 0))
    return b;
  if (isConst(b, 0))
    return a;
  return make(Affine::Kind::Add, 0, std::move(a), std::move(b));
}

AffineRef affineMul(AffineRef a, int64_t c) {
  if (a->kind == Affine::Kind::Const)
    return affineConst(a->value * c);
  if (c == 0)
    return affineConst(0);
  if (c == 1)
    return a;
  return make(Affine::Kind::Mul, c, std::move(a));
}

AffineRef affineFloorDiv(AffineRef a, int64_t c) {
  if (a->kind == Affine::Kind::Const && a->value >= 0)
    return affineConst(a->value / c);
  if (c == 1)
    return a;
  return make(Affine::Kind::FloorDiv, c, std::move(a));
}

AffineRef affineMod(AffineRef a, int64_t c) {
  if (a->kind == Affine::Kind::Const && a->value >= 0)
    return affineConst(a->value % c);
  if (c == 1)
    return affineConst(0);
  return make(Affine::Kind::Mod, c, std::move(a));
}

std::string affineText(const AffineRef &e) {
  switch (e->kind) {
  case Affine::Kind::Dim: return "d" + std::to_string(e->value);
  case Affine::Kind::Const: return std::to_string(e->value);
  case Affine::Kind::Add: return operand(e->lhs, 0) + " + " + operand(e->rhs, 1);
  case Affine::Kind::Mul: return operand(e->lhs, 2) + " * " + std::to_string(e->value);
  case Affine::Kind::FloorDiv: return operand(e->lhs, 2) + " floordiv " + std::to_string(e->value);
  case Affine::Kind::Mod: return operand(e->lhs, 2) + " mod " + std::to_string(e->value);
  }
  return "?";
}

std::string affineMapText(size_t loops, const AffinePoint &point) {
  std::string s = "affine_map<(";
  for (size_t i = 0; i < loops; ++i)
    s += (i ? ", d" : "d") + std::to_string(i);
  s += ") -> (";
  for (size_t i = 0; i < point.size(); ++i)
    s += (i ? ", " : "") + affineText(point[i]);
  return s + ")>";
}

AffinePoint identityPoint(size_t n) {
  AffinePoint p;
  for (size_t i = 0; i < n; ++i)
    p.push_back(affineDim(static_cast<int64_t>(i)));
  return p;
}

//===-- Affine simplification for reshapes --------------------------------===//

namespace {

/// The values an expression takes over the loops' ranges (inclusive).
struct Range {
  int64_t lo, hi;
};

Range rangeOf(const AffineRef &e, const std::vector<int64_t> &ranges) {
  switch (e->kind) {
  case Affine::Kind::Dim: return {0, ranges[static_cast<size_t>(e->value)] - 1};
  case Affine::Kind::Const: return {e->value, e->value};
  case Affine::Kind::Add: {
    Range a = rangeOf(e->lhs, ranges), b = rangeOf(e->rhs, ranges);
    return {a.lo + b.lo, a.hi + b.hi};
  }
  case Affine::Kind::Mul: {
    Range a = rangeOf(e->lhs, ranges);
    return e->value >= 0 ? Range{a.lo * e->value, a.hi * e->value} : Range{a.hi * e->value, a.lo * e->value};
  }
  case Affine::Kind::FloorDiv: { // by a positive constant
    Range a = rangeOf(e->lhs, ranges);
    auto floorDiv = [&](int64_t x) { return x >= 0 ? x / e->value : -((-x + e->value - 1) / e->value); };
    return {floorDiv(a.lo), floorDiv(a.hi)};
  }
  case Affine::Kind::Mod: return {0, e->value - 1};
  }
  return {0, 0};
}

/// The terms of a sum.
void terms(const AffineRef &e, std::vector<AffineRef> &out) {
  if (e->kind == Affine::Kind::Add) {
    terms(e->lhs, out);
    terms(e->rhs, out);
  } else {
    out.push_back(e);
  }
}

AffineRef sum(const std::vector<AffineRef> &ts) {
  AffineRef e = affineConst(0);
  for (const AffineRef &t : ts)
    e = affineAdd(e, t);
  return e;
}

/// Splits e's terms into a multiple of s (returned divided by s) and the
/// rest: e == quotient * s + rest.
std::pair<std::vector<AffineRef>, std::vector<AffineRef>> splitMultiples(const AffineRef &e, int64_t s) {
  std::vector<AffineRef> all, quotient, rest;
  terms(e, all);
  for (const AffineRef &t : all) {
    if (t->kind == Affine::Kind::Mul && t->value % s == 0)
      quotient.push_back(affineMul(t->lhs, t->value / s));
    else if (t->kind == Affine::Kind::Const && t->value % s == 0)
      quotient.push_back(affineConst(t->value / s));
    else
      rest.push_back(t);
  }
  return {quotient, rest};
}

bool within(const AffineRef &e, int64_t s, const std::vector<int64_t> &ranges) {
  Range r = rangeOf(e, ranges);
  return r.lo >= 0 && r.hi < s;
}

/// A common factor g of s and the coefficients of e's scaled terms such
/// that the other terms stay in [0, g): then e = g * high + low with
/// 0 <= low < g. Returns (g, high, low), or g = 1.
std::tuple<int64_t, AffineRef, AffineRef> factorOut(const AffineRef &e, int64_t s, const std::vector<int64_t> &ranges) {
  std::vector<AffineRef> all;
  terms(e, all);
  int64_t g = s;
  for (const AffineRef &t : all)
    if (t->kind == Affine::Kind::Mul)
      g = std::gcd(g, t->value);
  if (g <= 1)
    return {1, e, e};
  auto [high, low] = splitMultiples(e, g);
  if (!within(sum(low), g, ranges))
    return {1, e, e};
  return {g, sum(high), sum(low)};
}

/// e floordiv s, with the multiples of s taken out, a common factor
/// divided out, and the rest dropped when it stays in [0, s) over the loops.
AffineRef floorDivOver(const AffineRef &e, int64_t s, const std::vector<int64_t> &ranges) {
  if (s == 1)
    return e;
  auto [quotient, rest] = splitMultiples(e, s);
  AffineRef r = sum(rest);
  if (within(r, s, ranges))
    return sum(quotient);
  auto [g, high, low] = factorOut(r, s, ranges); // (g*high + low) floordiv (g*s') = high floordiv s'
  if (g > 1)
    return affineAdd(sum(quotient), floorDivOver(high, s / g, ranges));
  return affineAdd(sum(quotient), affineFloorDiv(r, s));
}

/// e mod s, without the multiples of s, a common factor taken out, and no
/// mod when the rest stays in [0, s).
AffineRef modOver(const AffineRef &e, int64_t s, const std::vector<int64_t> &ranges) {
  AffineRef r = sum(splitMultiples(e, s).second);
  if (within(r, s, ranges))
    return r;
  auto [g, high, low] = factorOut(r, s, ranges); // (g*high + low) mod (g*s') = g*(high mod s') + low
  if (g > 1)
    return affineAdd(affineMul(modOver(high, s / g, ranges), g), low);
  return affineMod(r, s);
}

} // namespace

/// The operand point a reshape reads for result point `p`: the row-major
/// position, then the operand's coordinates of it.
AffinePoint reshapePoint(const AffinePoint &p, const TensorType &result, const TensorType &operand,
                         const std::vector<int64_t> &ranges) {
  AffineRef position = affineConst(0);
  int64_t stride = 1;
  for (size_t i = result.rank(); i-- > 0;) {
    if (result.shape[i] != 1) // a size-1 dimension's index is 0
      position = affineAdd(affineMul(p[i], stride), position);
    stride *= result.shape[i];
  }
  AffinePoint q(operand.rank());
  int64_t below = 1;
  for (size_t j = operand.rank(); j-- > 0;) {
    AffineRef quotient = floorDivOver(position, below, ranges);
    q[j] = operand.shape[j] == 1 ? affineConst(0) : modOver(quotient, operand.shape[j], ranges);
    below *= operand.shape[j];
  }
  return q;
}


} // namespace keel::exits
