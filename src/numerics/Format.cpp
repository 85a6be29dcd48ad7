//===- Format.cpp - Format table, unpacking and the rounding routine -----===//
//
// Rounding is done once, in roundPack, on an exact value. Its steps follow
// IEEE 754-2019 section 4.3.1 (roundTiesToEven) with unbounded exponent first
// and the destination's exponent range applied afterwards:
//   1. the quantum (weight of the last kept bit) is fixed by the exponent of
//      the exact value, but never below the subnormal quantum;
//   2. the bits under the quantum decide: above half up, below half down,
//      exactly half to the even neighbour;
//   3. a carry out of the significand moves to the next binade;
//   4. a result past the largest finite value overflows: to infinity, or to
//      the largest finite value for fp8e4m3fn (saturation).
//
//===----------------------------------------------------------------------===//
#include "Exact.h"
#include "FastConvert.h"

#include <array>
#include <bit>
#include <cassert>
#include <cmath>
#include <cstring>

namespace keel::fp {

namespace {
// clang-format off
constexpr std::array<FormatInfo, kNumFormats> kFormats = {{
  //  format              name         exp frac bias width shift inf    low
  {Format::F16,       "f16",        5, 10,  15,  16,  0, true,  true},
  {Format::BF16,      "bf16",       8,  7, 127,  16,  0, true,  true},
  {Format::TF32,      "tf32",       8, 10, 127,  32, 13, true,  true},
  {Format::FP8E4M3FN, "fp8e4m3fn",  4,  3,   7,   8,  0, false, true},
  {Format::FP8E5M2,   "fp8e5m2",    5,  2,  15,   8,  0, true,  true},
  {Format::F32,       "f32",        8, 23, 127,  32,  0, true,  false},
  {Format::F64,       "f64",       11, 52, 1023, 64,  0, true,  false},
}};
// clang-format on
constexpr std::array<Format, kNumFormats> kAll = {
    Format::F16, Format::BF16, Format::TF32, Format::FP8E4M3FN,
    Format::FP8E5M2, Format::F32, Format::F64};

uint64_t widthMask(const FormatInfo &fi) {
  return fi.storageBits == 64 ? ~uint64_t{0}
                              : (uint64_t{1} << fi.storageBits) - 1;
}
uint64_t exponentField(const FormatInfo &fi) {
  return (uint64_t{1} << fi.exponentBits) - 1;
}
uint64_t fractionField(const FormatInfo &fi) {
  return (uint64_t{1} << fi.fractionBits) - 1;
}
uint64_t packFields(const FormatInfo &fi, bool negative, uint64_t biased,
                    uint64_t fraction) {
  uint64_t bits = (biased << (fi.fractionBits + fi.fractionShift)) |
                  (fraction << fi.fractionShift);
  return negative ? bits | fi.signMask() : bits;
}
} // namespace

const FormatInfo &info(Format f) { return kFormats[static_cast<size_t>(f)]; }
std::span<const Format> allFormats() { return kAll; }
std::span<const Format> lowPrecisionFormats() {
  return std::span<const Format>(kAll).first(5);
}

std::optional<Format> parseFormat(std::string_view name) {
  for (const FormatInfo &fi : kFormats)
    if (fi.name == name)
      return fi.format;
  return std::nullopt;
}

std::string_view className(FpClass c) {
  switch (c) {
  case FpClass::Zero: return "zero";
  case FpClass::Subnormal: return "subnormal";
  case FpClass::Normal: return "normal";
  case FpClass::Infinity: return "inf";
  case FpClass::NaN: return "nan";
  }
  return "?";
}

//===-- Special encodings ------------------------------------------------===//

uint64_t canonicalNaN(Format f, bool negative) {
  const FormatInfo &fi = info(f);
  // IEEE formats: all-ones exponent with the quiet bit; fp8e4m3fn: the only
  // NaN pattern, all-ones exponent and fraction.
  uint64_t fraction = fi.hasInfinity ? uint64_t{1} << (fi.fractionBits - 1)
                                     : fractionField(fi);
  return packFields(fi, negative, exponentField(fi), fraction);
}

uint64_t infinity(Format f, bool negative) {
  const FormatInfo &fi = info(f);
  assert(fi.hasInfinity && "format has no infinity");
  return packFields(fi, negative, exponentField(fi), 0);
}

uint64_t largestFinite(Format f, bool negative) {
  const FormatInfo &fi = info(f);
  if (fi.hasInfinity)
    return packFields(fi, negative, exponentField(fi) - 1, fractionField(fi));
  return packFields(fi, negative, exponentField(fi), fractionField(fi) - 1);
}

uint64_t smallestNormal(Format f) { return packFields(info(f), false, 1, 0); }
uint64_t smallestSubnormal(Format f) { return packFields(info(f), false, 0, 1); }
uint64_t epsilon(Format f) {
  const FormatInfo &fi = info(f);
  return packFields(fi, false, static_cast<uint64_t>(fi.bias - fi.fractionBits), 0);
}

//===-- Classification ---------------------------------------------------===//

bool isValidEncoding(Format f, uint64_t bits) {
  const FormatInfo &fi = info(f);
  if (bits & ~widthMask(fi))
    return false;
  uint64_t lowBits = (uint64_t{1} << fi.fractionShift) - 1;
  return (bits & lowBits) == 0;
}

bool signBit(Format f, uint64_t bits) { return (bits & info(f).signMask()) != 0; }

FpClass classify(Format f, uint64_t bits) { return detail::unpack(f, bits).cls; }

namespace detail {

Unpacked unpack(Format f, uint64_t bits) {
  if (f == Format::TF32)
    f = Format::F32; // the carrier's value; see Exact.h
  const FormatInfo &fi = info(f);
  Unpacked u;
  u.negative = signBit(f, bits);
  uint64_t biased = (bits >> fi.fractionBits) & exponentField(fi);
  uint64_t fraction = bits & fractionField(fi);
  if (biased == exponentField(fi)) {
    if (fi.hasInfinity) {
      u.cls = fraction ? FpClass::NaN : FpClass::Infinity;
      return u;
    }
    if (fraction == fractionField(fi)) {
      u.cls = FpClass::NaN;
      return u;
    }
  }
  if (biased == 0) {
    u.cls = fraction ? FpClass::Subnormal : FpClass::Zero;
    u.mantissa = fraction;
    u.exponent = fi.minExponent() - fi.fractionBits;
    return u;
  }
  u.cls = FpClass::Normal;
  u.mantissa = fraction | (uint64_t{1} << fi.fractionBits);
  u.exponent = static_cast<int>(biased) - fi.bias - fi.fractionBits;
  return u;
}

uint64_t packZero(Format f, bool negative) {
  return packFields(info(f), negative, 0, 0);
}

uint64_t packInfinity(Format f, bool negative) {
  return info(f).hasInfinity ? infinity(f, negative) : largestFinite(f, negative);
}

uint64_t roundPack(Format f, bool negative, uint64_t mantissa, int exponent,
                   bool sticky, bool *inexact) {
  const FormatInfo &fi = info(f);
  bool lost = sticky; // whether any part of the value was discarded
  auto done = [&](uint64_t bits) {
    if (inexact)
      *inexact = lost;
    return bits;
  };
  if (mantissa == 0) {
    assert(!sticky && "sticky bits need a nonzero mantissa above them");
    return done(packZero(f, negative));
  }
  const int p = fi.precision();
  // Exponent of the leading bit, and the quantum of the result (step 1).
  int lead = exponent + std::bit_width(mantissa) - 1;
  int quantum = std::max(lead, fi.minExponent()) - (p - 1);
  int shift = quantum - exponent; // bits of the mantissa under the quantum
  uint64_t kept;
  if (shift <= 0) {
    assert(!sticky && "sticky value without guard bits cannot be rounded");
    kept = mantissa << -shift; // exact: fewer than p significant bits
  } else if (shift > 64) {
    kept = 0; // the whole value is below half a quantum
    lost = true;
  } else {
    // Step 2: compare the discarded part against half a quantum.
    uint64_t rest = shift == 64 ? mantissa : mantissa & ((uint64_t{1} << shift) - 1);
    uint64_t half = uint64_t{1} << (shift - 1);
    kept = shift == 64 ? 0 : mantissa >> shift;
    bool up = rest > half || (rest == half && (sticky || (kept & 1)));
    kept += up;
    lost |= rest != 0;
  }
  // Step 3: a carry out of the significand.
  if (kept >> p) {
    kept >>= 1;
    ++quantum;
  }
  if (kept == 0)
    return done(packZero(f, negative));
  const uint64_t hidden = uint64_t{1} << (p - 1);
  if (kept < hidden) // subnormal: the quantum is the subnormal quantum
    return done(packFields(fi, negative, 0, kept));
  // Step 4: overflow.
  int resultExponent = quantum + p - 1;
  uint64_t fraction = kept - hidden;
  bool pastTop = resultExponent > fi.maxExponent() ||
                 (!fi.hasInfinity && resultExponent == fi.maxExponent() &&
                  fraction == fractionField(fi));
  if (pastTop) {
    lost = true;
    return done(packInfinity(f, negative));
  }
  return done(packFields(fi, negative,
                         static_cast<uint64_t>(resultExponent + fi.bias), fraction));
}

uint64_t packUnpacked(Format to, const Unpacked &u) {
  switch (u.cls) {
  case FpClass::NaN: return canonicalNaN(to, u.negative);
  case FpClass::Infinity: return packInfinity(to, u.negative);
  case FpClass::Zero: return packZero(to, u.negative);
  case FpClass::Subnormal:
  case FpClass::Normal: return roundPack(to, u.negative, u.mantissa, u.exponent);
  }
  return canonicalNaN(to, u.negative);
}

} // namespace detail

//===-- Encoding and decoding --------------------------------------------===//

uint64_t fromF64(Format to, double v) {
  return convert(Format::F64, to, std::bit_cast<uint64_t>(v));
}
uint64_t fromF32(Format to, float v) {
  return convert(Format::F32, to, std::bit_cast<uint32_t>(v));
}
uint64_t fromI64(Format to, int64_t v) {
  // The magnitude of INT64_MIN is 2^63, which fits in uint64_t.
  uint64_t magnitude = v < 0 ? uint64_t{0} - static_cast<uint64_t>(v)
                             : static_cast<uint64_t>(v);
  return detail::roundPack(to, v < 0, magnitude, 0);
}
uint64_t fromU64(Format to, uint64_t v) { return detail::roundPack(to, false, v, 0); }

uint64_t convert(Format from, Format to, uint64_t bits) {
  return detail::packUnpacked(to, detail::unpack(from, bits));
}

float toF32(Format from, uint64_t bits) {
  // The exact widening kernels (checked against convert on every encoding).
  uint32_t w = static_cast<uint32_t>(bits);
  switch (from) {
  case Format::F16: return std::bit_cast<float>(detail::f16ToF32(static_cast<uint16_t>(w)));
  case Format::BF16: return std::bit_cast<float>(detail::bf16ToF32(static_cast<uint16_t>(w)));
  case Format::TF32:
  case Format::F32: return std::bit_cast<float>(detail::tf32ToF32(w)); // NaN canonicalized
  case Format::FP8E4M3FN: return std::bit_cast<float>(detail::fp8e4m3fnToF32Table()[w & 0xFF]);
  case Format::FP8E5M2: return std::bit_cast<float>(detail::fp8e5m2ToF32Table()[w & 0xFF]);
  case Format::F64: break;
  }
  return std::bit_cast<float>(static_cast<uint32_t>(convert(from, Format::F32, bits)));
}

double toF64(Format from, uint64_t bits) {
  if (from == Format::F64)
    return std::bit_cast<double>(convert(from, Format::F64, bits)); // NaN canonicalized
  // Widening f32 -> f64 is exact, and a canonical f32 NaN becomes the
  // canonical f64 NaN of the same sign. f32 subnormals (bf16, tf32 and f32
  // values below 2^-126) take the exact integer route instead, so a
  // denormals-are-zero mode set by a host program cannot change them.
  float f = toF32(from, bits);
  uint32_t w = std::bit_cast<uint32_t>(f);
  if ((w & 0x7F800000u) == 0 && (w & 0x007FFFFFu) != 0)
    return std::bit_cast<double>(convert(Format::F32, Format::F64, w));
  return static_cast<double>(f);
}

//===-- Comparison -------------------------------------------------------===//

Ordering compare(Format f, uint64_t a, uint64_t b) {
  // Every format embeds exactly in f64, where the hardware compares by IEEE
  // rules (NaN unordered, -0 == +0).
  double x = toF64(f, a), y = toF64(f, b);
  if (x < y) return Ordering::Less;
  if (x > y) return Ordering::Greater;
  if (x == y) return Ordering::Equal;
  return Ordering::Unordered;
}

} // namespace keel::fp
