//===- ArithTest.cpp - Scalar arithmetic against MPFR and APFloat --------===//
//
// add, sub, mul and div in f16, bf16 and tf32 must be correctly rounded.
// Expected results: MPFR computing the exact operation rounded once at the
// format's precision and exponent range, cross-checked by APFloat's own
// correctly rounded arithmetic in the same semantics.
//
//===----------------------------------------------------------------------===//
#include "Reference.h"

#include <gtest/gtest.h>
#include <random>

using namespace keel::fp;

namespace {

const Format kArithFormats[] = {Format::F16, Format::BF16, Format::TF32};
const ArithOp kOps[] = {ArithOp::Add, ArithOp::Sub, ArithOp::Mul, ArithOp::Div};

uint64_t apArith(Format f, ArithOp op, uint64_t a, uint64_t b) {
  llvm::APFloat x = ref::toAP(f, a), y = ref::toAP(f, b);
  if (x.isNaN() || y.isNaN())
    return ref::specCanonicalNaN(f, x.isNaN() ? x.isNegative() : y.isNegative());
  auto rm = llvm::APFloat::rmNearestTiesToEven;
  switch (op) {
  case ArithOp::Add: x.add(y, rm); break;
  case ArithOp::Sub: x.subtract(y, rm); break;
  case ArithOp::Mul: x.multiply(y, rm); break;
  case ArithOp::Div: x.divide(y, rm); break;
  }
  if (x.isNaN())
    return ref::specCanonicalNaN(f, false);
  return ref::fromAP(f, x);
}

void check(Format f, ArithOp op, uint64_t a, uint64_t b) {
  uint64_t got = arith(f, op, a, b);
  uint64_t want = ref::mpfrArith(f, op, a, b);
  ASSERT_EQ(ref::hexOf(f, got), ref::hexOf(f, want))
      << info(f).name << " " << ref::hexOf(f, a) << " " << arithOpName(op) << " "
      << ref::hexOf(f, b) << " (MPFR)";
  ASSERT_EQ(ref::hexOf(f, apArith(f, op, a, b)), ref::hexOf(f, want))
      << "the two references disagree";
}

std::vector<uint64_t> specials(Format f) {
  uint64_t s = info(f).signMask(), q = uint64_t{1} << info(f).fractionShift;
  uint64_t one = ref::fromAP(f, llvm::APFloat::getOne(ref::semantics(f)));
  std::vector<uint64_t> v = {0, q, 2 * q, smallestNormal(f) - q, smallestNormal(f), one - q,
                             one, one + q, largestFinite(f) - q, largestFinite(f),
                             infinity(f), canonicalNaN(f)};
  size_t n = v.size();
  for (size_t i = 0; i < n; ++i)
    v.push_back(v[i] | s);
  return v;
}

TEST(ArithTest, SpecialValuesInEveryCombination) {
  for (Format f : kArithFormats)
    for (ArithOp op : kOps)
      for (uint64_t a : specials(f))
        for (uint64_t b : specials(f))
          check(f, op, a, b);
}

TEST(ArithTest, NaNRulesAndSignedZero) {
  const Format f = Format::F16;
  EXPECT_EQ(arith(f, ArithOp::Sub, 0x7C00, 0x7C00), 0x7E00u);       // inf - inf
  EXPECT_EQ(arith(f, ArithOp::Mul, 0x0000, 0xFC00), 0x7E00u);       // 0 * -inf
  EXPECT_EQ(arith(f, ArithOp::Div, 0x8000, 0x0000), 0x7E00u);       // -0 / 0
  EXPECT_EQ(arith(f, ArithOp::Add, 0xFE01, 0x7E00), 0xFE00u);       // first NaN's sign
  EXPECT_EQ(arith(f, ArithOp::Add, 0x3C00, 0xFD00), 0xFE00u);
  EXPECT_EQ(arith(f, ArithOp::Add, 0x3C00, 0xBC00), 0x0000u);       // x + -x = +0
  EXPECT_EQ(arith(f, ArithOp::Add, 0x8000, 0x8000), 0x8000u);       // -0 + -0 = -0
  EXPECT_EQ(arith(f, ArithOp::Div, 0x3C00, 0x8000), 0xFC00u);       // 1 / -0 = -inf
  EXPECT_EQ(arith(f, ArithOp::Mul, 0x7BFF, 0x4000), 0x7C00u);       // overflow
  EXPECT_EQ(arith(f, ArithOp::Mul, 0x0001, 0x3800), 0x0000u);       // 2^-25: tie to 0
  EXPECT_EQ(arith(f, ArithOp::Mul, 0x0003, 0x3800), 0x0002u);       // 1.5 q: tie to 2 q
  EXPECT_FALSE(hasArithmetic(Format::FP8E4M3FN));
  EXPECT_FALSE(hasArithmetic(Format::FP8E5M2));
}

TEST(ArithTest, RandomOperandsAgainstMpfr) {
  std::mt19937_64 rng(0x5eed);
  for (Format f : kArithFormats) {
    const FormatInfo &fi = info(f);
    uint64_t mask = (uint64_t{1} << fi.storageBits) - 1;
    uint64_t low = (uint64_t{1} << fi.fractionShift) - 1;
    for (ArithOp op : kOps) {
      for (int i = 0; i < 60000; ++i) {
        uint64_t a = rng() & mask & ~low, b = rng() & mask & ~low;
        if (i % 3 == 0) // operands of nearby magnitude: cancellation, ties
          b = (a & ~((uint64_t{1} << (fi.fractionShift + fi.fractionBits + 2)) - 1)) |
              (b & ((uint64_t{1} << (fi.fractionShift + fi.fractionBits + 2)) - 1));
        check(f, op, a, b);
      }
    }
  }
}

TEST(ArithTest, F32AndF64UseTheirOwnWidth) {
  EXPECT_EQ(arith(Format::F32, ArithOp::Add, 0x3F800000, 0x33800000), 0x3F800000u); // 1 + 2^-24
  EXPECT_EQ(arith(Format::F32, ArithOp::Add, 0x3F800000, 0x33800001), 0x3F800001u);
  EXPECT_EQ(arith(Format::F64, ArithOp::Div, 0x3FF0000000000000, 0x4008000000000000),
            0x3FD5555555555555u); // 1/3
  EXPECT_EQ(arith(Format::F32, ArithOp::Sub, 0x7F800000, 0x7F800000), 0x7FC00000u);
}

} // namespace
