//===- RoundingTest.cpp - Exact ties, for every format and source type ---===//
//
// A tie is the midpoint of two adjacent values lo < hi. Round-to-nearest-
// even must pick the one whose last fraction bit is 0. For every format we
// build ties on both sides of an even and of an odd retained bit, in the
// subnormal range, around 1, near the largest finite value and, for integer
// sources, at integer midpoints. Each tie is fed through every source type
// that can represent it exactly: f64, f32, i64, u64 and a decimal string.
// Neighbour values and expected encodings come from APFloat and MPFR.
//
//===----------------------------------------------------------------------===//
#include "Reference.h"

#include <cmath>
#include <gtest/gtest.h>

using namespace keel::fp;
using llvm::APFloat;

namespace {

/// The last retained fraction bit of an encoding.
bool lastBitOdd(Format f, uint64_t bits) { return (bits >> info(f).fractionShift) & 1; }

/// Checks a tie given as a double (exact) against every source that holds
/// it exactly.
void checkTie(Format f, double mid, uint64_t expected) {
  SCOPED_TRACE(std::string(info(f).name) + " tie " + ref::exactDecimalOf(mid));
  EXPECT_EQ(fromF64(f, mid), expected);
  float asFloat = static_cast<float>(mid);
  if (static_cast<double>(asFloat) == mid) {
    EXPECT_EQ(fromF32(f, asFloat), expected);
  }
  if (mid == std::floor(mid) && std::fabs(mid) < 0x1p63) {
    EXPECT_EQ(fromI64(f, static_cast<int64_t>(mid)), expected);
    if (mid >= 0) {
      EXPECT_EQ(fromU64(f, static_cast<uint64_t>(mid)), expected);
    }
  }
  EXPECT_EQ(fromDecimal(f, ref::exactDecimalOf(mid)), expected);
}

TEST(RoundingTest, TiesBetweenAdjacentValuesGoToTheEvenOne) {
  for (Format f : allFormats()) {
    if (f == Format::F64)
      continue; // midpoints of f64 need 54 bits: see the integer and MPFR tests
    const FormatInfo &fi = info(f);
    uint64_t step = uint64_t{1} << fi.fractionShift; // next encoding
    uint64_t one = ref::fromAP(f, APFloat::getOne(ref::semantics(f)));
    uint64_t minNormal = ref::fromAP(f, APFloat::getSmallestNormalized(ref::semantics(f)));
    uint64_t largest = ref::fromAP(f, APFloat::getLargest(ref::semantics(f)));
    const uint64_t los[] = {step,              2 * step,           minNormal - step,
                            minNormal,         one - step,         one,
                            one + step,        largest - 2 * step, largest - step};
    for (uint64_t lo : los) {
      uint64_t hi = lo + step;
      double vlo = ref::exactValue(f, lo), vhi = ref::exactValue(f, hi);
      double mid = (vlo + vhi) / 2; // p + 1 bits: exact in f64
      ASSERT_EQ(mid - vlo, vhi - mid);
      uint64_t expected = lastBitOdd(f, lo) ? hi : lo;
      checkTie(f, mid, expected);
      checkTie(f, -mid, expected | fi.signMask());
    }
    // Half the smallest subnormal is a tie between 0 (even) and it.
    double halfMin = ref::exactValue(f, step) / 2;
    checkTie(f, halfMin, 0);
    checkTie(f, -halfMin, fi.signMask());
    // 1.5 * smallest subnormal: between 1 (odd) and 2 (even) quanta.
    checkTie(f, 3 * halfMin, 2 * step);
  }
}

TEST(RoundingTest, IntegerTiesFromEverySourceType) {
  for (Format f : allFormats()) {
    const FormatInfo &fi = info(f);
    const int p = fi.precision();
    const llvm::fltSemantics &sem = ref::semantics(f);
    // At 2^p the quantum is 2, so base + 1 and base + 3 are integer ties with
    // an even and an odd lower neighbour. For the wide-range formats repeat
    // at 2^63, where the quantum is 2^(64 - p).
    std::vector<int> binades = {p};
    if (fi.maxExponent() >= 64)
      binades.push_back(63);
    for (int e : binades) {
      if (e > fi.maxExponent())
        continue;
      uint64_t base = uint64_t{1} << e;
      uint64_t ulp = uint64_t{1} << (e - p + 1);
      for (uint64_t k : {0, 1}) {
        uint64_t mid = base + k * ulp + ulp / 2;
        uint64_t evenNeighbour = base + (k + (k & 1)) * ulp; // lo if k even
        APFloat expected(sem);
        expected.convertFromAPInt(llvm::APInt(64, evenNeighbour), false,
                                  APFloat::rmTowardZero); // exact
        uint64_t expectBits = ref::fromAP(f, expected);
        SCOPED_TRACE(std::string(fi.name) + " integer tie " + std::to_string(mid));
        EXPECT_EQ(fromU64(f, mid), expectBits);
        EXPECT_EQ(fromDecimal(f, std::to_string(mid)), expectBits);
        if (mid <= uint64_t{INT64_MAX}) {
          EXPECT_EQ(fromI64(f, static_cast<int64_t>(mid)), expectBits);
          EXPECT_EQ(fromI64(f, -static_cast<int64_t>(mid)), expectBits | fi.signMask());
        }
        if (p <= 52) { // mid has p + 1 significant bits: exact as a double
          EXPECT_EQ(fromF64(f, static_cast<double>(mid)), expectBits);
        }
      }
    }
  }
}

TEST(RoundingTest, F64TiesFromDecimalAndIntegers) {
  // 2^53 + 1 lies between 2^53 (even) and 2^53 + 2 (odd fraction).
  EXPECT_EQ(fromI64(Format::F64, (int64_t{1} << 53) + 1), 0x4340000000000000u);
  EXPECT_EQ(fromU64(Format::F64, (uint64_t{1} << 53) + 3), 0x4340000000000002u);
  EXPECT_EQ(fromDecimal(Format::F64, "9007199254740993"), 0x4340000000000000u);
  EXPECT_EQ(fromDecimal(Format::F64, "9007199254740995"), 0x4340000000000002u);
  // Ties in the subnormal range of f64, as exact decimals: k * 2^-1075 for
  // odd k is the midpoint of (k-1)/2 and (k+1)/2 quanta.
  for (unsigned long k : {1ul, 3ul, 5ul, 7ul, 4503599627370495ul}) {
    mpfr_t x;
    mpfr_init2(x, 128);
    mpfr_set_ui_2exp(x, k, -1075, MPFR_RNDN);
    uint64_t lower = (k - 1) / 2, upper = (k + 1) / 2;
    uint64_t expected = (lower & 1) ? upper : lower;
    std::string text = ref::exactDecimalOf(x);
    EXPECT_EQ(fromDecimal(Format::F64, text), expected) << text;
    EXPECT_EQ(fromDecimal(Format::F64, "-" + text), expected | (uint64_t{1} << 63)) << text;
    mpfr_clear(x);
  }
}

TEST(RoundingTest, OverflowThresholds) {
  // Formats with infinity: the midpoint above the largest finite value rounds
  // to infinity (the largest value's last bit is odd); just below it does not.
  for (Format f : allFormats()) {
    const FormatInfo &fi = info(f);
    double largest = ref::exactValue(f, largestFinite(f));
    double halfUlp = std::ldexp(1.0, fi.maxExponent() - fi.precision());
    if (f == Format::F64)
      continue; // no wider binary source: see the decimal test below
    double threshold = largest + halfUlp;
    uint64_t above = fi.hasInfinity ? infinity(f) : largestFinite(f);
    SCOPED_TRACE(fi.name);
    EXPECT_EQ(fromF64(f, threshold), above);
    EXPECT_EQ(fromF64(f, std::nextafter(threshold, 0.0)), largestFinite(f));
    EXPECT_EQ(fromF64(f, -threshold), above | fi.signMask());
    EXPECT_EQ(fromF64(f, INFINITY), above);
  }
  // f64: the threshold 2^1024 - 2^970 = 1.79769313486231580793728971405303415...e308.
  EXPECT_EQ(fromDecimal(Format::F64, "1.7976931348623158079372897140530342e308"),
            0x7FF0000000000000u);
  EXPECT_EQ(fromDecimal(Format::F64, "1.7976931348623158079372897140530341e308"),
            0x7FEFFFFFFFFFFFFFu);
  // fp8e4m3fn saturates, infinity included (README section 4).
  EXPECT_EQ(fromF32(Format::FP8E4M3FN, 1e30f), 0x7Eu);
  EXPECT_EQ(fromF32(Format::FP8E4M3FN, -INFINITY), 0xFEu);
  EXPECT_EQ(fromI64(Format::FP8E4M3FN, INT64_MIN), 0xFEu);
  EXPECT_EQ(convert(Format::F16, Format::FP8E4M3FN, 0x7C00), 0x7Eu);
}

TEST(RoundingTest, SignedZeroAndNaNAreKept) {
  for (Format f : allFormats()) {
    SCOPED_TRACE(info(f).name);
    EXPECT_EQ(fromF64(f, -0.0), info(f).signMask());
    if (f != Format::F64) {
      EXPECT_EQ(fromF64(f, -1e-300), info(f).signMask()) << "underflow keeps the sign";
    }
    EXPECT_EQ(fromF64(f, -NAN), ref::specCanonicalNaN(f, true));
    EXPECT_EQ(fromF64(f, NAN), ref::specCanonicalNaN(f, false));
    EXPECT_EQ(fromI64(f, 0), 0u);
    EXPECT_EQ(fromDecimal(f, "-0.0"), info(f).signMask());
  }
}

} // namespace
