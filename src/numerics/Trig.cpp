//===- Trig.cpp - sin and cos: exact argument reduction, deterministic ----===//
//
// sin and cos of every double, from IEEE f64 operations and 64-bit integer
// arithmetic only (no libm), so every machine gives the same bits:
//
//  1. Reduction: x = q * pi/2 + r with |r| <= pi/4 (a little more at most),
//     q known modulo 4. |x| <= pi/4 is its own r. Every other finite x is
//     reduced by Payne and Hanek's method: x = m * 2^s (m a 53-bit
//     integer) times the 192 bits of 2/pi that matter at that exponent
//     (bits above give multiples of 4; bits below change the product by
//     less than 2^-137), an exact 245-bit integer product whose top bits
//     are q and whose next 190 bits are the fraction r / (pi/2). The
//     nearest a double comes to a multiple of pi/2 leaves about 61 leading
//     zeros in that fraction, so r keeps at least 106 correct bits; it is
//     carried as a double-double.
//  2. Kernels: sin(r) = r - r^3/6 + r^5 P(r^2) and cos(r) = 1 - r^2/2 +
//     r^4/24 - r^6 Q(r^2), the leading terms in double-double, P and Q
//     Taylor series in double truncated where the next term is below 2^-70
//     of the result, and r's low part through the derivative. The result
//     is a double-double within about 2^-62 of the true value (relative).
//  3. f64: its high part. f32: a fast path in double (below), and where
//     that cannot decide, the double-double rounded once to f32 by its
//     distance to the nearest f32 midpoint, so that the f32 forms are
//     correctly rounded (tests/numerics: all 2^32 inputs against MPFR).
//
//===----------------------------------------------------------------------===//
#include "keel/numerics/Math.h"

#include "DoubleDouble.h"

#include <bit>
#include <cstdint>
#include <limits>

namespace {

using namespace keel::fp::dd;
using U128 = unsigned __int128;

constexpr double kNaN = std::numeric_limits<double>::quiet_NaN(); // 0x7FF8000000000000

/// floor(2/pi * 2^1344), most significant word first (computed from
/// Machin's formula for pi in exact integer arithmetic).
constexpr int kTwoOverPiBits = 1344;
constexpr uint64_t kTwoOverPi[kTwoOverPiBits / 64] = {
    0xA2F9836E4E441529, 0xFC2757D1F534DDC0, 0xDB6295993C439041,
    0xFE5163ABDEBBC561, 0xB7246E3A424DD2E0, 0x06492EEA09D1921C,
    0xFE1DEB1CB129A73E, 0xE88235F52EBB4484, 0xE99C7026B45F7E41,
    0x3991D639835339F4, 0x9C845F8BBDF9283B, 0x1FF897FFDE05980F,
    0xEF2F118B5A0A6D1F, 0x6D367ECF27CB09B7, 0x4F463F669E5FEA2D,
    0x7527BAC7EBE5F17B, 0x3D0739F78A5292EA, 0x6BFB5FB11F8D5D08,
    0x56033046FC7B6BAB, 0xF0CFBC209AF4361D, 0xA9E391615EE61B08,
};

/// pi/2 as a double-double.
constexpr DD kPiOver2 = {0x1.921fb54442d18p+0, 0x1.1a62633145c07p-54};
constexpr DD kSixth = {0x1.5555555555555p-3, 0x1.5555555555555p-57};
constexpr DD kTwentyFourth = {0x1.5555555555555p-5, 0x1.5555555555555p-59};

uint64_t twoOverPiWord(int i) { return i >= 0 && i < kTwoOverPiBits / 64 ? kTwoOverPi[i] : 0; }

/// Bits [low, low + 63] of floor(2/pi * 2^1344) as one word (bit 0 is the
/// integer's least significant); positions above the table are zero.
/// low >= 0.
uint64_t twoOverPiBits(int low) {
  int fromTop = kTwoOverPiBits - 1 - low;
  if (fromTop < 0)
    return 0;
  int i = fromTop / 64;
  int offset = low - (kTwoOverPiBits - 64 * (i + 1)); // 0..63 within word i
  uint64_t w = twoOverPiWord(i) >> offset;
  if (offset)
    w |= twoOverPiWord(i - 1) << (64 - offset);
  return w;
}

/// 2^k for -1022 <= k <= 1023.
double pow2(int k) { return std::bit_cast<double>(static_cast<uint64_t>(k + 1023) << 52); }

int leadingZeros(uint64_t w) { return w ? std::countl_zero(w) : 64; }

struct Reduced {
  unsigned quadrant; ///< q modulo 4
  DD r;
};

/// x = q * pi/2 + r for finite x > pi/4 (Payne-Hanek, step 1 above).
Reduced reduceLarge(double x) {
  uint64_t bits = std::bit_cast<uint64_t>(x);
  int e = static_cast<int>(bits >> 52) & 0x7FF;
  uint64_t m = (bits & ((uint64_t{1} << 52) - 1)) | (uint64_t{1} << 52);
  int s = e - 1075;                    // x = m * 2^s
  int l = kTwoOverPiBits - s;          // x * 2/pi = m * T * 2^-l
  int low = l + 2 - 192;               // the window: T's bits [low, l + 1]
  uint64_t w2 = twoOverPiBits(low), w1 = twoOverPiBits(low + 64), w0 = twoOverPiBits(low + 128);
  // P = m * window (245 bits) = x * 2/pi * 2^190, modulo 4 * 2^190.
  U128 a = static_cast<U128>(m) * w2;
  uint64_t p0 = static_cast<uint64_t>(a);
  U128 b = static_cast<U128>(m) * w1 + (a >> 64);
  uint64_t p1 = static_cast<uint64_t>(b);
  U128 c = static_cast<U128>(m) * w0 + (b >> 64);
  uint64_t p2 = static_cast<uint64_t>(c);
  unsigned q = static_cast<unsigned>(p2 >> 62) & 3;
  // The fraction, bits 189..0: f2 (62 bits), f1, f0. At or above 1/2, the
  // next multiple is nearer: q + 1 and the fraction 2^190 - f, negative.
  constexpr uint64_t kLow62 = (uint64_t{1} << 62) - 1;
  uint64_t f2 = p2 & kLow62, f1 = p1, f0 = p0;
  bool negative = (f2 >> 61) & 1;
  if (negative) {
    q = (q + 1) & 3;
    f0 = ~f0 + 1;
    uint64_t carry = f0 == 0;
    f1 = ~f1 + carry;
    carry = carry && f1 == 0;
    f2 = (~f2 + carry) & kLow62;
  }
  // Left-aligned in 192 bits (g = f * 4), then normalized.
  uint64_t g2 = (f2 << 2) | (f1 >> 62), g1 = (f1 << 2) | (f0 >> 62), g0 = f0 << 2;
  int lz = 0;
  while (g2 == 0 && lz < 192) { // whole words (never more than one for a double)
    g2 = g1;
    g1 = g0;
    g0 = 0;
    lz += 64;
  }
  if (g2 == 0)
    return {q, {0.0, 0.0}};
  int z = leadingZeros(g2);
  if (z) {
    g2 = (g2 << z) | (g1 >> (64 - z));
    g1 = (g1 << z) | (g0 >> (64 - z));
  }
  lz += z;
  // f = g * 2^(-192 - lz): its top 53 bits and the next 53.
  double hi = static_cast<double>(g2 >> 11) * pow2(-53 - lz);
  double lo = static_cast<double>(((g2 & 0x7FF) << 42) | (g1 >> 22)) * pow2(-106 - lz);
  DD fraction = fastTwoSum(hi, lo);
  DD r = mul(DD{fraction.hi, fraction.lo}, kPiOver2);
  if (negative)
    r = {-r.hi, -r.lo};
  return {q, r};
}

/// |x| reduced: x finite and >= 0.
Reduced reduce(double x) {
  if (x <= 0x1.921fb54442d18p-1) // pi/4 rounded down: its own remainder
    return {0, {x, 0.0}};
  return reduceLarge(x);
}

/// sin(r) for |r| <= ~pi/4 + 2^-50, r = hi + lo.
DD sinKernel(DD r) {
  double h = r.hi, z = h * h;
  // r^5 P(z): the Taylor terms from r^5 on, in double (below 2^-8 of the
  // result, so a double's rounding is below 2^-60 of it).
  constexpr double c[] = {1.0 / 120,           -1.0 / 5040,           1.0 / 362880,
                          -1.0 / 39916800,     1.0 / 6227020800.0,    -1.0 / 1307674368000.0,
                          1.0 / 355687428096000.0, -1.0 / 121645100408832000.0, 1.0 / 51090942171709440000.0};
  double p = c[8];
  for (int i = 7; i >= 0; --i)
    p = c[i] + z * p;
  double tail = (h * z) * z * p;
  DD cube = mul(twoProd(h, h), h);
  DD third = mul(cube, DD{-kSixth.hi, -kSixth.lo});
  // sin(h + lo) = sin(h) + lo cos(h) + O(lo^2).
  double derivative = r.lo * (1.0 - z * 0.5 + z * z * (1.0 / 24));
  DD s = add(DD{h, 0.0}, third);
  return add(s, DD{tail + derivative, 0.0});
}

/// cos(r) for |r| <= ~pi/4 + 2^-50, r = hi + lo.
DD cosKernel(DD r) {
  double h = r.hi, z = h * h;
  // -r^6 Q(z): the Taylor terms from r^6 on, in double.
  constexpr double c[] = {-1.0 / 720,           1.0 / 40320,           -1.0 / 3628800,
                          1.0 / 479001600,      -1.0 / 87178291200.0,  1.0 / 20922789888000.0,
                          -1.0 / 6402373705728000.0, 1.0 / 2432902008176640000.0};
  double p = c[7];
  for (int i = 6; i >= 0; --i)
    p = c[i] + z * p;
  double tail = (z * z) * z * p;
  DD square = twoProd(h, h);
  DD half = {-square.hi * 0.5, -square.lo * 0.5};
  DD fourth = mul(mul(square, square), kTwentyFourth);
  // cos(h + lo) = cos(h) - lo sin(h) + O(lo^2).
  double derivative = -r.lo * h * (1.0 - z * (1.0 / 6));
  DD s = add(add(DD{1.0, 0.0}, half), fourth);
  return add(s, DD{tail + derivative, 0.0});
}

DD negate(DD v) { return {-v.hi, -v.lo}; }

/// sin(x) for finite nonzero x, as a double-double.
DD sinDD(double x) {
  bool minus = x < 0;
  Reduced red = reduce(minus ? -x : x);
  DD v;
  // Quadrants are modulo 4: odd ones take the cosine, the upper two negate.
  v = (red.quadrant & 1) ? cosKernel(red.r) : sinKernel(red.r);
  if (red.quadrant & 2)
    v = negate(v);
  return minus ? negate(v) : v;
}

/// cos(x) for finite x, as a double-double.
DD cosDD(double x) {
  Reduced red = reduce(x < 0 ? -x : x);
  // cos(x) = sin(x + pi/2): one quadrant on.
  unsigned q = red.quadrant + 1;
  DD v = (q & 1) ? cosKernel(red.r) : sinKernel(red.r);
  return (q & 2) ? negate(v) : v;
}

/// hi + lo rounded once to f32 (|lo| <= ulp(hi) / 2): float(hi), moved to
/// its neighbour when lo carries the value past the midpoint between them.
float roundToF32(DD v) {
  bool minus = v.hi < 0;
  double hi = minus ? -v.hi : v.hi, lo = minus ? -v.lo : v.lo;
  float f = static_cast<float>(hi);
  uint32_t bits = std::bit_cast<uint32_t>(f);
  double diff = (hi - static_cast<double>(f)) + lo; // hi - f is exact
  if (diff > 0 && bits < 0x7F800000u) {
    double up = static_cast<double>(std::bit_cast<float>(bits + 1)) - static_cast<double>(f);
    if (diff > up * 0.5)
      f = std::bit_cast<float>(bits + 1);
  } else if (diff < 0 && bits > 0) {
    double down = static_cast<double>(f) - static_cast<double>(std::bit_cast<float>(bits - 1));
    if (-diff > down * 0.5)
      f = std::bit_cast<float>(bits - 1);
  }
  return minus ? -f : f;
}

//===-- The f32 forms: a double fast path, checked ----------------------===//
//
// An f32 input has 24 significant bits, so its reduction needs a 128-bit
// window of 2/pi (a 152-bit product) and a double remainder, and the
// kernels run in double: the result is within 2^-50 of the true value
// (relative). Rounded to f32 it is correct unless it lies within that
// distance of a midpoint between two floats; there (about one input in
// 2^24) the double-double path above decides.

/// x = q * pi/2 + r for an f32 value x > pi/4, r in double.
void reduceF32(double x, unsigned &q, double &r) {
  uint64_t bits = std::bit_cast<uint64_t>(x);
  int e = static_cast<int>(bits >> 52) & 0x7FF;
  uint64_t m = ((bits & ((uint64_t{1} << 52) - 1)) | (uint64_t{1} << 52)) >> 29; // 24 bits
  int s = e - 1075 + 29;         // x = m * 2^s
  int l = kTwoOverPiBits - s;
  int low = l + 2 - 128;         // the window: T's bits [low, l + 1]
  uint64_t w1 = twoOverPiBits(low), w0 = twoOverPiBits(low + 64);
  U128 a = static_cast<U128>(m) * w1;
  U128 b = static_cast<U128>(m) * w0 + (a >> 64); // P = b * 2^64 + low(a) = x * 2/pi * 2^126
  q = static_cast<unsigned>(b >> 62) & 3;
  U128 f = ((b & ((static_cast<U128>(1) << 62) - 1)) << 64) | static_cast<uint64_t>(a); // 126 bits
  bool negative = (f >> 125) & 1;
  if (negative) {
    q = (q + 1) & 3;
    f = (static_cast<U128>(1) << 126) - f;
  }
  // Its top 64 bits, as a double: within 2^-52 relative, then times pi/2
  // (one more rounding). (f is never 0, pi being irrational; were it, so
  // would r be.)
  if (f == 0) {
    r = 0;
    return;
  }
  uint64_t high = static_cast<uint64_t>(f >> 64);
  int lz = high ? std::countl_zero(high) : 64 + std::countl_zero(static_cast<uint64_t>(f));
  uint64_t top = static_cast<uint64_t>((f << lz) >> 64);
  double fraction = static_cast<double>(top) * pow2(-62 - lz);
  r = fraction * kPiOver2.hi;
  if (negative)
    r = -r;
}

double sinPoly(double r) { // r - r^3/3! + ... - r^19/19!
  constexpr double c[] = {-1.0 / 6,          1.0 / 120,           -1.0 / 5040,          1.0 / 362880,
                          -1.0 / 39916800,   1.0 / 6227020800.0,  -1.0 / 1307674368000.0, 1.0 / 355687428096000.0,
                          -1.0 / 121645100408832000.0};
  double z = r * r, p = c[8];
  for (int i = 7; i >= 0; --i)
    p = c[i] + z * p;
  return r + (r * z) * p;
}

double cosPoly(double r) { // 1 - r^2/2! + ... + r^20/20!
  constexpr double c[] = {1.0 / 24,          -1.0 / 720,          1.0 / 40320,           -1.0 / 3628800,
                          1.0 / 479001600,   -1.0 / 87178291200.0, 1.0 / 20922789888000.0, -1.0 / 6402373705728000.0,
                          1.0 / 2432902008176640000.0};
  double z = r * r, p = c[8];
  for (int i = 7; i >= 0; --i)
    p = c[i] + z * p;
  return (1.0 - z * 0.5) + (z * z) * p;
}

/// Rounds `v` (within 2^-50 of the true value, relative) to f32 into `out`;
/// false, leaving it, when v is too near a midpoint between two floats (or
/// too small) for the rounding to be sure.
bool roundF32Fast(double v, float &out) {
  double a = v < 0 ? -v : v;
  float f = static_cast<float>(a);
  uint32_t bits = std::bit_cast<uint32_t>(f);
  if (bits == 0 || bits >= 0x7F800000u)
    return false;
  double up = static_cast<double>(std::bit_cast<float>(bits + 1)) - static_cast<double>(f);
  double down = static_cast<double>(f) - static_cast<double>(std::bit_cast<float>(bits - 1));
  double diff = a - static_cast<double>(f), margin = a * 0x1p-48;
  if (diff >= 0 ? diff + margin >= up * 0.5 : -diff + margin >= down * 0.5)
    return false;
  out = v < 0 ? -f : f;
  return true;
}

/// sin (cosine: false) of a finite nonzero f32 value.
float trigF32(float x, bool sine) {
  double d = x, a = d < 0 ? -d : d;
  unsigned q = 0;
  double r = a;
  if (a > 0x1.921fb54442d18p-1)
    reduceF32(a, q, r);
  if (!sine)
    q += 1; // cos(x) = sin(x + pi/2)
  double v = (q & 1) ? cosPoly(r) : sinPoly(r);
  if (q & 2)
    v = -v;
  if (sine && d < 0)
    v = -v;
  float f;
  if (roundF32Fast(v, f))
    return f;
  return roundToF32(sine ? sinDD(d) : cosDD(d));
}

bool isNaN(double x) { return x != x; }
bool isInfinite(double x) { return x == std::numeric_limits<double>::infinity() || x == -std::numeric_limits<double>::infinity(); }

} // namespace

extern "C" {

double keel_sin_f64(double x) {
  if (isNaN(x))
    return x + x; // quiet, payload kept
  if (isInfinite(x))
    return kNaN;
  if (x == 0)
    return x; // the sign of zero kept
  return sinDD(x).hi;
}

double keel_cos_f64(double x) {
  if (isNaN(x))
    return x + x;
  if (isInfinite(x))
    return kNaN;
  return cosDD(x).hi;
}

float keel_sin_f32(float x) {
  double d = x;
  if (isNaN(d) || isInfinite(d) || d == 0)
    return static_cast<float>(keel_sin_f64(d));
  return trigF32(x, true);
}

float keel_cos_f32(float x) {
  double d = x;
  if (isNaN(d) || isInfinite(d))
    return static_cast<float>(keel_cos_f64(d));
  if (d == 0)
    return 1.0f;
  return trigF32(x, false);
}

} // extern "C"
