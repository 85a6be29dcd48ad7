//===- FastConvert.h - Branch-free f32 <-> low-precision kernels -*- C++ -*-===//
//
// The per-element kernels behind the bulk helpers and the scalar f32 helpers.
// They compute exactly what convert() computes (the exhaustive tests compare
// all 2^32 f32 inputs), but with integer operations and selects only, so the
// compiler vectorizes the loops that call them. No floating-point operation
// whose result could be subnormal is used, so flush-to-zero and
// denormals-are-zero modes cannot change a result.
//
//===----------------------------------------------------------------------===//
#ifndef KEEL_NUMERICS_FASTCONVERT_H
#define KEEL_NUMERICS_FASTCONVERT_H

#include <array>
#include <bit>
#include <cstddef>
#include <cstdint>

namespace keel::fp::detail {

/// f32 -> a format with a narrower exponent range than f32 (f16, the fp8s).
/// EB/FB/Bias describe the destination; HasInf is false for fp8e4m3fn.
template <int EB, int FB, int Bias, bool HasInf>
inline uint32_t narrowFromF32(uint32_t x) {
  constexpr int kDrop = 23 - FB; // f32 fraction bits dropped in the normal case
  constexpr uint32_t kAllOnesExp = (1u << EB) - 1;
  constexpr int kMaxExp = (HasInf ? int(kAllOnesExp) - 1 : int(kAllOnesExp)) - Bias;
  constexpr uint32_t kMaxFrac = HasInf ? (1u << FB) - 1 : (1u << FB) - 2;
  constexpr uint32_t kMaxFiniteF32 = (uint32_t(kMaxExp + 127) << 23) | (kMaxFrac << kDrop);
  // With infinity, the midpoint above the largest finite value (whose last
  // bit is odd) already rounds to infinity; without, everything from the
  // largest finite value up saturates.
  constexpr uint32_t kOverflowAt = HasInf ? kMaxFiniteF32 + (1u << (kDrop - 1)) : kMaxFiniteF32;
  constexpr uint32_t kOverflowTo = HasInf ? kAllOnesExp << FB : (kAllOnesExp << FB) | kMaxFrac;
  constexpr uint32_t kNaN = HasInf ? (kAllOnesExp << FB) | (1u << (FB - 1)) : (1u << (EB + FB)) - 1;
  // One rounding for normal and subnormal results alike. With m the f32
  // significand (implicit bit set) and E the destination's biased exponent,
  // the kept bits are m >> s with s = kDrop for normal results and one more
  // per binade below the smallest normal (capped at 25, where everything is
  // below half a quantum; f32 subnormal inputs land there too). The kept
  // value, rounded to nearest even, is added to max(E - 1, 0) << FB: for a
  // normal result its implicit bit supplies the missing 1 of the exponent,
  // and a carry out of the fraction moves into the exponent by itself.
  uint32_t sign = (x >> 31) << (EB + FB);
  uint32_t a = x & 0x7FFFFFFFu;
  int biased = int(a >> 23) - (127 - Bias); // the destination's exponent
  uint32_t m = (a & 0x7FFFFFu) | 0x800000u;
  int s = kDrop + (biased < 1 ? 1 - biased : 0);
  s = s > 25 ? 25 : s;
  uint32_t kept = m >> s;
  uint32_t discarded = m << (32 - s); // the bits under the quantum, at the top
  kept += uint32_t(discarded > 0x80000000u) | (uint32_t(discarded == 0x80000000u) & kept);
  uint32_t r = (uint32_t(biased > 1 ? biased - 1 : 0) << FB) + kept;
  r = a >= kOverflowAt ? kOverflowTo : r;
  r = a > 0x7F800000u ? kNaN : r;
  return r | sign;
}

inline uint16_t f32ToF16(uint32_t x) { return uint16_t(narrowFromF32<5, 10, 15, true>(x)); }
inline uint8_t f32ToFp8e4m3fn(uint32_t x) { return uint8_t(narrowFromF32<4, 3, 7, false>(x)); }
inline uint8_t f32ToFp8e5m2(uint32_t x) { return uint8_t(narrowFromF32<5, 2, 15, true>(x)); }

/// f32 -> bf16: same exponent range, so rounding the top 16 bits is enough;
/// the carry of a rounded-up all-ones fraction lands in the exponent, and
/// from the largest finite value into infinity.
inline uint16_t f32ToBf16(uint32_t x) {
  uint32_t rounded = (x + 0x7FFFu + ((x >> 16) & 1)) >> 16;
  uint32_t nan = ((x >> 16) & 0x8000u) | 0x7FC0u;
  return uint16_t((x & 0x7FFFFFFFu) > 0x7F800000u ? nan : rounded);
}

/// f32 -> tf32: round away the 13 low fraction bits in place.
inline uint32_t f32ToTf32(uint32_t x) {
  uint32_t rounded = (x + 0xFFFu + ((x >> 13) & 1)) & 0xFFFFE000u;
  uint32_t nan = (x & 0x80000000u) | 0x7FC00000u;
  return (x & 0x7FFFFFFFu) > 0x7F800000u ? nan : rounded;
}

inline uint32_t f16ToF32(uint16_t h) {
  uint32_t sign = uint32_t(h & 0x8000u) << 16;
  uint32_t o = uint32_t(h & 0x7FFFu) << 13; // exponent and fraction, f32-aligned
  uint32_t exp = o & 0x0F800000u;
  uint32_t normal = o + 0x38000000u;        // rebias 15 -> 127
  uint32_t special = o + 0x70000000u;       // exponent 31 -> 255
  // Subnormal: 2^-14 * (1 + m/1024) - 2^-14 = m * 2^-24, an exact
  // subtraction of two normal f32 values whose result is a normal f32.
  uint32_t sub = std::bit_cast<uint32_t>(std::bit_cast<float>(o + 0x38800000u) -
                                         std::bit_cast<float>(0x38800000u));
  uint32_t r = exp == 0 ? sub : normal;
  r = exp == 0x0F800000u ? special : r;
  r = (exp == 0x0F800000u) & ((o & 0x007FE000u) != 0) ? 0x7FC00000u : r;
  return r | sign;
}

inline uint32_t bf16ToF32(uint16_t h) {
  uint32_t nan = (uint32_t(h & 0x8000u) << 16) | 0x7FC00000u;
  return (h & 0x7FFFu) > 0x7F80u ? nan : uint32_t(h) << 16;
}

/// tf32 -> f32 is the identity on values; only NaNs are canonicalized.
inline uint32_t tf32ToF32(uint32_t x) {
  uint32_t nan = (x & 0x80000000u) | 0x7FC00000u;
  return (x & 0x7FFFFFFFu) > 0x7F800000u ? nan : x;
}

/// keel_f32_to_f16_array's portable loop, which it uses where the CPU has
/// no F16C (or flush-to-zero is on); exposed so tests can sweep both.
void f32ToF16ArrayPortable(const float *in, uint16_t *out, size_t n);

/// The 256 f32 encodings of an fp8 format's bytes, indexed by byte.
const std::array<uint32_t, 256> &fp8e4m3fnToF32Table();
const std::array<uint32_t, 256> &fp8e5m2ToF32Table();

} // namespace keel::fp::detail

#endif // KEEL_NUMERICS_FASTCONVERT_H
