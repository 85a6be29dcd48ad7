//===- DecimalTest.cpp - Decimal strings, rounded once, against MPFR -----===//
//
// Expected encodings come from GNU MPFR (mpfr_strtofr at the format's
// precision and exponent range) and from hand calculation.
//
//===----------------------------------------------------------------------===//
#include "Reference.h"

#include <gtest/gtest.h>
#include <random>

using namespace keel::fp;

namespace {

/// The encoding and the inexact flag, both against MPFR's.
void expectMatchesMpfr(Format f, const std::string &text) {
  bool inexact = false, mpfrInexact = false;
  std::string shown = text.size() > 120 ? text.substr(0, 120) + "..." : text;
  EXPECT_EQ(ref::hexOf(f, fromDecimal(f, text, &inexact).value_or(~0ull)),
            ref::hexOf(f, ref::mpfrFromDecimal(f, text, &mpfrInexact)))
      << info(f).name << " <- " << shown;
  EXPECT_EQ(inexact, mpfrInexact) << "inexact flag: " << info(f).name << " <- " << shown;
}

// Decimal strings found programmatically that round wrongly through f64: a
// midpoint of two adjacent values, nudged by 2^-80 of itself toward the
// neighbour that ties-to-even does not pick. f64 cannot see the nudge
// (its half-ulp is 2^-54 relative), so rounding through f64 lands on the
// midpoint and then goes to the even neighbour: the wrong one.
TEST(DecimalTest, StringsThatRoundWronglyThroughF64) {
  for (Format f : {Format::F16, Format::BF16, Format::TF32, Format::FP8E4M3FN,
                   Format::FP8E5M2, Format::F32}) {
    const FormatInfo &fi = info(f);
    uint64_t step = uint64_t{1} << fi.fractionShift;
    uint64_t last = largestFinite(f);
    uint64_t count = last / step;
    uint64_t stride = std::max<uint64_t>(1, count / 300);
    int traps = 0;
    for (uint64_t k = 1; k < count; k += stride) {
      uint64_t lo = k * step, hi = lo + step;
      double vlo = ref::exactValue(f, lo), vhi = ref::exactValue(f, hi);
      bool loOdd = (lo >> fi.fractionShift) & 1;
      mpfr_t x, nudge;
      mpfr_init2(x, 256);
      mpfr_init2(nudge, 256);
      mpfr_set_d(x, vlo, MPFR_RNDN);
      mpfr_add_d(x, x, vhi, MPFR_RNDN);
      mpfr_div_2ui(x, x, 1, MPFR_RNDN); // the midpoint, exactly
      mpfr_div_2ui(nudge, x, 80, MPFR_RNDN);
      if (loOdd)
        mpfr_sub(x, x, nudge, MPFR_RNDN); // true answer lo; via f64: hi
      else
        mpfr_add(x, x, nudge, MPFR_RNDN); // true answer hi; via f64: lo
      std::string text = ref::exactDecimalOf(x);
      mpfr_clear(x);
      mpfr_clear(nudge);
      uint64_t expected = loOdd ? lo : hi;
      ASSERT_EQ(ref::mpfrFromDecimal(f, text), expected) << text;
      if (ref::viaF64(f, text) != expected)
        ++traps;
      EXPECT_EQ(fromDecimal(f, text), expected) << fi.name << " <- " << text;
    }
    EXPECT_GE(traps, 50) << fi.name;
  }
}

TEST(DecimalTest, HandComputedValues) {
  // 65520 is the f16 overflow threshold; anything below stays finite.
  EXPECT_EQ(fromDecimal(Format::F16, "65519.99999999999999999999"), 0x7BFFu);
  EXPECT_EQ(fromDecimal(Format::F16, "65520"), 0x7C00u);
  EXPECT_EQ(fromDecimal(Format::F16, "0.000000059604644775390625"), 0x0001u); // 2^-24
  EXPECT_EQ(fromDecimal(Format::F16, "0.0000000298023223876953125"), 0x0000u); // 2^-25: tie to 0
  EXPECT_EQ(fromDecimal(Format::F16, "0.0000000298023223876953125000000000000000001"), 0x0001u);
  EXPECT_EQ(fromDecimal(Format::F16, "0.1"), 0x2E66u);
  EXPECT_EQ(fromDecimal(Format::BF16, "0.1"), 0x3DCDu);
  EXPECT_EQ(fromDecimal(Format::FP8E4M3FN, "1000.0"), 0x7Eu); // saturates (SFEP-0054 3.3)
  EXPECT_EQ(fromDecimal(Format::FP8E4M3FN, "-1.75"), 0xBEu);
  EXPECT_EQ(fromDecimal(Format::FP8E5M2, "1000.0"), 0x64u);   // 1024
  EXPECT_EQ(fromDecimal(Format::F16, "1e-8"), 0x0000u);       // below half of 2^-24
  EXPECT_EQ(fromDecimal(Format::F16, "-1e-400"), 0x8000u);
  EXPECT_EQ(fromDecimal(Format::BF16, "1e400"), 0x7F80u);
  EXPECT_EQ(fromDecimal(Format::F32, "1e-400"), 0x0u);
  EXPECT_EQ(fromDecimal(Format::F64, "4.9406564584124654e-324"), 0x1u);
  EXPECT_EQ(fromDecimal(Format::F64, "2.4703282292062327e-324"), 0x0u); // just below half
  EXPECT_EQ(fromDecimal(Format::F64, "2.4703282292062328e-324"), 0x1u); // just above half
  EXPECT_EQ(fromDecimal(Format::TF32, "3.14159265"), 0x40490000u);
  EXPECT_EQ(fromDecimal(Format::F16, "inf"), 0x7C00u);
  EXPECT_EQ(fromDecimal(Format::F16, "-Infinity"), 0xFC00u);
  EXPECT_EQ(fromDecimal(Format::FP8E4M3FN, "-inf"), 0xFEu);
  EXPECT_EQ(fromDecimal(Format::BF16, "-NaN"), 0xFFC0u);
  EXPECT_EQ(fromDecimal(Format::F16, ".5"), 0x3800u);
  EXPECT_EQ(fromDecimal(Format::F16, "5."), 0x4500u);
  EXPECT_EQ(fromDecimal(Format::F16, "+2E+0"), 0x4000u);
}

TEST(DecimalTest, ExtremeExponentsAndLengths) {
  for (Format f : allFormats()) {
    SCOPED_TRACE(info(f).name);
    const uint64_t sign = info(f).signMask();
    uint64_t overflow = info(f).hasInfinity ? infinity(f) : largestFinite(f);
    EXPECT_EQ(fromDecimal(f, "1e99999999999999999999999999"), overflow);
    EXPECT_EQ(fromDecimal(f, "-1e99999999999999999999999999"), overflow | sign);
    EXPECT_EQ(fromDecimal(f, "1e-99999999999999999999999999"), 0u);
    EXPECT_EQ(fromDecimal(f, "0e99999999999999999999999999"), 0u);
    EXPECT_EQ(fromDecimal(f, "-0.000e-5"), sign);
    // A 100 000-digit integer overflows; the same digits after the point
    // with a huge negative exponent underflow.
    std::string many(100000, '7');
    EXPECT_EQ(fromDecimal(f, many), overflow);
    EXPECT_EQ(fromDecimal(f, "0." + many + "e-400"), 0u);
    // 1.000...0001 with 5000 zeros: just above 1, rounds to 1.
    expectMatchesMpfr(f, "1." + std::string(5000, '0') + "1");
    // 2049 is an f16 tie (2048 | 2050); a 1 after 3000 zeros breaks it.
    expectMatchesMpfr(f, "2049." + std::string(3000, '0') + "1");
    expectMatchesMpfr(f, "-2051." + std::string(3000, '0') + "1");
  }
}

TEST(DecimalTest, LongMantissasAgainstMpfr) {
  std::mt19937_64 rng(20261129);
  for (Format f : allFormats()) {
    for (int i = 0; i < 300; ++i) {
      std::string digits;
      int n = 150 + static_cast<int>(rng() % 900); // 200-digit mantissas and beyond
      for (int d = 0; d < n; ++d)
        digits += static_cast<char>('0' + rng() % 10);
      int exponent = static_cast<int>(rng() % 700) - 350 - n / 2;
      std::string text = digits.substr(0, 1) + "." + digits.substr(1) + "e" +
                         std::to_string(exponent + n);
      expectMatchesMpfr(f, (rng() & 1 ? "-" : "") + text);
    }
  }
}

TEST(DecimalTest, ShortDecimalsAgainstMpfr) {
  std::mt19937_64 rng(7);
  for (Format f : allFormats()) {
    for (int i = 0; i < 20000; ++i) {
      int n = 1 + static_cast<int>(rng() % 25);
      std::string digits;
      for (int d = 0; d < n; ++d)
        digits += static_cast<char>('0' + rng() % 10);
      const FormatInfo &fi = info(f);
      // Exponents spanning the format's range and a little beyond.
      int span = static_cast<int>((fi.maxExponent() - fi.minExponent() + fi.precision()) * 0.31) + 4;
      int exponent = static_cast<int>(rng() % (2 * span)) - span - static_cast<int>(rng() % 3) * n / 2;
      expectMatchesMpfr(f, digits + "e" + std::to_string(exponent));
    }
  }
}

TEST(DecimalTest, InexactFlagByHand) {
  bool inexact = true;
  EXPECT_EQ(fromDecimal(Format::F16, "0.5", &inexact), 0x3800u);
  EXPECT_FALSE(inexact);
  EXPECT_EQ(fromDecimal(Format::F16, "0.1", &inexact), 0x2E66u);
  EXPECT_TRUE(inexact);
  fromDecimal(Format::F16, "65536", &inexact); // overflow
  EXPECT_TRUE(inexact);
  fromDecimal(Format::FP8E4M3FN, "inf", &inexact); // saturation
  EXPECT_TRUE(inexact);
  fromDecimal(Format::FP8E5M2, "-inf", &inexact);
  EXPECT_FALSE(inexact);
  fromDecimal(Format::F64, "1e-400", &inexact); // underflow to zero
  EXPECT_TRUE(inexact);
  fromDecimal(Format::F16, "-0.000", &inexact);
  EXPECT_FALSE(inexact);
}

TEST(DecimalTest, MalformedInputIsRejected) {
  for (const char *bad : {"", "-", "+", ".", "e5", "1e", "1e+", "1.2.3", "0x10", " 1", "1 ",
                          "--1", "1_000", "nanx", "infinit", "1e5.0", "1,5", "∞"})
    EXPECT_FALSE(fromDecimal(Format::F16, bad).has_value()) << '"' << bad << '"';
}

} // namespace
