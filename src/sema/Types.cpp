//===- Types.cpp ----------------------------------------------------------===//
#include "keel/sema/Types.h"

namespace keel::sema {

std::string_view scalarName(Scalar s) {
  switch (s) {
  case Scalar::Bool: return "bool";
  case Scalar::I4: return "i4";
  case Scalar::I8: return "i8";
  case Scalar::I16: return "i16";
  case Scalar::I32: return "i32";
  case Scalar::I64: return "i64";
  case Scalar::U8: return "u8";
  case Scalar::U16: return "u16";
  case Scalar::U32: return "u32";
  case Scalar::U64: return "u64";
  case Scalar::F16: return "f16";
  case Scalar::BF16: return "bf16";
  case Scalar::TF32: return "tf32";
  case Scalar::FP8E4M3FN: return "fp8e4m3fn";
  case Scalar::FP8E5M2: return "fp8e5m2";
  case Scalar::F32: return "f32";
  case Scalar::F64: return "f64";
  }
  return "?";
}

std::optional<Scalar> parseScalarName(std::string_view name) {
  if (name == "int")
    return Scalar::I64;
  if (name == "float")
    return Scalar::F64;
  for (int i = 0; i <= static_cast<int>(Scalar::F64); ++i)
    if (scalarName(static_cast<Scalar>(i)) == name)
      return static_cast<Scalar>(i);
  return std::nullopt;
}

bool isInteger(Scalar s) {
  switch (s) {
  case Scalar::I4: case Scalar::I8: case Scalar::I16: case Scalar::I32: case Scalar::I64:
  case Scalar::U8: case Scalar::U16: case Scalar::U32: case Scalar::U64:
    return true;
  case Scalar::Bool: case Scalar::F16: case Scalar::BF16: case Scalar::TF32:
  case Scalar::FP8E4M3FN: case Scalar::FP8E5M2: case Scalar::F32: case Scalar::F64:
    return false;
  }
  return false;
}

bool isSigned(Scalar s) {
  switch (s) {
  case Scalar::I4: case Scalar::I8: case Scalar::I16: case Scalar::I32: case Scalar::I64:
    return true;
  default:
    return isFloat(s);
  }
}

bool isFloat(Scalar s) {
  switch (s) {
  case Scalar::F16: case Scalar::BF16: case Scalar::TF32: case Scalar::FP8E4M3FN:
  case Scalar::FP8E5M2: case Scalar::F32: case Scalar::F64:
    return true;
  default:
    return false;
  }
}

bool isLowPrecision(Scalar s) {
  return isFloat(s) && s != Scalar::F32 && s != Scalar::F64;
}

bool isFp8(Scalar s) { return s == Scalar::FP8E4M3FN || s == Scalar::FP8E5M2; }

int bitWidth(Scalar s) {
  switch (s) {
  case Scalar::Bool: return 1;
  case Scalar::I4: return 4;
  case Scalar::I8: case Scalar::U8: case Scalar::FP8E4M3FN: case Scalar::FP8E5M2: return 8;
  case Scalar::I16: case Scalar::U16: case Scalar::F16: case Scalar::BF16: return 16;
  case Scalar::I32: case Scalar::U32: case Scalar::F32: case Scalar::TF32: return 32;
  case Scalar::I64: case Scalar::U64: case Scalar::F64: return 64;
  }
  return 0;
}

fp::Format formatOf(Scalar s) {
  switch (s) {
  case Scalar::F16: return fp::Format::F16;
  case Scalar::BF16: return fp::Format::BF16;
  case Scalar::TF32: return fp::Format::TF32;
  case Scalar::FP8E4M3FN: return fp::Format::FP8E4M3FN;
  case Scalar::FP8E5M2: return fp::Format::FP8E5M2;
  case Scalar::F32: return fp::Format::F32;
  default: return fp::Format::F64;
  }
}

bool Type::operator==(const Type &o) const {
  if (kind != o.kind)
    return false;
  switch (kind) {
  case Kind::Scalar:
  case Kind::TypeName:
    return scalar == o.scalar;
  case Kind::Tensor:
    return scalar == o.scalar && dims == o.dims;
  default:
    return true;
  }
}

std::string typeName(const Type &t) {
  switch (t.kind) {
  case Type::Kind::Error: return "{error}";
  case Type::Kind::Void: return "void";
  case Type::Kind::Scalar: return std::string(scalarName(t.scalar));
  case Type::Kind::String: return "string";
  case Type::Kind::Array: return "array";
  case Type::Kind::TypeName: return "type " + std::string(scalarName(t.scalar));
  case Type::Kind::Tensor: {
    std::string s = "Tensor<" + std::string(scalarName(t.scalar)) + ", [";
    for (size_t i = 0; i < t.dims.size(); ++i)
      s += (i ? ", " : "") + t.dims[i].str();
    return s + "]>";
  }
  }
  return "?";
}

} // namespace keel::sema
