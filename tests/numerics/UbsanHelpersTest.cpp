//===- UbsanHelpersTest.cpp - The helpers under UndefinedBehaviorSanitizer ===//
//
// This test and its own copy of the numerics library are compiled with
// -fsanitize=undefined -fno-sanitize-recover=all, so any undefined behaviour
// in a helper (a shift past the width, a signed overflow, a bad cast) aborts
// the test. It drives every helper over every f16, bf16 and fp8 encoding and
// over f32/f64 inputs at every exponent; the values themselves are checked
// by the other numerics tests.
//
//===----------------------------------------------------------------------===//
#include "keel/numerics/Helpers.h"

#include <bit>
#include <cstdio>
#include <gtest/gtest.h>
#include <random>
#include <vector>

namespace {

TEST(UbsanHelpersTest, EveryHelperOnEveryClassOfInput) {
  uint64_t sink = 0; // every result feeds the final check, so no call is dropped
  for (uint32_t b = 0; b < 0x10000; ++b) {
    uint16_t h = static_cast<uint16_t>(b);
    sink += std::bit_cast<uint32_t>(keel_f16_to_f32(h)) + std::bit_cast<uint32_t>(keel_bf16_to_f32(h));
    sink += static_cast<uint64_t>(keel_f16_to_f64(h) == 0) + static_cast<uint64_t>(keel_f16_cmp(h, 0x3c00));
    sink += keel_f16_add(h, 0x3c00) + keel_f16_div(h, h) + keel_bf16_mul(h, 0x7f7f) + keel_bf16_sub(h, h);
  }
  for (uint32_t b = 0; b < 256; ++b) {
    uint8_t e = static_cast<uint8_t>(b);
    sink += std::bit_cast<uint32_t>(keel_fp8e4m3fn_to_f32(e)) + std::bit_cast<uint32_t>(keel_fp8e5m2_to_f32(e));
    sink += static_cast<uint64_t>(keel_fp8e4m3fn_cmp(e, 0x7f) + keel_fp8e5m2_cmp(e, 0x7c));
  }
  std::mt19937_64 rng(1);
  std::vector<float> in;
  for (uint32_t exponent = 0; exponent < 256; ++exponent)
    for (int k = 0; k < 64; ++k)
      in.push_back(std::bit_cast<float>((exponent << 23) | static_cast<uint32_t>(rng() & 0x807FFFFF)));
  std::vector<uint16_t> halves(in.size());
  std::vector<uint8_t> bytes(in.size());
  std::vector<float> floats(in.size());
  keel_f32_to_f16_array(in.data(), halves.data(), in.size());
  keel_f32_to_bf16_array(in.data(), halves.data(), in.size());
  keel_f32_to_fp8e4m3fn_array(in.data(), bytes.data(), in.size());
  keel_f32_to_fp8e5m2_array(in.data(), bytes.data(), in.size());
  keel_f32_to_tf32_array(in.data(), floats.data(), in.size());
  keel_f16_to_f32_array(halves.data(), floats.data(), in.size());
  for (float f : in) {
    double d = std::bit_cast<double>(rng());
    sink += keel_f32_to_f16(f) + keel_f64_to_bf16(d) + keel_f64_to_fp8e4m3fn(d) + keel_f64_to_fp8e5m2(d);
    sink += std::bit_cast<uint32_t>(keel_tf32_add(keel_f32_to_tf32(f), keel_f64_to_tf32(d)));
    sink += keel_i64_to_f16(static_cast<int64_t>(rng())) + keel_u64_to_fp8e4m3fn(rng());
  }
  sink += keel_i64_to_bf16(INT64_MIN) + keel_u64_to_f16(UINT64_MAX);
  EXPECT_NE(sink, 0u);
}

} // namespace
