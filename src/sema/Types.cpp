//===- Types.cpp ----------------------------------------------------------===//
#include "keel/sema/Types.h"

namespace keel::sema {

std::optional<Scalar> parseScalarName(std::string_view name) {
  if (name == "int")
    return Scalar::I64;
  if (name == "float")
    return Scalar::F64;
  return parseElementType(name);
}

std::optional<fp::Format> formatOf(Scalar s) {
  switch (s) {
  case Scalar::F16: return fp::Format::F16;
  case Scalar::BF16: return fp::Format::BF16;
  case Scalar::TF32: return fp::Format::TF32;
  case Scalar::FP8E4M3FN: return fp::Format::FP8E4M3FN;
  case Scalar::FP8E5M2: return fp::Format::FP8E5M2;
  case Scalar::F32: return fp::Format::F32;
  case Scalar::F64: return fp::Format::F64;
  case Scalar::Bool: case Scalar::I4: case Scalar::I8: case Scalar::I16: case Scalar::I32: case Scalar::I64:
  case Scalar::U8: case Scalar::U16: case Scalar::U32: case Scalar::U64:
    return std::nullopt;
  }
  return std::nullopt;
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
  case Kind::Error: case Kind::Void: case Kind::String: case Kind::Array:
    return true;
  }
  return true;
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
