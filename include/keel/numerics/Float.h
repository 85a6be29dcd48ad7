//===- keel/numerics/Float.h - Typed values of one format -----*- C++ -*-===//
//
// Float<F> is a value of format F, for C++ code that computes with these
// formats (constant folding, tests, tools). Like Halide's Float16, every way
// in names its rounding and is explicit, so precision is never raised or
// lowered by accident; operators exist only where the format has scalar
// arithmetic, and each rounds its exact result once to nearest even.
//
//   F16 a = F16::fromDecimal("0.1").value();   // 0x2e66
//   F16 b = a + F16::fromF64(2.0);             // one rounding
//   BF16 c = BF16::convertFrom(b);             // one rounding, from the value
//   double exact = c.toF64();                  // exact
//
//===----------------------------------------------------------------------===//
#ifndef KEEL_NUMERICS_FLOAT_H
#define KEEL_NUMERICS_FLOAT_H

#include "keel/numerics/Format.h"

#include <cassert>

namespace keel::fp {

template <Format F> class Float {
public:
  static constexpr Format format = F;

  /// +0.
  Float() = default;
  /// The value whose encoding is `bits`. Precondition: isValidEncoding.
  static Float fromBits(uint64_t bits) {
    assert(isValidEncoding(F, bits) && "not an encoding of this format");
    return Float(bits);
  }
  /// `v` rounded once to nearest even (NaN: the canonical NaN of its sign).
  static Float fromF64(double v) { return Float(fp::fromF64(F, v)); }
  static Float fromF32(float v) { return Float(fp::fromF32(F, v)); }
  static Float fromI64(int64_t v) { return Float(fp::fromI64(F, v)); }
  static Float fromU64(uint64_t v) { return Float(fp::fromU64(F, v)); }
  /// The exact decimal value rounded once; nullopt when malformed.
  static std::optional<Float> fromDecimal(std::string_view text) {
    if (auto bits = fp::fromDecimal(F, text))
      return Float(*bits);
    return std::nullopt;
  }
  /// Another format's value, rounded once (never a reinterpretation).
  template <Format G> static Float convertFrom(Float<G> other) {
    return Float(convert(G, F, other.bits()));
  }

  uint64_t bits() const { return bits_; }
  /// Exact for every format.
  double toF64() const { return fp::toF64(F, bits_); }
  std::string toDecimal() const { return exactDecimal(F, bits_); }
  FpClass classify() const { return fp::classify(F, bits_); }
  bool isNaN() const { return classify() == FpClass::NaN; }
  bool isNegative() const { return signBit(F, bits_); }

  friend Float operator+(Float a, Float b) requires(hasArithmetic(F)) {
    return Float(arith(F, ArithOp::Add, a.bits_, b.bits_));
  }
  friend Float operator-(Float a, Float b) requires(hasArithmetic(F)) {
    return Float(arith(F, ArithOp::Sub, a.bits_, b.bits_));
  }
  friend Float operator*(Float a, Float b) requires(hasArithmetic(F)) {
    return Float(arith(F, ArithOp::Mul, a.bits_, b.bits_));
  }
  friend Float operator/(Float a, Float b) requires(hasArithmetic(F)) {
    return Float(arith(F, ArithOp::Div, a.bits_, b.bits_));
  }
  /// Negation flips the sign bit, NaNs included (IEEE 754 negate).
  friend Float operator-(Float a) requires(hasArithmetic(F)) {
    return Float(a.bits_ ^ info(F).signMask());
  }

  /// IEEE comparisons: NaN compares unequal to everything, -0 == +0.
  friend bool operator==(Float a, Float b) { return compare(F, a.bits_, b.bits_) == Ordering::Equal; }
  friend bool operator<(Float a, Float b) { return compare(F, a.bits_, b.bits_) == Ordering::Less; }
  friend bool operator>(Float a, Float b) { return b < a; }
  friend bool operator<=(Float a, Float b) { return a < b || a == b; }
  friend bool operator>=(Float a, Float b) { return b <= a; }

  /// Bitwise identity (NaN is identical to itself; -0 is not +0).
  bool identical(Float other) const { return bits_ == other.bits_; }

private:
  explicit Float(uint64_t bits) : bits_(bits) {}
  uint64_t bits_ = 0;
};

using F16 = Float<Format::F16>;
using BF16 = Float<Format::BF16>;
using TF32 = Float<Format::TF32>;
using FP8E4M3FN = Float<Format::FP8E4M3FN>;
using FP8E5M2 = Float<Format::FP8E5M2>;

} // namespace keel::fp

#endif // KEEL_NUMERICS_FLOAT_H
