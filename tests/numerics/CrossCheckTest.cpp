//===- CrossCheckTest.cpp - Conversions against LLVM 22's APFloat --------===//
//
// APFloat implements all seven formats with round-to-nearest-even. Keel's
// contract differs in two named places (Reference.h, contractFromApfloat):
// NaN payloads are canonicalized, and fp8e4m3fn saturates instead of
// producing NaN on overflow. Each sweep also counts how often those
// differences were exercised, so a sweep that never meets them would fail.
//
//===----------------------------------------------------------------------===//
#include "Reference.h"

#include <gtest/gtest.h>
#include <llvm/Support/Error.h>
#include <random>
#include <vector>

using namespace keel::fp;

namespace {

struct Tally {
  size_t checked = 0, apfloatDiffered = 0;
};

void checkConvert(Format from, Format to, uint64_t bits, Tally &t) {
  bool differed = false;
  uint64_t expected = ref::apConvert(from, to, bits, differed);
  uint64_t actual = convert(from, to, bits);
  ++t.checked;
  t.apfloatDiffered += differed;
  ASSERT_EQ(ref::hexOf(to, actual), ref::hexOf(to, expected))
      << info(from).name << " " << ref::hexOf(from, bits) << " -> " << info(to).name;
}

TEST(CrossCheckTest, EveryFp8EncodingThroughEveryConversionAndBack) {
  for (Format from : {Format::FP8E4M3FN, Format::FP8E5M2}) {
    Tally t;
    for (uint64_t b = 0; b < 256; ++b) {
      for (Format to : allFormats()) {
        checkConvert(from, to, b, t);
        // Back: every fp8 value is exact in the wider formats, so the round
        // trip restores the byte (NaNs become the canonical NaN).
        uint64_t there = convert(from, to, b);
        uint64_t back = convert(to, from, there);
        bool holdsEveryValue = info(to).precision() >= info(from).precision() &&
                               info(to).maxExponent() >= info(from).maxExponent() &&
                               info(to).minExponent() - info(to).fractionBits <=
                                   info(from).minExponent() - info(from).fractionBits;
        if (classify(from, b) == FpClass::NaN) {
          EXPECT_EQ(back, ref::specCanonicalNaN(from, signBit(from, b)));
        } else if (holdsEveryValue) {
          EXPECT_EQ(back, b) << ref::hexOf(from, b) << " via " << info(to).name;
        }
      }
    }
    EXPECT_EQ(t.checked, 256u * kNumFormats);
    EXPECT_GT(t.apfloatDiffered, 0u) << "NaN encodings must have been met";
  }
  // fp8 to fp8 is a rounding of the value, not a byte reinterpretation:
  // 2^-9 (e4m3fn subnormal 0x01) is the normal 0x18 in e5m2.
  EXPECT_EQ(convert(Format::FP8E4M3FN, Format::FP8E5M2, 0x01), 0x18u);
  // 57344 (e5m2 largest) saturates to 448 in e4m3fn.
  EXPECT_EQ(convert(Format::FP8E5M2, Format::FP8E4M3FN, 0x7B), 0x7Eu);
}

TEST(CrossCheckTest, All65536F16AndBf16EncodingsToEveryFormat) {
  for (Format from : {Format::F16, Format::BF16}) {
    Tally t;
    for (uint64_t b = 0; b < 0x10000; ++b)
      for (Format to : allFormats())
        checkConvert(from, to, b, t);
    EXPECT_EQ(t.checked, 0x10000u * kNumFormats);
    EXPECT_GT(t.apfloatDiffered, 0u);
  }
}

TEST(CrossCheckTest, EveryDecodeIsExact) {
  for (Format f : {Format::F16, Format::BF16, Format::FP8E4M3FN, Format::FP8E5M2}) {
    uint64_t count = uint64_t{1} << info(f).storageBits;
    for (uint64_t b = 0; b < count; ++b) {
      double expected = ref::exactValue(f, b);
      if (std::isnan(expected)) {
        EXPECT_TRUE(std::isnan(toF64(f, b)));
        continue;
      }
      ASSERT_EQ(std::bit_cast<uint64_t>(toF64(f, b)), std::bit_cast<uint64_t>(expected));
      ASSERT_EQ(std::bit_cast<uint32_t>(toF32(f, b)),
                std::bit_cast<uint32_t>(static_cast<float>(expected)));
    }
  }
}

/// The stratified tf32 set of SFEP-0054 section 8.
std::vector<uint64_t> stratifiedTf32() {
  std::vector<uint64_t> v;
  const uint64_t q = 1u << 13; // one tf32 step in the carrier
  for (uint64_t sign : {uint64_t{0}, uint64_t{0x80000000}}) {
    for (uint64_t b : std::initializer_list<uint64_t>{0,                     // zero
                       q, 2 * q, 0x007FE000 - q, 0x007FE000, // subnormals
                       0x00800000, 0x00800000 + q,        // smallest normals
                       0x3F800000 - q, 0x3F800000, 0x3F800000 + q, // around 1
                       0x7F7FE000 - q, 0x7F7FE000,        // largest finite
                       0x7F800000,                        // infinity
                       0x7FC00000, 0x7F802000, 0x7FFFE000}) // NaNs, canonical and not
      v.push_back(b | sign);
  }
  return v;
}

TEST(CrossCheckTest, StratifiedTf32ToEveryFormat) {
  Tally t;
  for (uint64_t b : stratifiedTf32())
    for (Format to : allFormats())
      checkConvert(Format::TF32, to, b, t);
  EXPECT_GT(t.apfloatDiffered, 0u);
}

TEST(CrossCheckTest, F32AroundTheOverflowThresholdsAndMidpoints) {
  // f32 inputs at +-1 ulp around every format's overflow threshold and
  // around the midpoints next to tf32's boundary values.
  Tally t;
  for (Format to : lowPrecisionFormats()) {
    const FormatInfo &fi = info(to);
    double largest = ref::exactValue(to, largestFinite(to));
    float threshold = static_cast<float>(largest + std::ldexp(1.0, fi.maxExponent() - fi.precision()));
    for (float v : {threshold, std::nextafter(threshold, 0.f), std::nextafter(threshold, INFINITY),
                    static_cast<float>(largest), -threshold})
      for (Format dst : allFormats())
        checkConvert(Format::F32, dst, std::bit_cast<uint32_t>(v), t);
  }
  for (uint64_t b : stratifiedTf32()) {
    uint32_t mid = static_cast<uint32_t>(b) + (1u << 12); // the midpoint above b
    for (uint32_t x : {mid - 1, mid, mid + 1})
      if ((x & 0x7FFFFFFF) < 0x7F800000)
        for (Format dst : allFormats())
          checkConvert(Format::F32, dst, x, t);
  }
  EXPECT_GT(t.apfloatDiffered, 0u) << "fp8e4m3fn saturation must have been met";
}

TEST(CrossCheckTest, RandomF32AndF64ToEveryFormat) {
  std::mt19937_64 rng(54);
  Tally t;
  for (int i = 0; i < 200000; ++i) {
    uint64_t b64 = rng();
    // Bias half the f64 samples into the exponent range of the small formats.
    if (i & 1)
      b64 = (b64 & 0x800FFFFFFFFFFFFFull) | (uint64_t(1023 - 150 + rng() % 300) << 52);
    uint32_t b32 = static_cast<uint32_t>(rng());
    for (Format to : allFormats()) {
      checkConvert(Format::F64, to, b64, t);
      checkConvert(Format::F32, to, b32, t);
    }
  }
}

TEST(CrossCheckTest, IntegersToEveryFormat) {
  std::vector<uint64_t> values = {0, 1, 2, 3, 255, 256, 448, 449, 464, 465, 2047, 2049,
                                  65504, 65519, 65520, 65536, (1ull << 53) + 1,
                                  (1ull << 63) - 1, 1ull << 63, ~0ull};
  std::mt19937_64 rng(3);
  for (int i = 0; i < 20000; ++i)
    values.push_back(rng() >> (rng() % 64));
  for (uint64_t v : values) {
    for (Format to : allFormats()) {
      for (bool isSigned : {false, true}) {
        llvm::APFloat expected(ref::semantics(to));
        llvm::APFloat::opStatus status = expected.convertFromAPInt(
            llvm::APInt(64, v), isSigned, llvm::APFloat::rmNearestTiesToEven);
        uint64_t want;
        bool saturates = to == Format::FP8E4M3FN && (status & llvm::APFloat::opOverflow);
        if (saturates) // named difference 2: APFloat gives NaN
          want = largestFinite(to, isSigned && static_cast<int64_t>(v) < 0);
        else
          want = ref::fromAP(to, expected);
        uint64_t got = isSigned ? fromI64(to, static_cast<int64_t>(v)) : fromU64(to, v);
        ASSERT_EQ(ref::hexOf(to, got), ref::hexOf(to, want))
            << (isSigned ? "i64 " : "u64 ")
            << (isSigned ? std::to_string(static_cast<int64_t>(v)) : std::to_string(v))
            << " -> " << info(to).name;
      }
    }
  }
}

TEST(CrossCheckTest, DecimalStringsAgreeWithApfloatToo) {
  std::mt19937_64 rng(11);
  for (Format to : allFormats()) {
    for (int i = 0; i < 5000; ++i) {
      std::string text = std::to_string(rng() % 100000000) + "e" +
                         std::to_string(static_cast<int>(rng() % 100) - 60);
      llvm::APFloat expected(ref::semantics(to));
      auto status = expected.convertFromString(text, llvm::APFloat::rmNearestTiesToEven);
      if (!status) {
        llvm::consumeError(status.takeError());
        FAIL() << "APFloat refused " << text;
      }
      bool differed = false;
      uint64_t want = ref::contractFromApfloat(to, expected, differed);
      if (to == Format::FP8E4M3FN && expected.isNaN()) // named difference 2
        want = largestFinite(to);
      EXPECT_EQ(ref::hexOf(to, fromDecimal(to, text).value()), ref::hexOf(to, want))
          << text << " -> " << info(to).name;
    }
  }
}

} // namespace
