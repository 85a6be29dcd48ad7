//===- keel/support/Operators.h - Element operators, from one table -*- C++ -*-===//
//
// The elementwise binary codes and comparison directions that the checker,
// the tensor IR, the loop IR, the code generator and every exit share,
// generated from keel/support/Operators.def; and what a source operator
// resolves to (sema records it for each expression).
//
//===----------------------------------------------------------------------===//
#ifndef KEEL_SUPPORT_OPERATORS_H
#define KEEL_SUPPORT_OPERATORS_H

#include "keel/support/ElementType.h"

#include <cstdint>
#include <optional>
#include <string_view>

namespace keel {

enum class BinaryCode : uint8_t {
#define KEEL_BINARY_CODE(Enum, name, source, operands, mlirFloat, mlirSigned, mlirUnsigned, stablehlo) Enum,
#include "keel/support/Operators.def"
#undef KEEL_BINARY_CODE
};

enum class CompareDir : uint8_t {
#define KEEL_COMPARE_DIR(Enum, name, source, mlirFloat, mlirSigned, mlirUnsigned, stablehlo) Enum,
#include "keel/support/Operators.def"
#undef KEEL_COMPARE_DIR
};

/// The dtypes a binary code is legal on.
enum class Operands : uint8_t {
  Numeric,            ///< every dtype but pred
  IntegerOrWideFloat, ///< the integers, f32 and f64
  Float,              ///< every float format
  NotFloat,           ///< pred and the integers
};

constexpr bool admits(Operands o, ElementType t) {
  switch (o) {
  case Operands::Numeric: return t != ElementType::Bool;
  case Operands::IntegerOrWideFloat:
    return isIntegerElement(t) || t == ElementType::F32 || t == ElementType::F64;
  case Operands::Float: return isFloatElement(t);
  case Operands::NotFloat: return !isFloatElement(t);
  }
  return false;
}

/// A row of the binary table.
struct BinaryCodeInfo {
  std::string_view name, source;
  Operands operands;
  std::string_view mlirFloat, mlirSigned, mlirUnsigned, stablehlo;
};

inline constexpr BinaryCodeInfo kBinaryCodes[] = {
#define KEEL_BINARY_CODE(Enum, name, source, operands, mlirFloat, mlirSigned, mlirUnsigned, stablehlo)            \
  {#name, source, Operands::operands, mlirFloat, mlirSigned, mlirUnsigned, stablehlo},
#include "keel/support/Operators.def"
#undef KEEL_BINARY_CODE
};

/// A row of the comparison table.
struct CompareDirInfo {
  std::string_view name, source, mlirFloat, mlirSigned, mlirUnsigned, stablehlo;
};

inline constexpr CompareDirInfo kCompareDirs[] = {
#define KEEL_COMPARE_DIR(Enum, name, source, mlirFloat, mlirSigned, mlirUnsigned, stablehlo)                       \
  {#name, source, mlirFloat, mlirSigned, mlirUnsigned, stablehlo},
#include "keel/support/Operators.def"
#undef KEEL_COMPARE_DIR
};

constexpr const BinaryCodeInfo &binaryCodeInfo(BinaryCode c) { return kBinaryCodes[static_cast<size_t>(c)]; }
constexpr const CompareDirInfo &compareDirInfo(CompareDir d) { return kCompareDirs[static_cast<size_t>(d)]; }

/// What a source operator computes, as the checker resolved it: a binary
/// code, a comparison, `&&` / `||` on bool (short-circuit in scalar code;
/// on tensors, the elementwise and / or of pred), or a prefix operator:
/// `-x` (Negate; of a literal, the negative literal) and `!x` / `~x` (Not:
/// of bool, and of an integer's bits).
struct ElementOperator {
  enum class Kind : uint8_t { Binary, Compare, LogicalAnd, LogicalOr, Negate, Not } kind = Kind::Binary;
  BinaryCode binary = BinaryCode::Add; ///< Binary
  CompareDir compare = CompareDir::Eq; ///< Compare
};

/// The operator spelt `source` (`+`, `<=`, `&&`, ...): the table's rows;
/// nullopt for anything else.
constexpr std::optional<ElementOperator> sourceOperator(std::string_view source) {
  if (source == "&&")
    return ElementOperator{ElementOperator::Kind::LogicalAnd};
  if (source == "||")
    return ElementOperator{ElementOperator::Kind::LogicalOr};
  for (size_t i = 0; i < sizeof kBinaryCodes / sizeof *kBinaryCodes; ++i)
    if (!kBinaryCodes[i].source.empty() && kBinaryCodes[i].source == source)
      return ElementOperator{ElementOperator::Kind::Binary, static_cast<BinaryCode>(i)};
  for (size_t i = 0; i < sizeof kCompareDirs / sizeof *kCompareDirs; ++i)
    if (kCompareDirs[i].source == source)
      return ElementOperator{ElementOperator::Kind::Compare, BinaryCode::Add, static_cast<CompareDir>(i)};
  return std::nullopt;
}

/// The prefix operator spelt `source` (`-`, `!`, `~`); nullopt for
/// anything else.
constexpr std::optional<ElementOperator> prefixOperator(std::string_view source) {
  if (source == "-")
    return ElementOperator{ElementOperator::Kind::Negate};
  if (source == "!" || source == "~")
    return ElementOperator{ElementOperator::Kind::Not};
  return std::nullopt;
}

} // namespace keel

#endif // KEEL_SUPPORT_OPERATORS_H
