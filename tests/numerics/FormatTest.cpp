//===- FormatTest.cpp - Format facts against the specification's table --===//
//
// Expected values are the table of ../shared/spec/README.md section 4,
// written out by hand (and computed with std::ldexp where the table gives a
// formula), and the exact decimal expansions of powers of two.
//
//===----------------------------------------------------------------------===//
#include "Reference.h"

#include <cmath>
#include <gtest/gtest.h>

using namespace keel::fp;

namespace {

struct SpecRow {
  Format format;
  double largestFinite, smallestNormal, smallestSubnormal;
  bool hasInfinity;
  uint64_t nanPositive, nanNegative;
};

const SpecRow kSpec[] = {
    {Format::F16, 65504.0, std::ldexp(1.0, -14), std::ldexp(1.0, -24), true, 0x7E00, 0xFE00},
    {Format::BF16, (2 - std::ldexp(1.0, -7)) * std::ldexp(1.0, 127), std::ldexp(1.0, -126),
     std::ldexp(1.0, -133), true, 0x7FC0, 0xFFC0},
    {Format::TF32, (2 - std::ldexp(1.0, -10)) * std::ldexp(1.0, 127), std::ldexp(1.0, -126),
     std::ldexp(1.0, -136), true, 0x7FC00000, 0xFFC00000},
    {Format::FP8E5M2, 57344.0, std::ldexp(1.0, -14), std::ldexp(1.0, -16), true, 0x7E, 0xFE},
    {Format::FP8E4M3FN, 448.0, std::ldexp(1.0, -6), std::ldexp(1.0, -9), false, 0x7F, 0xFF},
};

TEST(FormatTest, BoundariesMatchTheSpecificationTable) {
  for (const SpecRow &row : kSpec) {
    SCOPED_TRACE(std::string(info(row.format).name));
    EXPECT_EQ(ref::exactValue(row.format, largestFinite(row.format)), row.largestFinite);
    EXPECT_EQ(ref::exactValue(row.format, largestFinite(row.format, true)), -row.largestFinite);
    EXPECT_EQ(ref::exactValue(row.format, smallestNormal(row.format)), row.smallestNormal);
    EXPECT_EQ(ref::exactValue(row.format, smallestSubnormal(row.format)), row.smallestSubnormal);
    EXPECT_EQ(info(row.format).hasInfinity, row.hasInfinity);
    EXPECT_EQ(canonicalNaN(row.format, false), row.nanPositive);
    EXPECT_EQ(canonicalNaN(row.format, true), row.nanNegative);
    EXPECT_EQ(classify(row.format, smallestSubnormal(row.format)), FpClass::Subnormal);
    EXPECT_EQ(classify(row.format, smallestNormal(row.format)), FpClass::Normal);
    EXPECT_EQ(classify(row.format, row.nanNegative), FpClass::NaN);
    // epsilon is the gap between 1 and the next value: 2^(1 - precision).
    EXPECT_EQ(ref::exactValue(row.format, epsilon(row.format)),
              std::ldexp(1.0, 1 - info(row.format).precision()));
  }
}

TEST(FormatTest, Fp8e4m3fnHasNoInfinityAndOneNaNPerSign) {
  int nans = 0;
  for (uint64_t b = 0; b < 256; ++b) {
    FpClass c = classify(Format::FP8E4M3FN, b);
    EXPECT_NE(c, FpClass::Infinity) << b;
    nans += c == FpClass::NaN;
  }
  EXPECT_EQ(nans, 2);
  EXPECT_EQ(classify(Format::FP8E4M3FN, 0x78), FpClass::Normal); // 256, not infinity
}

TEST(FormatTest, ParseFormatAcceptsOnlyCanonicalSpellings) {
  EXPECT_EQ(parseFormat("fp8e4m3fn"), Format::FP8E4M3FN);
  EXPECT_EQ(parseFormat("tf32"), Format::TF32);
  for (const char *bad : {"fp8", "fp8e4m3", "fp8e5", "half", "F16", "bfloat16", ""})
    EXPECT_FALSE(parseFormat(bad).has_value()) << bad;
}

TEST(FormatTest, Tf32EncodingsKeepTheLowCarrierBitsClear) {
  EXPECT_TRUE(isValidEncoding(Format::TF32, 0x3F802000));
  EXPECT_FALSE(isValidEncoding(Format::TF32, 0x3F800001));
  EXPECT_FALSE(isValidEncoding(Format::F16, 0x10000));
  EXPECT_TRUE(isValidEncoding(Format::F64, ~uint64_t{0}));
}

TEST(FormatTest, ExactDecimalPrintsEveryDigit) {
  // 2^-24 = 5^24 / 10^24, by hand.
  EXPECT_EQ(exactDecimal(Format::F16, 0x0001), "0.000000059604644775390625");
  EXPECT_EQ(exactDecimal(Format::F16, 0x7BFF), "65504");
  EXPECT_EQ(exactDecimal(Format::F16, 0x8000), "-0");
  EXPECT_EQ(exactDecimal(Format::F16, 0xFC00), "-inf");
  EXPECT_EQ(exactDecimal(Format::F16, 0x7E00), "nan");
  EXPECT_EQ(exactDecimal(Format::FP8E4M3FN, 0xFF), "-nan");
  EXPECT_EQ(exactDecimal(Format::FP8E4M3FN, 0x7E), "448");
  EXPECT_EQ(exactDecimal(Format::BF16, 0x3FC0), "1.5");
  // The largest f64 is (2^53 - 1) * 2^971: 309 digits.
  EXPECT_EQ(exactDecimal(Format::F64, 0x7FEFFFFFFFFFFFFF).size(), 309u);
  // The smallest f64 subnormal 2^-1074 has 751 significant digits after
  // 323 zeros: "0." + 1074 fraction digits.
  std::string tiny = exactDecimal(Format::F64, 1);
  EXPECT_EQ(tiny.size(), 2u + 1074u);
  EXPECT_EQ(tiny.substr(0, 2 + 323 + 5), "0." + std::string(323, '0') + "49406");
}

TEST(FormatTest, ExactDecimalMatchesPrintfForEveryF16) {
  // glibc's printf prints the exact expansion of a double when asked for
  // enough digits: an independent decimal printer.
  for (uint64_t b = 0; b < 0x10000; ++b) {
    if (classify(Format::F16, b) == FpClass::NaN || classify(Format::F16, b) == FpClass::Infinity)
      continue;
    char buf[128];
    std::snprintf(buf, sizeof buf, "%.40f", ref::exactValue(Format::F16, b));
    std::string expect = buf;
    while (expect.back() == '0') expect.pop_back();
    if (expect.back() == '.') expect.pop_back();
    ASSERT_EQ(exactDecimal(Format::F16, b), expect) << ref::hexOf(Format::F16, b);
  }
}

TEST(FormatTest, CompareFollowsIeeeRules) {
  const Format f = Format::BF16;
  EXPECT_EQ(compare(f, 0x0000, 0x8000), Ordering::Equal); // +0 == -0
  EXPECT_EQ(compare(f, 0x7FC0, 0x7FC0), Ordering::Unordered);
  EXPECT_EQ(compare(f, 0x3F80, 0x7FC1), Ordering::Unordered);
  EXPECT_EQ(compare(f, 0xFF80, 0x0001), Ordering::Less);
  EXPECT_EQ(compare(f, 0x3F81, 0x3F80), Ordering::Greater);
  EXPECT_EQ(compare(Format::FP8E4M3FN, 0x7E, 0xFE), Ordering::Greater);
  EXPECT_EQ(compare(Format::FP8E4M3FN, 0x7F, 0x7F), Ordering::Unordered);
}

} // namespace
