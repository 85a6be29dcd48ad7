//===- keel/support/ElementType.h - Element types, from one table -*- C++ -*-===//
//
// The scalar and tensor element types every layer shares: the checker's
// scalar types (sema::Scalar) and the tensor IR's dtypes (ir::DType) are this
// enum; their facts (width, signedness, floating or not) come from
// ElementTypes.def and nowhere else.
//
//===----------------------------------------------------------------------===//
#ifndef KEEL_SUPPORT_ELEMENTTYPE_H
#define KEEL_SUPPORT_ELEMENTTYPE_H

#include <cstdint>
#include <optional>
#include <string_view>

namespace keel {

enum class ElementType : uint8_t {
#define KEEL_ELEMENT_TYPE(Enum, Spelling, Bits, Kind) Enum,
#include "keel/support/ElementTypes.def"
#undef KEEL_ELEMENT_TYPE
};

inline constexpr int kNumElementTypes = 0
#define KEEL_ELEMENT_TYPE(Enum, Spelling, Bits, Kind) +1
#include "keel/support/ElementTypes.def"
#undef KEEL_ELEMENT_TYPE
    ;

enum class ElementKind : uint8_t { Bool, Signed, Unsigned, LowFloat, Float };

struct ElementInfo {
  std::string_view spelling;
  int bits;
  ElementKind kind;
};

inline constexpr ElementInfo kElementInfo[] = {
#define KEEL_ELEMENT_TYPE(Enum, Spelling, Bits, Kind) {Spelling, Bits, ElementKind::Kind},
#include "keel/support/ElementTypes.def"
#undef KEEL_ELEMENT_TYPE
};

constexpr const ElementInfo &elementInfo(ElementType t) { return kElementInfo[static_cast<size_t>(t)]; }
/// The source spelling: "bool", "i32", "fp8e4m3fn", ...
constexpr std::string_view elementName(ElementType t) { return elementInfo(t).spelling; }
constexpr int elementBits(ElementType t) { return elementInfo(t).bits; }
constexpr bool isIntegerElement(ElementType t) {
  return elementInfo(t).kind == ElementKind::Signed || elementInfo(t).kind == ElementKind::Unsigned;
}
/// Signed integers and every float (they have a sign).
constexpr bool isSignedElement(ElementType t) {
  return elementInfo(t).kind == ElementKind::Signed || elementInfo(t).kind == ElementKind::LowFloat ||
         elementInfo(t).kind == ElementKind::Float;
}
constexpr bool isFloatElement(ElementType t) {
  return elementInfo(t).kind == ElementKind::LowFloat || elementInfo(t).kind == ElementKind::Float;
}
constexpr bool isLowPrecisionElement(ElementType t) { return elementInfo(t).kind == ElementKind::LowFloat; }
constexpr bool isFp8Element(ElementType t) { return t == ElementType::FP8E4M3FN || t == ElementType::FP8E5M2; }

/// SFEP-0054 §3.6, the accumulator of a reduction or contraction:
/// low-precision floats accumulate in f32 or f64; pred in pred; every other
/// type in a type of its kind (float, signed or unsigned integer) at least
/// as wide. The checker, the IR's type rules and the exits all ask this.
constexpr bool accumulatorAllowed(ElementType input, ElementType acc) {
  if (isLowPrecisionElement(input))
    return acc == ElementType::F32 || acc == ElementType::F64;
  if (input == ElementType::Bool || acc == ElementType::Bool)
    return input == acc;
  return isFloatElement(input) == isFloatElement(acc) && isSignedElement(input) == isSignedElement(acc) &&
         elementBits(acc) >= elementBits(input);
}

/// Parses a spelling of the table; nullopt otherwise.
constexpr std::optional<ElementType> parseElementType(std::string_view s) {
  for (int i = 0; i < kNumElementTypes; ++i)
    if (kElementInfo[i].spelling == s)
      return static_cast<ElementType>(i);
  return std::nullopt;
}

} // namespace keel

#endif // KEEL_SUPPORT_ELEMENTTYPE_H
