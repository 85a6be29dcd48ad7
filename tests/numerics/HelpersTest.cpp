//===- HelpersTest.cpp - The C entry points generated code calls ---------===//
//
// The format-named helpers must agree with the contract: against APFloat
// (with the named differences of Reference.h) on stratified and random
// inputs, bulk equal to scalar for every length, MPFR for arithmetic.
//
//===----------------------------------------------------------------------===//
#include "Reference.h"
#include "keel/numerics/Helpers.h"

#include <gtest/gtest.h>
#include <array>
#if defined(__x86_64__)
#include <immintrin.h>
#endif
#include <cstring>
#include <random>
#include <vector>

using namespace keel::fp;

namespace {

/// Every f32 exponent, with fractions at and around each format's rounding
/// midpoints, both signs, plus specials.
std::vector<uint32_t> stratifiedF32() {
  std::vector<uint32_t> v;
  for (uint32_t e = 0; e < 256; ++e)
    for (uint32_t frac : {0u, 1u, 0x7FFFFFu, 0x400000u, 0x3FFFFFu, 0x400001u,
                          0x8000u, 0x7FFFu, 0x8001u, 0x18000u,       // bf16 ties
                          0x1000u, 0xFFFu, 0x1001u, 0x3000u,         // f16 / tf32 ties
                          0x80000u, 0x7FFFFu, 0x180000u, 0x100000u,  // fp8 ties
                          0x200000u, 0x1FFFFFu, 0x600000u})
      for (uint32_t sign : {0u, 0x80000000u})
        v.push_back(sign | (e << 23) | frac);
  return v;
}

TEST(HelpersTest, ScalarF32NarrowingMatchesApfloat) {
  for (uint32_t x : stratifiedF32()) {
    bool d = false;
    ASSERT_EQ(keel_f32_to_f16(std::bit_cast<float>(x)), ref::apConvert(Format::F32, Format::F16, x, d)) << std::hex << x;
    ASSERT_EQ(keel_f32_to_bf16(std::bit_cast<float>(x)), ref::apConvert(Format::F32, Format::BF16, x, d)) << std::hex << x;
    ASSERT_EQ(std::bit_cast<uint32_t>(keel_f32_to_tf32(std::bit_cast<float>(x))), ref::apConvert(Format::F32, Format::TF32, x, d)) << std::hex << x;
    ASSERT_EQ(keel_f32_to_fp8e4m3fn(std::bit_cast<float>(x)), ref::apConvert(Format::F32, Format::FP8E4M3FN, x, d)) << std::hex << x;
    ASSERT_EQ(keel_f32_to_fp8e5m2(std::bit_cast<float>(x)), ref::apConvert(Format::F32, Format::FP8E5M2, x, d)) << std::hex << x;
  }
}

TEST(HelpersTest, ScalarF64NarrowingMatchesApfloat) {
  std::mt19937_64 rng(64);
  for (int i = 0; i < 100000; ++i) {
    uint64_t x = (rng() & 0x800FFFFFFFFFFFFFull) | (uint64_t(1023 - 160 + rng() % 320) << 52);
    double v = std::bit_cast<double>(x);
    bool d = false;
    ASSERT_EQ(keel_f64_to_f16(v), ref::apConvert(Format::F64, Format::F16, x, d));
    ASSERT_EQ(keel_f64_to_bf16(v), ref::apConvert(Format::F64, Format::BF16, x, d));
    ASSERT_EQ(std::bit_cast<uint32_t>(keel_f64_to_tf32(v)), ref::apConvert(Format::F64, Format::TF32, x, d));
    ASSERT_EQ(keel_f64_to_fp8e4m3fn(v), ref::apConvert(Format::F64, Format::FP8E4M3FN, x, d));
    ASSERT_EQ(keel_f64_to_fp8e5m2(v), ref::apConvert(Format::F64, Format::FP8E5M2, x, d));
  }
}

uint32_t expectedWidening(Format f, uint64_t bits) {
  bool d = false;
  return static_cast<uint32_t>(ref::apConvert(f, Format::F32, bits, d));
}

TEST(HelpersTest, EveryEncodingWidensExactly) {
  for (uint32_t b = 0; b < 0x10000; ++b) {
    ASSERT_EQ(std::bit_cast<uint32_t>(keel_f16_to_f32(uint16_t(b))), expectedWidening(Format::F16, b));
    ASSERT_EQ(std::bit_cast<uint32_t>(keel_bf16_to_f32(uint16_t(b))), expectedWidening(Format::BF16, b));
    double f64 = keel_f16_to_f64(uint16_t(b));
    if (!std::isnan(f64)) {
      ASSERT_EQ(f64, ref::exactValue(Format::F16, b));
    }
  }
  for (uint32_t b = 0; b < 256; ++b) {
    ASSERT_EQ(std::bit_cast<uint32_t>(keel_fp8e4m3fn_to_f32(uint8_t(b))), expectedWidening(Format::FP8E4M3FN, b));
    ASSERT_EQ(std::bit_cast<uint32_t>(keel_fp8e5m2_to_f32(uint8_t(b))), expectedWidening(Format::FP8E5M2, b));
  }
  for (uint32_t b : {0x7FC00000u, 0xFF802000u, 0x3F802000u, 0x00002000u})
    ASSERT_EQ(std::bit_cast<uint32_t>(keel_tf32_to_f32(std::bit_cast<float>(b))), expectedWidening(Format::TF32, b));
}

template <typename Carrier>
void expectBulkEqualsScalar(void (*narrow)(const float *, Carrier *, size_t),
                            Carrier (*scalarNarrow)(float),
                            void (*widen)(const Carrier *, float *, size_t),
                            float (*scalarWiden)(Carrier)) {
  std::mt19937_64 rng(99);
  for (size_t n : {size_t{0}, size_t{1}, size_t{7}, size_t{8}, size_t{33}, size_t{4099}}) {
    std::vector<float> in(n);
    for (float &x : in)
      x = std::bit_cast<float>(static_cast<uint32_t>(rng()));
    std::vector<Carrier> narrowed(n + 1, Carrier{});
    narrowed[n] = Carrier(0x5A); // a guard past the end
    narrow(in.data(), narrowed.data(), n);
    std::vector<float> widened(n);
    widen(narrowed.data(), widened.data(), n);
    for (size_t i = 0; i < n; ++i) {
      ASSERT_EQ(std::memcmp(&narrowed[i], std::array<Carrier, 1>{scalarNarrow(in[i])}.data(), sizeof(Carrier)), 0) << i;
      ASSERT_EQ(std::bit_cast<uint32_t>(widened[i]), std::bit_cast<uint32_t>(scalarWiden(narrowed[i]))) << i;
    }
    EXPECT_EQ(narrowed[n], Carrier(0x5A)) << "bulk conversion wrote past the end";
  }
}

TEST(HelpersTest, BulkEqualsScalarForEveryLength) {
  expectBulkEqualsScalar<uint16_t>(keel_f32_to_f16_array, keel_f32_to_f16, keel_f16_to_f32_array, keel_f16_to_f32);
  expectBulkEqualsScalar<uint16_t>(keel_f32_to_bf16_array, keel_f32_to_bf16, keel_bf16_to_f32_array, keel_bf16_to_f32);
  expectBulkEqualsScalar<float>(keel_f32_to_tf32_array, keel_f32_to_tf32, keel_tf32_to_f32_array, keel_tf32_to_f32);
  expectBulkEqualsScalar<uint8_t>(keel_f32_to_fp8e4m3fn_array, keel_f32_to_fp8e4m3fn, keel_fp8e4m3fn_to_f32_array, keel_fp8e4m3fn_to_f32);
  expectBulkEqualsScalar<uint8_t>(keel_f32_to_fp8e5m2_array, keel_f32_to_fp8e5m2, keel_fp8e5m2_to_f32_array, keel_fp8e5m2_to_f32);
}

TEST(HelpersTest, ArithmeticHelpersAgreeWithMpfr) {
  std::mt19937_64 rng(5);
  for (int i = 0; i < 20000; ++i) {
    uint16_t a = uint16_t(rng()), b = uint16_t(rng());
    ASSERT_EQ(keel_f16_add(a, b), ref::mpfrArith(Format::F16, ArithOp::Add, a, b));
    ASSERT_EQ(keel_f16_div(a, b), ref::mpfrArith(Format::F16, ArithOp::Div, a, b));
    ASSERT_EQ(keel_bf16_mul(a, b), ref::mpfrArith(Format::BF16, ArithOp::Mul, a, b));
    ASSERT_EQ(keel_bf16_sub(a, b), ref::mpfrArith(Format::BF16, ArithOp::Sub, a, b));
    uint32_t x = uint32_t(rng()) & 0xFFFFE000u, y = uint32_t(rng()) & 0xFFFFE000u;
    ASSERT_EQ(std::bit_cast<uint32_t>(keel_tf32_add(std::bit_cast<float>(x), std::bit_cast<float>(y))),
              ref::mpfrArith(Format::TF32, ArithOp::Add, x, y));
  }
}

TEST(HelpersTest, CompareEveryFp8Pair) {
  for (uint32_t a = 0; a < 256; ++a) {
    for (uint32_t b = 0; b < 256; ++b) {
      for (Format f : {Format::FP8E4M3FN, Format::FP8E5M2}) {
        auto cmp = ref::toAP(f, a).compare(ref::toAP(f, b));
        int want = cmp == llvm::APFloat::cmpLessThan      ? KEEL_CMP_LESS
                   : cmp == llvm::APFloat::cmpEqual       ? KEEL_CMP_EQUAL
                   : cmp == llvm::APFloat::cmpGreaterThan ? KEEL_CMP_GREATER
                                                          : KEEL_CMP_UNORDERED;
        int got = f == Format::FP8E4M3FN ? keel_fp8e4m3fn_cmp(uint8_t(a), uint8_t(b))
                                         : keel_fp8e5m2_cmp(uint8_t(a), uint8_t(b));
        ASSERT_EQ(got, want) << info(f).name << " " << a << " " << b;
      }
    }
  }
}

#if defined(__x86_64__)
// The helpers promise not to depend on flush-to-zero (FTZ) or
// denormals-are-zero (DAZ), which a host program may have set. Run the
// conversions with both on and check them against the references; this
// also takes keel_f32_to_f16_array off its F16C path.
TEST(HelpersTest, FlushToZeroModesChangeNothing) {
  const unsigned saved = _mm_getcsr();
  _mm_setcsr(saved | (1u << 15) | (1u << 6)); // FTZ | DAZ
  std::vector<uint32_t> f32 = stratifiedF32();
  std::vector<float> in(f32.size());
  for (size_t i = 0; i < f32.size(); ++i)
    in[i] = std::bit_cast<float>(f32[i]);
  std::vector<uint16_t> halves(in.size()), bhalves(in.size());
  keel_f32_to_f16_array(in.data(), halves.data(), in.size());
  keel_f32_to_bf16_array(in.data(), bhalves.data(), in.size());
  std::vector<uint32_t> widened(0x10000), bwidened(0x10000);
  std::vector<double> wide64(0x10000), bwide64(0x10000);
  for (uint32_t b = 0; b < 0x10000; ++b) {
    widened[b] = std::bit_cast<uint32_t>(keel_f16_to_f32(uint16_t(b)));
    bwidened[b] = std::bit_cast<uint32_t>(keel_bf16_to_f32(uint16_t(b)));
    wide64[b] = keel_f16_to_f64(uint16_t(b));
    bwide64[b] = keel_bf16_to_f64(uint16_t(b));
  }
  uint16_t tinyProduct = keel_bf16_mul(0x0001, 0x3F00); // 2^-133 * 0.5: a tie, to 0
  uint16_t tinySum = keel_bf16_add(0x0001, 0x0002);     // 3 * 2^-133, exact
  _mm_setcsr(saved);

  bool d = false;
  for (size_t i = 0; i < f32.size(); ++i) {
    ASSERT_EQ(halves[i], ref::apConvert(Format::F32, Format::F16, f32[i], d)) << std::hex << f32[i];
    ASSERT_EQ(bhalves[i], ref::apConvert(Format::F32, Format::BF16, f32[i], d)) << std::hex << f32[i];
  }
  for (uint32_t b = 0; b < 0x10000; ++b) {
    ASSERT_EQ(widened[b], expectedWidening(Format::F16, b)) << b;
    ASSERT_EQ(bwidened[b], expectedWidening(Format::BF16, b)) << b;
    double e16 = ref::exactValue(Format::F16, b), e = ref::exactValue(Format::BF16, b);
    ASSERT_TRUE(std::isnan(e16) ? std::isnan(wide64[b]) : wide64[b] == e16) << b;
    ASSERT_TRUE(std::isnan(e) ? std::isnan(bwide64[b]) : bwide64[b] == e) << b;
  }
  EXPECT_EQ(tinyProduct, 0x0000u);
  EXPECT_EQ(tinySum, 0x0003u);
}
#endif

} // namespace
