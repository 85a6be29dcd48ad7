//===- MathTest.cpp - keel/numerics/Math.h against GNU MPFR --------------===//
//
// Accuracy: every function on large random samples against MPFR at 160
// bits, in ulps of the result format (the ulp of the exact value, with the
// subnormal ulp below the normal range). The bounds asserted here are the
// ones docs/semantics.md states; the measured maxima are printed.
// Special cases (pow's C99 Annex F table, infinities, zeros, NaN) by hand.
//
//===----------------------------------------------------------------------===//
#include "keel/numerics/Math.h"

#include <gtest/gtest.h>
#include <mpfr.h>

#include <bit>
#include <cmath>
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <functional>
#include <limits>
#include <random>
#include <string>
#include <vector>

namespace {

constexpr double kInf = std::numeric_limits<double>::infinity();

class Mp {
public:
  Mp() { mpfr_init2(v, 160); }
  ~Mp() { mpfr_clear(v); }
  Mp(const Mp &) = delete;
  Mp &operator=(const Mp &) = delete;
  mpfr_t v;
};

using Reference = std::function<void(mpfr_ptr out, mpfr_srcptr x)>;

/// |got - exact| in ulps of the exact value in a format with `precision`
/// bits and smallest exponent `minExponent` (of the ulp).
/// A result beyond the format's range must be the infinity of its sign.
double ulpError(double got, mpfr_srcptr exact, int precision, int minUlpExponent) {
  if (mpfr_nan_p(exact))
    return std::isnan(got) ? 0 : 1e30;
  double rounded = precision == 24 ? mpfr_get_flt(exact, MPFR_RNDN) : mpfr_get_d(exact, MPFR_RNDN);
  if (std::isinf(rounded))
    return got == rounded ? 0 : 1e30;
  if (std::isnan(got) || std::isinf(got))
    return 1e30;
  Mp diff;
  mpfr_set_d(diff.v, got, MPFR_RNDN);
  mpfr_sub(diff.v, diff.v, exact, MPFR_RNDN);
  int exponent = mpfr_zero_p(exact) ? minUlpExponent : static_cast<int>(mpfr_get_exp(exact)) - precision;
  if (exponent < minUlpExponent)
    exponent = minUlpExponent;
  mpfr_mul_2si(diff.v, diff.v, -exponent, MPFR_RNDN);
  return std::fabs(mpfr_get_d(diff.v, MPFR_RNDN));
}

struct Function {
  const char *name;
  double (*f64)(double);
  float (*f32)(float);
  Reference reference;
  double lo, hi;       ///< sampled uniformly here, plus a log-uniform set
  double f64Bound;     ///< ulps, as documented
};

void sigmoidRef(mpfr_ptr out, mpfr_srcptr x) {
  Mp t;
  mpfr_neg(t.v, x, MPFR_RNDN);
  mpfr_exp(t.v, t.v, MPFR_RNDN);
  mpfr_add_ui(t.v, t.v, 1, MPFR_RNDN);
  mpfr_ui_div(out, 1, t.v, MPFR_RNDN);
}
void siluRef(mpfr_ptr out, mpfr_srcptr x) {
  Mp t;
  mpfr_neg(t.v, x, MPFR_RNDN);
  mpfr_exp(t.v, t.v, MPFR_RNDN);
  mpfr_add_ui(t.v, t.v, 1, MPFR_RNDN);
  mpfr_div(out, x, t.v, MPFR_RNDN);
}
void geluRef(mpfr_ptr out, mpfr_srcptr x) { // x/2 erfc(-x/sqrt 2)
  Mp t;
  mpfr_sqrt_ui(t.v, 2, MPFR_RNDN);
  mpfr_div(t.v, x, t.v, MPFR_RNDN);
  mpfr_neg(t.v, t.v, MPFR_RNDN);
  mpfr_erfc(t.v, t.v, MPFR_RNDN);
  mpfr_mul(t.v, t.v, x, MPFR_RNDN);
  mpfr_div_2ui(out, t.v, 1, MPFR_RNDN);
}
void rsqrtRef(mpfr_ptr out, mpfr_srcptr x) { mpfr_rec_sqrt(out, x, MPFR_RNDN); }

std::vector<Function> functions() {
  return {
      {"exp", keel_exp_f64, keel_exp_f32, [](mpfr_ptr o, mpfr_srcptr x) { mpfr_exp(o, x, MPFR_RNDN); }, -745, 709.7, 1},
      {"log", keel_log_f64, keel_log_f32, [](mpfr_ptr o, mpfr_srcptr x) { mpfr_log(o, x, MPFR_RNDN); }, 0, 1e300, 1},
      {"tanh", keel_tanh_f64, keel_tanh_f32, [](mpfr_ptr o, mpfr_srcptr x) { mpfr_tanh(o, x, MPFR_RNDN); }, -25, 25, 2.5},
      {"sigmoid", keel_sigmoid_f64, keel_sigmoid_f32, sigmoidRef, -750, 40, 2},
      {"silu", keel_silu_f64, keel_silu_f32, siluRef, -750, 40, 3},
      {"gelu", keel_gelu_f64, keel_gelu_f32, geluRef, -39, 10, 5},
      {"sqrt", keel_sqrt_f64, keel_sqrt_f32, [](mpfr_ptr o, mpfr_srcptr x) { mpfr_sqrt(o, x, MPFR_RNDN); }, 0, 1e300, 0.5},
      {"rsqrt", keel_rsqrt_f64, keel_rsqrt_f32, rsqrtRef, 0, 1e300, 1.5},
      {"sin", keel_sin_f64, keel_sin_f32, [](mpfr_ptr o, mpfr_srcptr x) { mpfr_sin(o, x, MPFR_RNDN); }, -1e300, 1e300,
       0.51},
      {"cos", keel_cos_f64, keel_cos_f32, [](mpfr_ptr o, mpfr_srcptr x) { mpfr_cos(o, x, MPFR_RNDN); }, -1e300, 1e300,
       0.51},
  };
}

int samples() {
  const char *n = std::getenv("KEEL_MATH_SAMPLES");
  return n ? std::atoi(n) : 20000;
}

/// Inputs: half uniform over [lo, hi], half +-2^k * u with k spread over
/// 40 binades below 2 (small arguments), positive where the domain is.
std::vector<double> inputs(const Function &f, std::mt19937_64 &rng) {
  std::vector<double> out;
  bool positive = f.lo >= 0;
  for (int i = 0; i < samples(); ++i) {
    double v;
    if (i % 2)
      v = positive ? std::exp2(std::uniform_real_distribution<double>(-1070, 1020)(rng))
                   : std::uniform_real_distribution<double>(f.lo, f.hi)(rng);
    else
      v = std::uniform_real_distribution<double>(positive ? 0 : -2, 2)(rng) * std::exp2(-static_cast<int>(rng() % 40));
    out.push_back(v);
  }
  return out;
}

/// The largest error seen, and where.
struct Worst {
  double error = 0, at = 0;
  void see(double e, double v) {
    if (e > error) {
      error = e;
      at = v;
    }
  }
};

/// f's error at v against MPFR in ulps: of the f64 function, or (`single`)
/// of the f32 function at v, an f32 value.
double errorAt(const Function &f, double v, bool single) {
  Mp x, exact;
  mpfr_set_d(x.v, v, MPFR_RNDN);
  f.reference(exact.v, x.v);
  return single ? ulpError(f.f32(static_cast<float>(v)), exact.v, 24, -149) : ulpError(f.f64(v), exact.v, 53, -1074);
}

TEST(MathTest, F64AccuracyAgainstMpfr) {
  std::mt19937_64 rng(20261129);
  for (const Function &f : functions()) {
    Worst worst;
    for (double v : inputs(f, rng))
      worst.see(errorAt(f, v, false), v);
    std::printf("%-8s f64: max %.3f ulp (at %a)\n", f.name, worst.error, worst.at);
    EXPECT_LE(worst.error, f.f64Bound) << f.name << " at " << worst.at;
  }
}

/// The f32 forms round the f64 result once: within 0.5 ulp plus a sliver,
/// so correctly rounded except where the exact value lies within an f64
/// error of an f32 midpoint. Counted, and bounded.
TEST(MathTest, F32AccuracyAgainstMpfr) {
  std::mt19937_64 rng(7);
  for (const Function &f : functions()) {
    double worst = 0, at = 0;
    int notNearest = 0, n = 0;
    Mp x, exact;
    for (double d : inputs(f, rng)) {
      float v = static_cast<float>(d);
      if (std::isinf(v))
        continue;
      mpfr_set_d(x.v, v, MPFR_RNDN);
      f.reference(exact.v, x.v);
      double e = ulpError(f.f32(v), exact.v, 24, -149);
      notNearest += e > 0.5;
      ++n;
      if (e > worst) {
        worst = e;
        at = v;
      }
    }
    std::printf("%-8s f32: max %.4f ulp (at %a), %d of %d not correctly rounded\n", f.name, worst, at, notNearest, n);
    EXPECT_LE(worst, 0.5001) << f.name << " at " << at;
  }
}

TEST(MathTest, PowAccuracyAgainstMpfr) {
  std::mt19937_64 rng(3);
  double worst = 0, atX = 0, atY = 0;
  Mp x, y, exact;
  for (int i = 0; i < samples(); ++i) {
    double a = std::exp2(std::uniform_real_distribution<double>(-30, 30)(rng));
    double b = std::uniform_real_distribution<double>(-40, 40)(rng);
    mpfr_set_d(x.v, a, MPFR_RNDN);
    mpfr_set_d(y.v, b, MPFR_RNDN);
    mpfr_pow(exact.v, x.v, y.v, MPFR_RNDN);
    double e = ulpError(keel_pow_f64(a, b), exact.v, 53, -1074);
    if (e > worst) {
      worst = e;
      atX = a;
      atY = b;
    }
  }
  std::printf("pow      f64: max %.3f ulp (at %a, %a)\n", worst, atX, atY);
  EXPECT_LE(worst, 1.0);
}

bool same(double a, double b) { return std::bit_cast<uint64_t>(a) == std::bit_cast<uint64_t>(b) || (a != a && b != b); }

TEST(MathTest, PowSpecialCasesFollowC99AnnexF) {
  const double nan = std::numeric_limits<double>::quiet_NaN();
  struct Case {
    double x, y, want;
  } cases[] = {
      {nan, 0.0, 1.0},    {nan, -0.0, 1.0},    {1.0, nan, 1.0},     {1.0, kInf, 1.0},   {nan, 1.0, nan},
      {2.0, nan, nan},    {-2.0, 0.5, nan},    {-8.0, 1.0 / 3, nan}, {0.0, -3.0, kInf},  {-0.0, -3.0, -kInf},
      {0.0, -2.0, kInf},  {-0.0, -2.0, kInf},  {-0.0, -0.5, kInf},  {0.0, 3.0, 0.0},    {-0.0, 3.0, -0.0},
      {-0.0, 2.0, 0.0},   {-0.0, 0.5, 0.0},    {-1.0, kInf, 1.0},   {-1.0, -kInf, 1.0}, {0.5, -kInf, kInf},
      {2.0, -kInf, 0.0},  {0.5, kInf, 0.0},    {2.0, kInf, kInf},   {-kInf, -3.0, -0.0}, {-kInf, -2.0, 0.0},
      {-kInf, 3.0, -kInf}, {-kInf, 2.0, kInf}, {kInf, -1.0, 0.0},   {kInf, 0.5, kInf},  {-2.0, 3.0, -8.0},
      {-2.0, 2.0, 4.0},   {-2.0, -1.0, -0.5},  {2.0, 10.0, 1024.0}, {10.0, -1.0, 0.1},  {4.0, 0.5, 2.0},
      {2.0, 1024.0, kInf}, {2.0, -1075.0, 0.0}, {2.0, -1074.0, 0x1p-1074},
  };
  for (const Case &c : cases)
    EXPECT_TRUE(same(keel_pow_f64(c.x, c.y), c.want))
        << "pow(" << c.x << ", " << c.y << ") = " << keel_pow_f64(c.x, c.y) << ", want " << c.want;
}

/// sin and cos where their argument reduction is hardest: the doubles
/// nearest k * pi/2 (and their neighbours) for k up to 2^1000, huge
/// arguments of every exponent, subnormals. f64 within the documented
/// 0.51 ulp; f32 (the same inputs, rounded to f32) correctly rounded.
TEST(MathTest, SinCosStratifiedAgainstMpfr) {
  std::mt19937_64 rng(31415);
  std::vector<double> in;
  Mp halfPi, k, t;
  mpfr_const_pi(halfPi.v, MPFR_RNDN);
  mpfr_div_2ui(halfPi.v, halfPi.v, 1, MPFR_RNDN);
  auto nearMultiple = [&](double multiple) { // the double nearest multiple * pi/2, and 3 neighbours each side
    mpfr_set_d(k.v, multiple, MPFR_RNDN);
    mpfr_mul(t.v, k.v, halfPi.v, MPFR_RNDN);
    double x = mpfr_get_d(t.v, MPFR_RNDN);
    for (int d = -3; d <= 3; ++d)
      in.push_back(std::bit_cast<double>(std::bit_cast<uint64_t>(x) + static_cast<uint64_t>(d)));
  };
  for (int m = 1; m <= 2000; ++m)
    nearMultiple(m);
  for (int i = 0; i < 3000; ++i) // k of every size: k = u * 2^j, u < 2^53
    nearMultiple(std::ldexp(static_cast<double>(rng() >> 11), static_cast<int>(rng() % 950)));
  for (int i = 0; i < 3000; ++i) { // every exponent, both signs
    uint64_t bits = (rng() & 0x800FFFFFFFFFFFFFull) | (static_cast<uint64_t>(rng() % 2047) << 52);
    in.push_back(std::bit_cast<double>(bits));
  }
  for (int i = 0; i < 500; ++i) // subnormals
    in.push_back(std::bit_cast<double>(rng() & 0x800FFFFFFFFFFFFFull));
  for (const Function &f : functions()) {
    if (std::string(f.name) != "sin" && std::string(f.name) != "cos")
      continue;
    Worst f64, f32;
    for (double v : in) {
      f64.see(errorAt(f, v, false), v);
      float v32 = static_cast<float>(v);
      if (!std::isinf(v32))
        f32.see(errorAt(f, v32, true), v32);
    }
    std::printf("%-8s stratified: f64 max %.3f ulp (at %a), f32 max %.4f ulp (at %a), %zu inputs\n", f.name, f64.error,
                f64.at, f32.error, f32.at, in.size());
    EXPECT_LE(f64.error, f.f64Bound) << f.name << " at " << f64.at;
    EXPECT_LE(f32.error, 0.5) << f.name << " at " << f32.at;
  }
}

TEST(MathTest, SpecialValues) {
  EXPECT_TRUE(same(keel_exp_f64(-kInf), 0.0));
  EXPECT_TRUE(same(keel_exp_f64(kInf), kInf));
  EXPECT_TRUE(same(keel_exp_f64(0.0), 1.0));
  EXPECT_TRUE(same(keel_exp_f64(710.0), kInf));
  EXPECT_TRUE(same(keel_exp_f64(-746.0), 0.0));
  EXPECT_TRUE(same(keel_log_f64(0.0), -kInf));
  EXPECT_TRUE(same(keel_log_f64(-0.0), -kInf));
  EXPECT_TRUE(same(keel_log_f64(1.0), 0.0));
  EXPECT_TRUE(same(keel_log_f64(kInf), kInf));
  EXPECT_EQ(std::bit_cast<uint64_t>(keel_log_f64(-1.0)), 0x7FF8000000000000ull); // the documented NaN
  EXPECT_TRUE(same(keel_tanh_f64(-0.0), -0.0));
  EXPECT_TRUE(same(keel_tanh_f64(kInf), 1.0));
  EXPECT_TRUE(same(keel_tanh_f64(-kInf), -1.0));
  EXPECT_TRUE(same(keel_sigmoid_f64(kInf), 1.0));
  EXPECT_TRUE(same(keel_sigmoid_f64(-kInf), 0.0));
  EXPECT_TRUE(same(keel_sigmoid_f64(0.0), 0.5));
  EXPECT_TRUE(same(keel_silu_f64(-kInf), -0.0));
  EXPECT_TRUE(same(keel_silu_f64(kInf), kInf));
  EXPECT_TRUE(same(keel_gelu_f64(-kInf), -0.0));
  EXPECT_TRUE(same(keel_gelu_f64(kInf), kInf));
  EXPECT_TRUE(same(keel_gelu_f64(-0.0), -0.0));
  EXPECT_TRUE(same(keel_rsqrt_f64(0.0), kInf));
  EXPECT_TRUE(same(keel_rsqrt_f64(4.0), 0.5));
  EXPECT_TRUE(same(keel_sqrt_f64(-0.0), -0.0));
  EXPECT_TRUE(same(keel_sin_f64(-0.0), -0.0));
  EXPECT_TRUE(same(keel_sin_f64(0.0), 0.0));
  EXPECT_TRUE(same(keel_cos_f64(-0.0), 1.0));
  EXPECT_TRUE(same(keel_sin_f32(-0.0f), -0.0));
  EXPECT_TRUE(same(keel_cos_f32(-0.0f), 1.0));
  for (double inf : {kInf, -kInf}) { // invalid: the documented NaN
    EXPECT_EQ(std::bit_cast<uint64_t>(keel_sin_f64(inf)), 0x7FF8000000000000ull);
    EXPECT_EQ(std::bit_cast<uint64_t>(keel_cos_f64(inf)), 0x7FF8000000000000ull);
    EXPECT_EQ(std::bit_cast<uint32_t>(keel_sin_f32(static_cast<float>(inf))), 0x7FC00000u);
  }
  // A NaN input comes back quiet, its payload kept.
  double payload = std::bit_cast<double>(0x7FF8000000000123ull);
  for (double (*f)(double) : {keel_exp_f64, keel_log_f64, keel_tanh_f64, keel_sigmoid_f64, keel_silu_f64,
                              keel_gelu_f64, keel_sin_f64, keel_cos_f64})
    EXPECT_EQ(std::bit_cast<uint64_t>(f(payload)), 0x7FF8000000000123ull);
  EXPECT_TRUE(std::isnan(keel_exp_f32(std::numeric_limits<float>::quiet_NaN())));
  EXPECT_TRUE(same(keel_exp_f32(-104.0f), 0.0)); // below half the smallest f32 subnormal
  EXPECT_EQ(keel_exp_f32(89.0f), std::numeric_limits<float>::infinity());
}

} // namespace

// Extremes the MLIR linalg exit's comparison with libm found (by hand):
// silu of a huge negative number underflows to -0; pow whose y * log(x)
// overflows the double-double product is 0 or infinity, not NaN; gelu of a
// subnormal is x/2 + x^2 / sqrt(2 pi) + ..., whose second term decides a
// tie in halving x: upward in magnitude for x > 0 (the sum is above the
// tie), toward zero for x < 0.
TEST(MathTest, ExtremesAgainstLibmFindings) {
  const double most = std::numeric_limits<double>::max(), tiny = std::numeric_limits<double>::min(), u = 0x1p-1074;
  EXPECT_TRUE(same(keel_silu_f64(-most), -0.0));
  EXPECT_TRUE(same(keel_silu_f64(-1000.0), -0.0));
  EXPECT_TRUE(same(keel_pow_f64(tiny, most), 0.0));
  EXPECT_TRUE(same(keel_pow_f64(tiny, -most), kInf));
  EXPECT_TRUE(same(keel_pow_f64(-tiny, most), 0.0)); // most is an even integer
  EXPECT_TRUE(same(keel_pow_f64(most, most), kInf));
  EXPECT_TRUE(same(keel_gelu_f64(-u), -0.0));
  EXPECT_TRUE(same(keel_gelu_f64(u), u));
  EXPECT_TRUE(same(keel_gelu_f64(-3 * u), -u));
  EXPECT_TRUE(same(keel_gelu_f64(3 * u), 2 * u));
  EXPECT_TRUE(same(keel_gelu_f64(-4 * u), -2 * u));
  EXPECT_TRUE(same(keel_gelu_f64(tiny), tiny / 2)); // exact halving: no tie
}
