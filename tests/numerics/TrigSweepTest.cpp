//===- TrigSweepTest.cpp - sin and cos on every input of every format ----===//
//
// keel_sin_f32 and keel_cos_f32 are correctly rounded: every one of the
// 2^32 f32 encodings is checked (label exhaustive): each x with the sign bit
// clear against the references, and -x by symmetry (correct rounding is
// symmetric, so sin(-x) must be -sin(x) and cos(-x) cos(x), bit for bit;
// the NaNs keep their own payload). The expected value
// comes from glibc's double sin and cos rounded to f32 wherever that
// rounding is decided by a margin far above glibc's error (a few ulps of a
// double), and from GNU MPFR, correctly rounded at f32, everywhere else; for
// |x| < 2^-60, sin(x) is x (its relative deviation x^2/6 < 2^-121 is far
// below half an f32 ulp). NaNs come back quiet with their payload; the
// infinities give the default NaN.
//
// The narrower formats (f16, bf16, tf32, fp8e4m3fn, fp8e5m2) are what the
// compiler computes for them: the input widened exactly to f32, the f32
// function, one rounding to the format. Every encoding of each is checked
// against MPFR's correctly rounded f32 value rounded by APFloat (label
// crosscheck), and how often that differs from rounding the exact value
// directly to the format is printed.
//
//===----------------------------------------------------------------------===//
#include "Reference.h"
#include "keel/numerics/Math.h"

#include <gtest/gtest.h>

#include <atomic>
#include <bit>
#include <cmath>
#include <cstdio>
#include <mutex>
#include <string>
#include <thread>
#include <vector>

using namespace keel::fp;

namespace {

std::mutex mpfrLock; // MPFR's exponent range is process state

/// sin (sine) or cos of an f32 value, correctly rounded by MPFR.
uint32_t mpfrF32(float x, bool sine) {
  std::lock_guard<std::mutex> hold(mpfrLock);
  mpfr_t v;
  mpfr_init2(v, 64);
  mpfr_set_flt(v, x, MPFR_RNDN); // exact
  uint64_t bits = ref::mpfrRound(Format::F32, [&](mpfr_ptr y) {
    return sine ? mpfr_sin(y, v, MPFR_RNDN) : mpfr_cos(y, v, MPFR_RNDN);
  });
  mpfr_clear(v);
  return static_cast<uint32_t>(bits);
}

/// The correctly rounded f32 result for finite nonzero x: glibc's double
/// rounded to f32 where the margin decides it, else MPFR.
uint32_t expectedF32(float x, bool sine) {
  if (sine && std::fabs(x) < 0x1p-60f)
    return std::bit_cast<uint32_t>(x);
  double g = sine ? std::sin(static_cast<double>(x)) : std::cos(static_cast<double>(x));
  double a = std::fabs(g);
  float f = static_cast<float>(a);
  uint32_t bits = std::bit_cast<uint32_t>(f);
  if (a >= 0x1p-126 && bits < 0x7F800000u) {
    double up = static_cast<double>(std::bit_cast<float>(bits + 1)) - static_cast<double>(f);
    double down = static_cast<double>(f) - static_cast<double>(std::bit_cast<float>(bits - 1));
    double diff = a - static_cast<double>(f), margin = a * 0x1p-48; // glibc: within 2^-52 relative
    if (diff >= 0 ? diff + margin < up * 0.5 : -diff + margin < down * 0.5)
      return std::bit_cast<uint32_t>(g < 0 ? -f : f);
  }
  return mpfrF32(x, sine);
}

uint32_t expectedSpecial(float x, bool sine) {
  uint32_t bits = std::bit_cast<uint32_t>(x);
  if (std::isnan(x))
    return bits | 0x00400000u; // quiet, payload kept
  if (std::isinf(x))
    return 0x7FC00000u;
  return sine ? bits : 0x3F800000u; // sin(+-0) = +-0, cos(+-0) = 1
}

void sweepF32(bool sine) {
  constexpr unsigned kThreads = 2;
  constexpr uint64_t kHalf = uint64_t{1} << 31; // the encodings with the sign bit clear
  std::atomic<uint64_t> failures{0}, checked{0};
  std::vector<std::string> firstFailures(kThreads);
  std::vector<std::thread> threads;
  auto function = [sine](float x) { return std::bit_cast<uint32_t>(sine ? keel_sin_f32(x) : keel_cos_f32(x)); };
  for (unsigned t = 0; t < kThreads; ++t)
    threads.emplace_back([&, t] {
      uint64_t mine = 0;
      auto fail = [&](uint32_t b, uint32_t got, uint32_t want) {
        if (mine++ == 0) {
          char text[160];
          std::snprintf(text, sizeof text, "%s(%a) [0x%08x]: got 0x%08x, want 0x%08x", sine ? "sin" : "cos",
                        static_cast<double>(std::bit_cast<float>(b)), b, got, want);
          firstFailures[t] = text;
        }
      };
      for (uint64_t b = kHalf / kThreads * t; b < kHalf / kThreads * (t + 1); ++b) {
        float x = std::bit_cast<float>(static_cast<uint32_t>(b));
        uint32_t got = function(x), mirror = function(-x);
        bool special = std::isnan(x) || std::isinf(x) || x == 0;
        uint32_t want = special ? expectedSpecial(x, sine) : expectedF32(x, sine);
        uint32_t wantMirror = special ? expectedSpecial(-x, sine) : sine ? want ^ 0x80000000u : want;
        if (got != want)
          fail(static_cast<uint32_t>(b), got, want);
        if (mirror != wantMirror)
          fail(static_cast<uint32_t>(b | kHalf), mirror, wantMirror);
      }
      failures += mine;
      checked += 2 * (kHalf / kThreads);
    });
  for (std::thread &t : threads)
    t.join();
  std::printf("%s f32: %llu of %llu inputs differ from the correctly rounded result\n", sine ? "sin" : "cos",
              static_cast<unsigned long long>(failures.load()), static_cast<unsigned long long>(checked.load()));
  EXPECT_EQ(failures.load(), 0u) << firstFailures[0] << " " << firstFailures[1];
}

TEST(TrigSweepTest, EveryF32SinIsCorrectlyRounded) { sweepF32(true); }
TEST(TrigSweepTest, EveryF32CosIsCorrectlyRounded) { sweepF32(false); }

/// Every encoding of a narrower format: Keel's f32 function then one
/// rounding, against MPFR's f32 then APFloat's rounding.
void sweepNarrow(Format f, bool sine) {
  const FormatInfo &fi = info(f);
  uint64_t count = uint64_t{1} << (fi.storageBits - fi.fractionShift); // tf32: its 19 bits
  uint64_t failures = 0, differFromDirect = 0, finite = 0;
  std::string first;
  for (uint64_t i = 0; i < count; ++i) {
    uint64_t bits = i << fi.fractionShift;
    double exact = ref::exactValue(f, bits);
    if (std::isnan(exact) || std::isinf(exact))
      continue;
    ++finite;
    float x = static_cast<float>(exact); // exact: every narrower value is an f32
    uint32_t result = std::bit_cast<uint32_t>(sine ? keel_sin_f32(x) : keel_cos_f32(x));
    uint64_t got = convert(Format::F32, f, result); // what the compiled code does
    bool differed = false;
    uint32_t f32 = x == 0 ? expectedSpecial(x, sine) : mpfrF32(x, sine);
    uint64_t want = ref::apConvert(Format::F32, f, f32, differed);
    if (got != want && failures++ == 0)
      first = ref::hexOf(f, bits) + ": got " + ref::hexOf(f, got) + ", want " + ref::hexOf(f, want);
    mpfr_t v;
    mpfr_init2(v, 64);
    mpfr_set_flt(v, x, MPFR_RNDN);
    uint64_t direct = ref::mpfrRound(f, [&](mpfr_ptr y) { return sine ? mpfr_sin(y, v, MPFR_RNDN) : mpfr_cos(y, v, MPFR_RNDN); });
    mpfr_clear(v);
    differFromDirect += direct != got && x != 0;
  }
  std::printf("%s %s: %llu finite inputs, %llu failures; the f32 result rounded again differs from the exact value "
              "rounded once in %llu\n",
              sine ? "sin" : "cos", std::string(fi.name).c_str(), static_cast<unsigned long long>(finite),
              static_cast<unsigned long long>(failures), static_cast<unsigned long long>(differFromDirect));
  EXPECT_EQ(failures, 0u) << fi.name << " " << first;
}

TEST(TrigSweepTest, EveryNarrowerEncoding) {
  for (Format f : {Format::F16, Format::BF16, Format::TF32, Format::FP8E4M3FN, Format::FP8E5M2})
    for (bool sine : {true, false})
      sweepNarrow(f, sine);
}

} // namespace
