//===- keel/sema/Types.h - The types of checked programs -------*- C++ -*-===//
//
// Scalar types are a closed enum with exact identity: f16 != bf16, tf32 !=
// f32, the two fp8 formats differ, and there is no promotion lattice
// (SFEP-0054 §3.2). `int` is i64 and `float` is f64 (the same types, two
// spellings). A tensor type is a dtype and its dimensions in normal form
// (Dim.h).
//
//===----------------------------------------------------------------------===//
#ifndef KEEL_SEMA_TYPES_H
#define KEEL_SEMA_TYPES_H

#include "keel/numerics/Format.h"
#include "keel/sema/Dim.h"
#include "keel/support/ElementType.h"

#include <optional>
#include <string>
#include <string_view>
#include <vector>

namespace keel::sema {

/// Scalar and element types: the one table of keel/support/ElementTypes.def.
/// i4 exists only as a tensor dtype.
using Scalar = ElementType;

inline std::string_view scalarName(Scalar s) { return elementName(s); }
/// Canonical names plus `int` (i64), `float` (f64) and, for dtypes, `i4`.
std::optional<Scalar> parseScalarName(std::string_view name);

inline bool isInteger(Scalar s) { return isIntegerElement(s); }
inline bool isSigned(Scalar s) { return isSignedElement(s); }
/// Every floating format, low precision included.
inline bool isFloat(Scalar s) { return isFloatElement(s); }
inline bool isLowPrecision(Scalar s) { return isLowPrecisionElement(s); }
inline bool isFp8(Scalar s) { return isFp8Element(s); }
/// Storage width in bits (i4: 4, bool: 1).
inline int bitWidth(Scalar s) { return elementBits(s); }
/// The numerics library's format for a floating scalar; nullopt for the
/// others.
std::optional<fp::Format> formatOf(Scalar s);

struct Type {
  enum class Kind : uint8_t {
    Error,        ///< an expression whose error was reported; accepted everywhere
    Void,
    Scalar,
    Tensor,
    String,       ///< only as print and assert messages
    Array,        ///< `[a, b]`: only as an argument of tensor built-ins
    TypeName,     ///< `f32` in `dtype: f32` and `acc: f32`
  };
  Kind kind = Kind::Error;
  Scalar scalar = Scalar::Bool; ///< Scalar, Tensor (dtype), TypeName
  std::vector<Dim> dims;        ///< Tensor: the shape, in normal form

  static Type of(Kind k, Scalar s = Scalar::Bool) {
    Type t;
    t.kind = k;
    t.scalar = s;
    return t;
  }
  static Type error() { return of(Kind::Error); }
  static Type voidType() { return of(Kind::Void); }
  static Type scalarType(Scalar s) { return of(Kind::Scalar, s); }
  static Type tensor(Scalar dtype, std::vector<Dim> dims) {
    Type t = of(Kind::Tensor, dtype);
    t.dims = std::move(dims);
    return t;
  }

  bool is(Kind k) const { return kind == k; }
  bool isScalar(Scalar s) const { return kind == Kind::Scalar && scalar == s; }
  bool isNumericScalar() const { return kind == Kind::Scalar && scalar != Scalar::Bool; }
  /// Exact identity; shapes compare by normal form (the checker asks the
  /// solver about shapes that differ in form).
  bool operator==(const Type &o) const;
};

std::string typeName(const Type &t);

} // namespace keel::sema

#endif // KEEL_SEMA_TYPES_H
