//===- keel/numerics/Format.h - The floating-point formats Keel knows ----===//
//
// The numerics library gives exact meaning to the five low-precision formats
// of SFEP-0054 (f16, bf16, tf32, fp8e4m3fn, fp8e5m2) and to the two IEEE
// formats they are converted from and to (f32, f64). It knows nothing of the
// compiler: no AST, no IR, no diagnostics. Generated programs link the same
// code through the C entry points of keel/numerics/Helpers.h.
//
// Encodings. An encoding ("bits") is an unsigned integer right-aligned in a
// uint64_t: 16 bits for f16 and bf16, 8 for the fp8 formats, 32 for f32 and
// for tf32 (its f32 carrier, whose 13 low fraction bits are zero in every
// canonical tf32 value), 64 for f64.
//
// The contract (../shared/spec/README.md section 4, SFEP-0054 section 3):
//  - every conversion rounds once, to nearest, ties to even, from the exact
//    value of its source; subnormals are produced and consumed, never flushed;
//    the sign of zero is kept;
//  - a NaN in gives the canonical NaN of the destination with the same sign
//    (payloads are not propagated);
//  - overflow goes to infinity in formats that have one; fp8e4m3fn, which has
//    none, saturates to +-448, and +-infinity converts to +-448 as well;
//  - a decimal string is rounded from its exact value directly to the
//    destination, never through f64, whatever its length and exponent.
//
//===----------------------------------------------------------------------===//
#ifndef KEEL_NUMERICS_FORMAT_H
#define KEEL_NUMERICS_FORMAT_H

#include <cstdint>
#include <optional>
#include <span>
#include <string>
#include <string_view>

namespace keel::fp {

/// The formats, low precision first. The order is stable: it is the order of
/// `allFormats()` and of every table in the library.
enum class Format : uint8_t { F16, BF16, TF32, FP8E4M3FN, FP8E5M2, F32, F64 };

inline constexpr int kNumFormats = 7;

/// What a format is made of. Every field is a fact of the encoding.
struct FormatInfo {
  Format format;
  std::string_view name;   ///< canonical spelling: "f16", "fp8e4m3fn", ...
  int exponentBits;        ///< width of the biased exponent field
  int fractionBits;        ///< stored fraction bits (the precision is one more)
  int bias;                ///< exponent bias
  int storageBits;         ///< width of the encoding (tf32: its 32-bit carrier)
  int fractionShift;       ///< zero low bits under the fraction (tf32: 13)
  bool hasInfinity;        ///< false only for fp8e4m3fn ("fn": finite and NaN)
  bool lowPrecision;       ///< one of SFEP-0054's five types

  int precision() const { return fractionBits + 1; }
  /// Exponent of the smallest normal number: 2^minExponent().
  int minExponent() const { return 1 - bias; }
  /// Exponent of the largest finite number.
  int maxExponent() const {
    int allOnes = (1 << exponentBits) - 1;
    return (hasInfinity ? allOnes - 1 : allOnes) - bias;
  }
  /// Number of hex digits in the textual form of an encoding.
  int hexDigits() const { return storageBits / 4; }
  uint64_t signMask() const { return uint64_t{1} << (storageBits - 1); }
};

const FormatInfo &info(Format f);
std::span<const Format> allFormats();
std::span<const Format> lowPrecisionFormats();
/// Parses a canonical spelling; anything else (including "fp8", "half") is
/// nullopt: the library never guesses a format.
std::optional<Format> parseFormat(std::string_view name);

/// The five classes of a floating-point datum.
enum class FpClass : uint8_t { Zero, Subnormal, Normal, Infinity, NaN };
std::string_view className(FpClass c);

/// True when `bits` is a value of the format: it fits the storage width and,
/// for tf32, has its 13 low carrier bits clear (the canonical NaN included).
bool isValidEncoding(Format f, uint64_t bits);

FpClass classify(Format f, uint64_t bits);
bool signBit(Format f, uint64_t bits);

//===-- Special encodings ------------------------------------------------===//
uint64_t canonicalNaN(Format f, bool negative = false);
uint64_t infinity(Format f, bool negative = false); ///< fp8e4m3fn: none; asserts
uint64_t largestFinite(Format f, bool negative = false);
uint64_t smallestNormal(Format f);
uint64_t smallestSubnormal(Format f);
/// The encoding of 2^(1-precision): the gap between 1 and the next value.
uint64_t epsilon(Format f);

//===-- Encoding: one rounding from the exact value of the source --------===//
uint64_t fromF64(Format to, double v);
uint64_t fromF32(Format to, float v);
uint64_t fromI64(Format to, int64_t v);
uint64_t fromU64(Format to, uint64_t v);

/// Parses a decimal number and rounds its exact value to `to`. Accepted:
/// optional sign, digits with an optional fraction (`12`, `1.5`, `.5`, `5.`),
/// an optional exponent (`e-400`, `E+7`) of any size, and the words `inf`,
/// `infinity` and `nan` in any case. Anything else is nullopt. When
/// `inexact` is given, it is set to whether the result's value differs from
/// the decimal's (rounded, overflowed, saturated or underflowed; a NaN is
/// exact).
std::optional<uint64_t> fromDecimal(Format to, std::string_view text,
                                    bool *inexact = nullptr);

//===-- Decoding ---------------------------------------------------------===//
/// The exact value as a double; exact for every format (f64 is the identity).
double toF64(Format from, uint64_t bits);
/// The value as a float: exact for every format but f64, which is rounded
/// once to nearest even (that is convert(F64, F32, bits)).
float toF32(Format from, uint64_t bits);

/// Converts an encoding between any two formats with one rounding.
uint64_t convert(Format from, Format to, uint64_t bits);

/// The exact decimal value: "65504", "-0", "0.0009765625", "inf", "-inf",
/// "nan", "-nan". Every finite binary value has a finite decimal expansion,
/// and all of it is printed.
std::string exactDecimal(Format f, uint64_t bits);

//===-- Comparison -------------------------------------------------------===//
enum class Ordering : int8_t { Less = -1, Equal = 0, Greater = 1, Unordered = 2 };
/// IEEE comparison: NaN is unordered with everything, -0 == +0.
Ordering compare(Format f, uint64_t a, uint64_t b);

//===-- Scalar arithmetic ------------------------------------------------===//
enum class ArithOp : uint8_t { Add, Sub, Mul, Div };
std::optional<ArithOp> parseArithOp(std::string_view name);
std::string_view arithOpName(ArithOp op);

/// True for f16, bf16, tf32, f32 and f64. The fp8 formats have no scalar
/// arithmetic (SFEP-0054 section 3.5; the language reports E0914).
constexpr bool hasArithmetic(Format f) {
  switch (f) {
  case Format::F16:
  case Format::BF16:
  case Format::TF32:
  case Format::F32:
  case Format::F64:
    return true;
  case Format::FP8E4M3FN:
  case Format::FP8E5M2:
    return false;
  }
  return false;
}

/// `a op b`, correctly rounded to nearest even in `f`. NaN results are the
/// canonical NaN: with the sign of the first NaN operand when there is one,
/// positive for invalid operations (inf - inf, 0 * inf, 0 / 0, inf / inf).
/// Precondition: hasArithmetic(f).
uint64_t arith(Format f, ArithOp op, uint64_t a, uint64_t b);

} // namespace keel::fp

#endif // KEEL_NUMERICS_FORMAT_H
