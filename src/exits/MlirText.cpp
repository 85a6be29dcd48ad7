//===- MlirText.cpp - Types, literals, locations and affine maps in MLIR ===//
#include "keel/exits/MlirText.h"

#include <cstdio>

namespace keel::exits {

using ir::DType;

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

} // namespace keel::exits
