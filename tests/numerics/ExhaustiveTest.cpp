//===- ExhaustiveTest.cpp - All 2^32 f32 inputs, large arithmetic sweeps -===//
//
// Label "exhaustive". The fast f32 kernels behind the helpers against the
// library's general rounding routine (itself checked against APFloat and
// MPFR in the crosscheck tests) for every one of the 2^32 f32 encodings, and
// f16/bf16 arithmetic against APFloat for every first operand.
//
//===----------------------------------------------------------------------===//
#include "Reference.h"
#include "FastConvert.h"
#include "keel/numerics/Helpers.h"

#include <gtest/gtest.h>
#include <initializer_list>
#include <random>
#include <vector>

using namespace keel::fp;

namespace {

/// Every f32 encoding through each of `bulks`, against `convert` (computed
/// once per input for all of them).
template <typename Carrier>
void sweepAllF32(Format to, std::initializer_list<void (*)(const float *, Carrier *, size_t)> bulks) {
  constexpr size_t kChunk = 1 << 20;
  std::vector<float> in(kChunk);
  std::vector<std::vector<Carrier>> out(bulks.size(), std::vector<Carrier>(kChunk));
  for (uint64_t start = 0; start < (uint64_t{1} << 32); start += kChunk) {
    for (size_t i = 0; i < kChunk; ++i)
      in[i] = std::bit_cast<float>(static_cast<uint32_t>(start + i));
    size_t b = 0;
    for (auto *bulk : bulks)
      bulk(in.data(), out[b++].data(), kChunk);
    for (size_t i = 0; i < kChunk; ++i) {
      uint64_t want = convert(Format::F32, to, start + i);
      for (b = 0; b < bulks.size(); ++b) {
        uint64_t got;
        if constexpr (std::is_same_v<Carrier, float>)
          got = std::bit_cast<uint32_t>(out[b][i]);
        else
          got = out[b][i];
        if (got != want)
          FAIL() << info(to).name << " <- f32 " << ref::hexOf(Format::F32, start + i) << " (kernel " << b
                 << "): got " << ref::hexOf(to, got) << ", want " << ref::hexOf(to, want);
      }
    }
  }
}

// keel_f32_to_f16_array uses F16C where the CPU has it; the portable loop
// is swept beside it, so machines without F16C are covered by the same
// evidence.
TEST(ExhaustiveTest, AllF32ToF16) {
  sweepAllF32<uint16_t>(Format::F16, {keel_f32_to_f16_array, detail::f32ToF16ArrayPortable});
}
TEST(ExhaustiveTest, AllF32ToBf16) { sweepAllF32<uint16_t>(Format::BF16, {keel_f32_to_bf16_array}); }
TEST(ExhaustiveTest, AllF32ToTf32) { sweepAllF32<float>(Format::TF32, {keel_f32_to_tf32_array}); }
TEST(ExhaustiveTest, AllF32ToFp8e4m3fn) { sweepAllF32<uint8_t>(Format::FP8E4M3FN, {keel_f32_to_fp8e4m3fn_array}); }
TEST(ExhaustiveTest, AllF32ToFp8e5m2) { sweepAllF32<uint8_t>(Format::FP8E5M2, {keel_f32_to_fp8e5m2_array}); }

/// Every first operand against 96 second operands (specials and random),
/// all four operations, against APFloat's correctly rounded arithmetic.
void sweepArithmetic(Format f) {
  std::mt19937_64 rng(static_cast<uint64_t>(f) + 1);
  std::vector<uint64_t> seconds = {0x0000, 0x8000, 0x0001, 0x3C00, 0xBC00, 0x7C00, 0x7E00};
  if (f == Format::BF16)
    seconds = {0x0000, 0x8000, 0x0001, 0x3F80, 0xBF80, 0x7F80, 0x7FC0};
  while (seconds.size() < 96)
    seconds.push_back(rng() & 0xFFFF);
  auto rm = llvm::APFloat::rmNearestTiesToEven;
  for (uint64_t a = 0; a < 0x10000; ++a) {
    for (uint64_t b : seconds) {
      for (ArithOp op : {ArithOp::Add, ArithOp::Sub, ArithOp::Mul, ArithOp::Div}) {
        llvm::APFloat x = ref::toAP(f, a), y = ref::toAP(f, b);
        uint64_t want;
        if (x.isNaN() || y.isNaN()) {
          want = ref::specCanonicalNaN(f, x.isNaN() ? x.isNegative() : y.isNegative());
        } else {
          switch (op) {
          case ArithOp::Add: x.add(y, rm); break;
          case ArithOp::Sub: x.subtract(y, rm); break;
          case ArithOp::Mul: x.multiply(y, rm); break;
          case ArithOp::Div: x.divide(y, rm); break;
          }
          want = x.isNaN() ? ref::specCanonicalNaN(f, false) : ref::fromAP(f, x);
        }
        uint64_t got = arith(f, op, a, b);
        if (got != want)
          FAIL() << info(f).name << " " << ref::hexOf(f, a) << " " << arithOpName(op) << " "
                 << ref::hexOf(f, b) << ": got " << ref::hexOf(f, got) << ", want "
                 << ref::hexOf(f, want);
      }
    }
  }
}

TEST(ExhaustiveTest, F16ArithmeticEveryFirstOperand) { sweepArithmetic(Format::F16); }
TEST(ExhaustiveTest, Bf16ArithmeticEveryFirstOperand) { sweepArithmetic(Format::BF16); }

} // namespace
