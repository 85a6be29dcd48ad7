//===- Exact.h - Exact values and the one rounding routine -----*- C++ -*-===//
//
// Every conversion in the library goes through two steps: unpack the source
// into an exact value `mantissa * 2^exponent` (plus, for decimal input, a
// sticky bit standing for a nonzero remainder below the mantissa), then
// `roundPack` it into the destination. roundPack is the only place where
// rounding, subnormals, overflow and saturation are decided, so every source
// type gets the same rounding by construction.
//
//===----------------------------------------------------------------------===//
#ifndef KEEL_NUMERICS_EXACT_H
#define KEEL_NUMERICS_EXACT_H

#include "keel/numerics/Format.h"

namespace keel::fp::detail {

/// An exact decoded value. For Zero/Subnormal/Normal the magnitude is
/// mantissa * 2^exponent (mantissa 0 for zero); Infinity and NaN carry only
/// the sign.
struct Unpacked {
  bool negative = false;
  FpClass cls = FpClass::Zero;
  uint64_t mantissa = 0;
  int exponent = 0;
};

/// Decodes an encoding. A tf32 carrier is read as the f32 it is, so a carrier
/// with low bits set decodes to its f32 value rather than being misread.
Unpacked unpack(Format f, uint64_t bits);

/// Rounds (mantissa + s) * 2^exponent to nearest, ties to even, where s is 0
/// when !sticky and lies strictly between 0 and 1 otherwise, and encodes the
/// result with the given sign. Subnormal results are kept; overflow goes to
/// infinity, or saturates for fp8e4m3fn.
/// Precondition: a sticky value carries at least one bit below the rounding
/// position (callers give 62 or more significant bits).
/// When `inexact` is given, it is set to whether the result differs from
/// the value (rounded, overflowed, saturated or underflowed).
uint64_t roundPack(Format f, bool negative, uint64_t mantissa, int exponent,
                   bool sticky = false, bool *inexact = nullptr);

/// Encodes an infinity; for fp8e4m3fn, which has none, the saturated +-448.
uint64_t packInfinity(Format f, bool negative);
uint64_t packZero(Format f, bool negative);

/// Re-encodes an unpacked value in `to`: the single entry behind convert.
uint64_t packUnpacked(Format to, const Unpacked &u);

} // namespace keel::fp::detail

#endif // KEEL_NUMERICS_EXACT_H
