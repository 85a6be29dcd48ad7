//===- Math.cpp - Deterministic elementary functions ----------------------===//
//
// Every function here is built from IEEE f64 +, -, *, / and sqrt in round-
// to-nearest-even, which every IEEE machine computes identically (the
// library is compiled with -ffp-contract=off, so no multiply-add is fused).
// Argument reduction uses Cody-Waite constants; the kernels are Taylor
// series truncated where the next term is below 2^-60 of the result; where
// cancellation would cost bits (pow's logarithm, gelu's 1 + erf for
// negative x) the computation runs in double-double arithmetic (pairs of
// doubles, exact sums and products by Knuth's and Dekker's algorithms).
//
//===----------------------------------------------------------------------===//
#include "keel/numerics/Math.h"

#include "DoubleDouble.h"

#include <array>
#include <bit>
#include <cstddef>
#include <cstdint>
#include <limits>

namespace {

using namespace keel::fp::dd;

constexpr double kInf = std::numeric_limits<double>::infinity();
constexpr double kNaN = std::numeric_limits<double>::quiet_NaN(); // 0x7FF8000000000000

bool isNaN(double x) { return x != x; }
double absolute(double x) { return std::bit_cast<double>(std::bit_cast<uint64_t>(x) & ~(uint64_t{1} << 63)); }
bool signBit(double x) { return std::bit_cast<uint64_t>(x) >> 63; }

/// 2^k for -1074 <= k <= 1023, exactly.
double pow2(int k) {
  if (k >= -1022)
    return std::bit_cast<double>(static_cast<uint64_t>(k + 1023) << 52);
  return std::bit_cast<double>(uint64_t{1} << (k + 1074));
}

/// y * 2^k with one rounding, for y in [0.5, 2] and -1200 <= k <= 1100.
double scale(double y, int k) {
  if (k > 1000)
    return (y * pow2(k - 100)) * pow2(100); // first product exact
  if (k < -1000)
    return (y * pow2(k + 100)) * pow2(-100); // first product exact (normal)
  return y * pow2(k);
}

/// Nearest integer (ties to even) of |v| < 2^51, by the 1.5 * 2^52 trick.
double nearestInteger(double v) {
  constexpr double kShift = 0x1.8p52;
  return (v + kShift) - kShift;
}

// ln 2 split so that k * kLn2Hi is exact for |k| < 2^21.
constexpr double kLn2Hi = 0x1.62e42fee00000p-1;
constexpr double kLn2Lo = 0x1.a39ef35793c76p-33;
constexpr double kInvLn2 = 0x1.71547652b82fep0;

//===-- exp and expm1 ---------------------------------------------------===//

/// exp(r) - 1 for |r| <= 0.35: Taylor to r^14 (the next term is < 2^-62 r).
double expm1Kernel(double r) {
  constexpr double c[] = {1.0 / 2,           1.0 / 6,           1.0 / 24,         1.0 / 120,
                          1.0 / 720,         1.0 / 5040,        1.0 / 40320,      1.0 / 362880,
                          1.0 / 3628800,     1.0 / 39916800,    1.0 / 479001600,  1.0 / 6227020800,
                          1.0 / 87178291200.0};
  double q = c[12];
  for (int i = 11; i >= 0; --i)
    q = c[i] + r * q;
  return r + (r * r) * q;
}

/// exp(hi + lo) for |lo| <= 2^-40 |hi| (or tiny), finite hi in the range
/// where the result neither overflows nor underflows to zero entirely.
double expTail(double hi, double lo) {
  double kd = nearestInteger(hi * kInvLn2);
  int k = static_cast<int>(kd);
  double rh = hi - kd * kLn2Hi; // exact
  double t = lo - kd * kLn2Lo;
  DD r = twoSum(rh, t);         // r.hi + r.lo is the reduced argument
  double p = expm1Kernel(r.hi);
  // exp(r.hi + r.lo) = (1 + p)(1 + r.lo) to well below an ulp.
  double y = 1.0 + (p + r.lo * (1.0 + p));
  return scale(y, k);
}

double expF64(double x) {
  if (isNaN(x))
    return x + x;
  if (x > 709.782712893384) // ln(DBL_MAX) rounds below this
    return kInf;
  if (x < -745.2) // below half the smallest subnormal
    return 0.0;
  return expTail(x, 0.0);
}

/// exp(x) - 1 without cancellation near 0.
double expm1F64(double x) {
  if (isNaN(x))
    return x + x;
  if (x > 44.0)
    return expF64(x) - 1.0; // -1 below half an ulp, or overflow
  if (x < -40.0)
    return -1.0; // exp(-40) < 2^-57
  if (absolute(x) < 0.3465)
    return expm1Kernel(x);
  double kd = nearestInteger(x * kInvLn2);
  int k = static_cast<int>(kd);
  double rh = x - kd * kLn2Hi;
  double rl = kd * kLn2Lo;
  double r = rh - rl;
  double c = (rh - r) - rl; // what rounding r lost
  double e = expm1Kernel(r);
  e = e + c * (1.0 + e);
  // 2^k (1 + e) - 1 = 2^k e + (2^k - 1); 2^k - 1 is exact for -53 <= k <= 53.
  if (k > 53)
    return (1.0 + e) * pow2(k) - 1.0;
  return e * pow2(k) + (pow2(k) - 1.0);
}

//===-- log --------------------------------------------------------------===//

/// x = 2^k * (1 + f) with 1 + f in [sqrt(2)/2, sqrt(2)); x positive, finite.
void decompose(double x, int &k, double &f) {
  k = 0;
  uint64_t bits = std::bit_cast<uint64_t>(x);
  if ((bits >> 52) == 0) { // subnormal
    x *= 0x1p54;
    k = -54;
    bits = std::bit_cast<uint64_t>(x);
  }
  k += static_cast<int>(bits >> 52) - 1023;
  double m = std::bit_cast<double>((bits & ((uint64_t{1} << 52) - 1)) | (uint64_t{1023} << 52));
  if (m > 0x1.6a09e667f3bcdp0) { // sqrt(2)
    m *= 0.5;
    k += 1;
  }
  f = m - 1.0; // exact (Sterbenz)
}

double logF64(double x) {
  if (isNaN(x))
    return x + x;
  if (x < 0)
    return kNaN;
  if (x == 0)
    return -kInf;
  if (x == kInf)
    return kInf;
  int k;
  double f;
  decompose(x, k, f);
  // log(1 + f) = 2 atanh(s), s = f / (2 + f); 2s = f - s f, so
  // log(1 + f) = f - s (f - R) with R = 2 s^2/3 + 2 s^4/5 + ... (|s| < 0.172).
  double s = f / (2.0 + f);
  double z = s * s;
  double R = 2.0 / 21;
  for (int n = 9; n >= 1; --n)
    R = 2.0 / (2 * n + 1) + z * R;
  R = z * R;
  double kd = k;
  return kd * kLn2Hi + (f - (s * (f - R) - kd * kLn2Lo));
}

/// log(x) as a double-double (about 100 bits), x positive and finite.
DD logDD(double x) {
  int k;
  double f;
  decompose(x, k, f);
  DD s = div(DD{f, 0}, twoSum(2.0, f));
  DD z = mul(s, s);
  // 2 atanh(s) = 2 s (1 + z/3 + z^2/5 + ...), z < 0.0295: 22 terms < 2^-110.
  DD series{1.0 / 43, 0};
  for (int n = 20; n >= 0; --n)
    series = add(div(DD{1.0, 0}, DD{2.0 * n + 1, 0}), mul(z, series));
  DD log1p = mul(mul(s, series), 2.0);
  DD kLn2 = add(twoProd(k, kLn2Hi), twoProd(k, kLn2Lo));
  // The split constants carry ln 2 to 2^-86; the rest of ln 2:
  kLn2 = add(kLn2, DD{k * 0x1.cc01f97b57a08p-87, 0}); // ln 2 - kLn2Hi - kLn2Lo, rounded
  return add(kLn2, log1p);
}

//===-- tanh, sigmoid, silu ----------------------------------------------===//

double tanhF64(double x) {
  if (isNaN(x))
    return x + x;
  double a = absolute(x);
  double t;
  if (a < 0x1p-28)
    return x; // tanh x = x - x^3/3 rounds to x
  if (a >= 22.0)
    t = 1.0; // 1 - tanh(22) < 2^-62
  else if (a >= 1.0)
    t = 1.0 - 2.0 / (expm1F64(2.0 * a) + 2.0);
  else {
    double e = expm1F64(2.0 * a);
    t = e / (e + 2.0);
  }
  return signBit(x) ? -t : t;
}

/// tanh for f32 arguments, evaluated in f64 to well below an f32 rounding
/// error (a shorter expm1 series, relative truncation < 2^-40, since no
/// f64 result is needed), in a form without data-dependent control flow so
/// that code generation can emit the same operations inline and vectorize
/// them (keep src/codegen/Codegen.cpp's F32Kernels::tanh in step).
double expm1KernelShort(double r) { // Taylor to r^11 for |r| <= 0.35
  constexpr double c[] = {1.0 / 2,     1.0 / 6,      1.0 / 24,      1.0 / 120,      1.0 / 720,
                          1.0 / 5040,  1.0 / 40320,  1.0 / 362880,  1.0 / 3628800, 1.0 / 39916800};
  double q = c[9];
  for (int i = 8; i >= 0; --i)
    q = c[i] + r * q;
  return r + (r * r) * q;
}

float tanhF32(float input) {
  double x = input;
  if (isNaN(x))
    return static_cast<float>(x + x);
  double a = absolute(x);
  if (a < 0x1p-28)
    return input; // tanh x = x - x^3/3 rounds to x
  double t = 1.0; // from 9.1 on, 1 - tanh(a) < 2^-25: rounds to 1
  if (a < 9.1) {
    double x2 = 2.0 * a; // expm1(2a): below 0.3465 unreduced (k = 0)
    double kd = x2 < 0.3465 ? 0.0 : nearestInteger(x2 * kInvLn2);
    double rh = x2 - kd * kLn2Hi, rl = kd * kLn2Lo;
    double r = rh - rl, correction = (rh - r) - rl;
    double e = expm1KernelShort(r);
    e = e + correction * (1.0 + e);
    double p2 = pow2(static_cast<int>(kd));
    e = e * p2 + (p2 - 1.0);
    // a >= 1: 1 - 2 / (e + 2); below: e / (e + 2).
    double q = (a >= 1.0 ? 2.0 : e) / (e + 2.0);
    t = a >= 1.0 ? 1.0 - q : q;
  }
  return static_cast<float>(signBit(x) ? -t : t);
}

double sigmoidF64(double x) {
  if (isNaN(x))
    return x + x;
  if (x >= 0)
    return 1.0 / (1.0 + expF64(-x));
  double e = expF64(x);
  return e / (1.0 + e);
}

double siluF64(double x) {
  if (isNaN(x))
    return x + x;
  if (x >= 0)
    return x / (1.0 + expF64(-x));
  if (x == -kInf || x < -800.0) // x + log(-x) < -793: below half the smallest subnormal
    return -0.0;
  if (x < -38.0) { // 1 + exp(x) rounds to 1: silu(x) = -exp(x + log(-x))
    DD l = logDD(-x);
    DD s = twoSum(x, l.hi);
    return -expTail(s.hi, s.lo + l.lo);
  }
  double e = expF64(x);
  return (x * e) / (1.0 + e);
}

//===-- gelu -------------------------------------------------------------===//

constexpr double kInvSqrt2Hi = 0x1.6a09e667f3bcdp-1; // 1/sqrt(2) = hi + lo
constexpr double kInvSqrt2Lo = -0x1.bdd3413b26456p-55;
constexpr double kTwoOverSqrtPiHi = 0x1.20dd750429b6dp0; // 2/sqrt(pi) = hi + lo
constexpr double kTwoOverSqrtPiLo = 0x1.1ae3a914fed80p-56;
constexpr double kInvSqrtPi = 0x1.20dd750429b6dp-1; // 1/sqrt(pi)

/// The coefficients (-1)^n / (n! (2n+1)) of erf's Taylor series, as
/// double-doubles, computed once (by the same IEEE operations everywhere).
constexpr int kErfTerms = 120;
const std::array<DD, kErfTerms> &erfCoefficients() {
  static const std::array<DD, kErfTerms> table = [] {
    std::array<DD, kErfTerms> c{};
    DD factorial{1.0, 0};
    for (int n = 0; n < kErfTerms; ++n) {
      if (n > 0)
        factorial = mul(factorial, static_cast<double>(n));
      DD v = div(DD{1.0, 0}, mul(factorial, 2.0 * n + 1));
      c[static_cast<size_t>(n)] = n % 2 ? DD{-v.hi, -v.lo} : v;
    }
    return c;
  }();
  return table;
}

/// erf(t) for |t| < 3 as a double-double: 2/sqrt(pi) sum c_n t^(2n+1),
/// summed in double-double so that 1 + erf(t) keeps its bits for negative
/// t; terms stop below 2^-90 (the result needs 2^-70: 1 + erf(t) > 2^-17).
DD erfSeries(DD t) {
  const std::array<DD, kErfTerms> &c = erfCoefficients();
  DD t2 = mul(t, t);
  DD power = t; // t^(2n+1)
  DD sum = t;
  for (int n = 1; n < kErfTerms; ++n) {
    power = mul(power, t2);
    DD piece = mul(c[static_cast<size_t>(n)], power);
    sum = add(sum, piece);
    if (absolute(piece.hi) < 0x1p-90)
      break;
  }
  return mul(sum, DD{kTwoOverSqrtPiHi, kTwoOverSqrtPiLo});
}

/// For t >= 3, the denominator of Laplace's continued fraction
/// erfc(t) = exp(-t^2) / sqrt(pi) / (t + (1/2)/(t + 1/(t + (3/2)/(t + ...)))).
double erfcFraction(double t) {
  double f = t;
  for (int n = 60; n >= 1; --n)
    f = t + (0.5 * n) / f;
  return f;
}

double geluF64(double x) {
  if (isNaN(x))
    return x + x;
  if (x == kInf)
    return kInf;
  if (x == -kInf || x < -40.0) // |gelu| < 2^-1100
    return -0.0;
  if (x > 40.0 || x == 0)
    return x; // Phi(x) = 1 - (< 2^-1100); gelu(-0) = -0
  if (absolute(x) < 0x1p-1000) {
    // gelu(x) = x/2 + x^2/sqrt(2 pi) + ...: the second term is far below
    // half an ulp of x/2, but decides a tie (halving a subnormal with its
    // last bit set): the exact value is above it, so the tie goes up.
    double h = x * 0.5;
    return h * 2 == x ? h : __builtin_copysign((x + 0x1p-1074) * 0.5, x);
  }
  DD t = mul(DD{kInvSqrt2Hi, kInvSqrt2Lo}, x); // x / sqrt(2)
  if (absolute(x) < 4.25) {
    // Phi(x) = (1 + erf(t)) / 2.
    DD phi = add(DD{1.0, 0}, erfSeries(t));
    DD g = mul(phi, x * 0.5);
    return g.lo == 0 ? g.hi : g.hi + g.lo; // -0 + 0 would lose the sign of an underflowed result
  }
  // |t| >= 3: erfc by the continued fraction; t^2 = x^2 / 2 exactly.
  DD x2 = twoProd(x, x);
  DD q{x2.hi * 0.5, x2.lo * 0.5};
  if (x < -37.0) {
    // The result nears the subnormal range: one rounding at the end,
    // gelu(x) = -exp(-x^2/2 + log(|x| / (2 sqrt(pi) f))).
    DD l = logDD(0.5 * kInvSqrtPi * -x / erfcFraction(absolute(t.hi)));
    DD s = twoSum(-q.hi, l.hi);
    return -expTail(s.hi, s.lo + (l.lo - q.lo));
  }
  // erfc(|t|) = 2 Phi(-|x|)
  double tail = expTail(-q.hi, -q.lo) * kInvSqrtPi / erfcFraction(absolute(t.hi));
  if (x < 0)
    return x * 0.5 * tail;
  return x - x * 0.5 * tail;
}

/// The coefficients (-1)^n / (n! (2n+1)) of geluF32's erf series.
constexpr int kGeluSeriesTerms = 40;
const std::array<double, kGeluSeriesTerms> &geluSeries() {
  static const std::array<double, kGeluSeriesTerms> c = [] {
    std::array<double, kGeluSeriesTerms> v{};
    double factorial = 1.0;
    for (int n = 0; n < kGeluSeriesTerms; ++n) {
      if (n > 0)
        factorial *= n;
      v[static_cast<size_t>(n)] = (n % 2 ? -1.0 : 1.0) / (factorial * (2 * n + 1));
    }
    return v;
  }();
  return c;
}

/// gelu for f32 arguments, in plain f64 (an f32 result needs no
/// double-double): x^2/2 is exact for an f32 x, so exp(-x^2/2) carries only
/// its own rounding. For -2.12 <= x <= 3, Phi(x) = 1/2 + 1/2 erf(x/sqrt 2)
/// by 40 terms of erf's Taylor series (Horner in t^2; rounding error below
/// 2^-46 of Phi there); outside, Phi(x) = 1/2 erfc(|x|/sqrt 2) (x < 0) or
/// 1 - that (x > 3) by Laplace's continued fraction with 100 terms
/// (relative error below 2^-52 for |t| >= 1.5).
float geluF32(float input) {
  double x = input;
  if (isNaN(x))
    return static_cast<float>(x + x);
  if (x == -kInf || x < -40.0)
    return -0.0f; // |gelu| < 2^-1100
  if (x > 40.0 || x == 0)
    return input; // Phi(x) rounds to 1; gelu(-0) = -0
  double t = x * kInvSqrt2Hi;
  if (x >= -2.12 && x <= 3.0) {
    const std::array<double, kGeluSeriesTerms> &c = geluSeries();
    double u = t * t, p = c[39];
    for (int n = 38; n >= 0; --n)
      p = c[static_cast<size_t>(n)] + u * p;
    double erf = kTwoOverSqrtPiHi * (t * p);
    return static_cast<float>(x * (0.5 + 0.5 * erf));
  }
  double a = absolute(t), f = a;
  for (int n = 100; n >= 1; --n)
    f = a + (0.5 * n) / f;
  double tail = expF64(-(x * x) * 0.5) * kInvSqrtPi / f; // erfc(|t|)
  return static_cast<float>(x < 0 ? x * (0.5 * tail) : x - x * (0.5 * tail));
}

//===-- pow --------------------------------------------------------------===//

bool isInteger(double y) {
  if (absolute(y) >= 0x1p52)
    return true; // every double this large is an integer
  return static_cast<double>(static_cast<int64_t>(y)) == y;
}
bool isOddInteger(double y) {
  if (absolute(y) >= 0x1p53 || !isInteger(y))
    return false;
  return (static_cast<int64_t>(y) & 1) != 0;
}

double powF64(double x, double y) {
  if (y == 0 || x == 1.0)
    return 1.0;
  if (isNaN(x) || isNaN(y))
    return x + y;
  bool odd = isOddInteger(y);
  if (x == 0) {
    if (y < 0)
      return odd ? (signBit(x) ? -kInf : kInf) : kInf;
    return odd ? x : 0.0;
  }
  double ax = absolute(x);
  if (y == kInf || y == -kInf) {
    if (ax == 1.0)
      return 1.0;
    return (ax < 1.0) == (y < 0) ? kInf : 0.0;
  }
  if (ax == kInf) {
    double m = y < 0 ? 0.0 : kInf;
    return signBit(x) && odd ? -m : m;
  }
  bool negate = false;
  if (x < 0) {
    if (!isInteger(y))
      return kNaN;
    negate = odd;
  }
  DD l = logDD(ax);
  double estimate = l.hi * y; // may overflow, where the double-double product below is NaN
  if (estimate > 1e4 || estimate < -1e4) {
    double r = estimate > 0 ? kInf : 0.0;
    return negate ? -r : r;
  }
  DD p = mul(l, y);
  double r;
  if (p.hi > 709.79)
    r = kInf;
  else if (p.hi < -745.2)
    r = 0.0;
  else
    r = expTail(p.hi, p.lo);
  return negate ? -r : r;
}

double rsqrtF64(double x) { return 1.0 / __builtin_sqrt(x); }

} // namespace

extern "C" {

#define KEEL_DEFINE_MATH(NAME, F64)                                            \
  double keel_##NAME##_f64(double x) { return F64(x); }                        \
  float keel_##NAME##_f32(float x) { return static_cast<float>(F64(static_cast<double>(x))); }
KEEL_DEFINE_MATH(exp, expF64)
KEEL_DEFINE_MATH(log, logF64)
KEEL_DEFINE_MATH(sigmoid, sigmoidF64)
KEEL_DEFINE_MATH(silu, siluF64)
KEEL_DEFINE_MATH(rsqrt, rsqrtF64)
#undef KEEL_DEFINE_MATH

double keel_tanh_f64(double x) { return tanhF64(x); }
float keel_tanh_f32(float x) { return tanhF32(x); }
double keel_gelu_f64(double x) { return geluF64(x); }
float keel_gelu_f32(float x) { return geluF32(x); }
const double *keel_gelu_f32_series(void) {
  static_assert(kGeluSeriesTerms == KEEL_GELU_F32_SERIES_TERMS);
  return geluSeries().data();
}

double keel_sqrt_f64(double x) { return __builtin_sqrt(x); }
float keel_sqrt_f32(float x) { return __builtin_sqrtf(x); }

double keel_pow_f64(double x, double y) { return powF64(x, y); }
float keel_pow_f32(float x, float y) { return static_cast<float>(powF64(x, y)); }

} // extern "C"
