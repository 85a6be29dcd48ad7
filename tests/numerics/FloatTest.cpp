//===- FloatTest.cpp - The typed Float<F> wrapper ------------------------===//
//
// Expected encodings are worked by hand from the format layouts.
//
//===----------------------------------------------------------------------===//
#include "keel/numerics/Float.h"

#include <gtest/gtest.h>

using namespace keel::fp;

namespace {

template <typename T>
concept HasAdd = requires(T a, T b) { a + b; };

static_assert(HasAdd<F16> && HasAdd<BF16> && HasAdd<TF32>);
static_assert(!HasAdd<FP8E4M3FN> && !HasAdd<FP8E5M2>, "no scalar fp8 arithmetic");

TEST(FloatTest, ConstructionNamesItsRounding) {
  EXPECT_EQ(F16::fromDecimal("0.1")->bits(), 0x2E66u);
  EXPECT_EQ(F16::fromF64(65520.0).bits(), 0x7C00u);          // overflow threshold
  EXPECT_EQ(FP8E4M3FN::fromF64(1e9).bits(), 0x7Eu);          // saturates to 448
  EXPECT_EQ(BF16::fromI64(257).bits(), 0x4380u);             // 256: tie to even
  EXPECT_EQ(TF32::fromF32(1.0f + 0x1p-11f).bits(), 0x3F800000u); // tie to even
  EXPECT_FALSE(F16::fromDecimal("zero").has_value());
  EXPECT_EQ(F16().bits(), 0u);
}

TEST(FloatTest, ArithmeticRoundsOnce) {
  F16 one = F16::fromBits(0x3C00), tiny = F16::fromBits(0x1000); // 1, 2^-11
  EXPECT_EQ((one + tiny).bits(), 0x3C00u);                         // tie: to even
  EXPECT_EQ((one + tiny + tiny).bits(), 0x3C00u);                  // left to right
  EXPECT_EQ((one + (tiny + tiny)).bits(), 0x3C01u);
  EXPECT_EQ((-one).bits(), 0xBC00u);
  EXPECT_EQ((BF16::fromBits(0x3F80) / BF16::fromBits(0x4040)).bits(), 0x3EABu); // 1/3
}

TEST(FloatTest, ConversionIsByValue) {
  FP8E4M3FN smallest = FP8E4M3FN::fromBits(0x01); // 2^-9
  EXPECT_EQ(FP8E5M2::convertFrom(smallest).bits(), 0x18u);
  EXPECT_EQ(smallest.toF64(), 0x1p-9);
  EXPECT_EQ(smallest.toDecimal(), "0.001953125");
}

TEST(FloatTest, ComparisonsFollowIeee) {
  F16 nan = F16::fromBits(0x7E00), zero = F16::fromBits(0x0000), negZero = F16::fromBits(0x8000);
  EXPECT_FALSE(nan == nan);
  EXPECT_TRUE(nan.identical(nan));
  EXPECT_TRUE(zero == negZero);
  EXPECT_FALSE(zero.identical(negZero));
  EXPECT_FALSE(nan < zero || nan > zero || nan <= zero || nan >= zero);
  EXPECT_TRUE(FP8E4M3FN::fromBits(0xFE) < FP8E4M3FN::fromBits(0x7E));
}

} // namespace
