//===- Reference.cpp ------------------------------------------------------===//
#include "Reference.h"

#include <cassert>
#include <cmath>
#include <cstdio>
#include <gtest/gtest.h>

namespace keel::fp::ref {

using llvm::APFloat;
using llvm::APFloatBase;
using llvm::APInt;

const llvm::fltSemantics &semantics(Format f) {
  switch (f) {
  case Format::F16: return APFloatBase::IEEEhalf();
  case Format::BF16: return APFloatBase::BFloat();
  case Format::TF32: return APFloatBase::FloatTF32();
  case Format::FP8E4M3FN: return APFloatBase::Float8E4M3FN();
  case Format::FP8E5M2: return APFloatBase::Float8E5M2();
  case Format::F32: return APFloatBase::IEEEsingle();
  case Format::F64: return APFloatBase::IEEEdouble();
  }
  return APFloatBase::IEEEdouble();
}

uint64_t specCanonicalNaN(Format f, bool negative) {
  struct Row { uint64_t positive, negative; };
  static const Row rows[] = {
      {0x7E00, 0xFE00},                                   // f16
      {0x7FC0, 0xFFC0},                                   // bf16
      {0x7FC00000, 0xFFC00000},                           // tf32
      {0x7F, 0xFF},                                       // fp8e4m3fn
      {0x7E, 0xFE},                                       // fp8e5m2
      {0x7FC00000, 0xFFC00000},                           // f32
      {0x7FF8000000000000, 0xFFF8000000000000},           // f64
  };
  const Row &r = rows[static_cast<int>(f)];
  return negative ? r.negative : r.positive;
}

APFloat toAP(Format f, uint64_t bits) {
  const llvm::fltSemantics &sem = semantics(f);
  unsigned width = APFloat::getSizeInBits(sem);
  if (f == Format::TF32)
    bits >>= 13;
  return APFloat(sem, APInt(width, bits));
}

uint64_t fromAP(Format f, const APFloat &v) {
  uint64_t bits = v.bitcastToAPInt().getZExtValue();
  return f == Format::TF32 ? bits << 13 : bits;
}

double exactValue(Format f, uint64_t bits) {
  APFloat v = toAP(f, bits);
  bool losesInfo = false;
  v.convert(APFloatBase::IEEEdouble(), APFloat::rmNearestTiesToEven, &losesInfo);
  EXPECT_FALSE(losesInfo && !v.isNaN()) << "decoding is exact";
  return v.convertToDouble();
}

uint64_t contractFromApfloat(Format to, APFloat value, bool &apfloatDiffered) {
  apfloatDiffered = false;
  if (value.isNaN()) {
    uint64_t canonical = specCanonicalNaN(to, value.isNegative());
    apfloatDiffered = fromAP(to, value) != canonical;
    return canonical;
  }
  return fromAP(to, value);
}

uint64_t apConvert(Format from, Format to, uint64_t bits, bool &apfloatDiffered) {
  APFloat source = toAP(from, bits);
  APFloat v = source;
  bool losesInfo = false;
  APFloat::opStatus status =
      v.convert(semantics(to), APFloat::rmNearestTiesToEven, &losesInfo);
  if (to == Format::FP8E4M3FN && !source.isNaN() &&
      (source.isInfinity() || (status & APFloat::opOverflow))) {
    // Difference 2: APFloat gives NaN; Keel saturates.
    apfloatDiffered = true;
    return fromAP(to, APFloat::getLargest(semantics(to), source.isNegative()));
  }
  if (source.isNaN()) {
    apfloatDiffered = true; // payload handling is Keel's own (difference 1)
    return specCanonicalNaN(to, source.isNegative());
  }
  return contractFromApfloat(to, v, apfloatDiffered);
}

namespace {
/// Sets MPFR's exponent range to the format's for the lifetime of the guard.
class ExponentRange {
public:
  explicit ExponentRange(const FormatInfo &fi)
      : savedMin_(mpfr_get_emin()), savedMax_(mpfr_get_emax()) {
    // MPFR writes x = 0.1b... * 2^e, one more than the IEEE exponent;
    // subnormals are handled by mpfr_subnormalize from this emin.
    mpfr_set_emin(fi.minExponent() - fi.precision() + 2);
    mpfr_set_emax(fi.maxExponent() + 1);
  }
  ~ExponentRange() {
    mpfr_set_emin(savedMin_);
    mpfr_set_emax(savedMax_);
  }

private:
  mpfr_exp_t savedMin_, savedMax_;
};
} // namespace

uint64_t mpfrRound(Format to, const std::function<int(mpfr_ptr)> &produce, bool *inexact) {
  const FormatInfo &fi = info(to);
  const llvm::fltSemantics &sem = semantics(to);
  mpfr_t y;
  mpfr_init2(y, fi.precision());
  double d;
  bool negative;
  {
    ExponentRange range(fi);
    int ternary = produce(y);
    ternary = mpfr_check_range(y, ternary, MPFR_RNDN);
    ternary = mpfr_subnormalize(y, ternary, MPFR_RNDN);
    if (inexact)
      *inexact = ternary != 0;
    negative = mpfr_signbit(y);
    d = mpfr_nan_p(y) ? 0.0 : mpfr_get_d(y, MPFR_RNDN); // exact: fits f64
  }
  bool isNaN = mpfr_nan_p(y), isInf = mpfr_inf_p(y);
  mpfr_clear(y);
  if (isNaN)
    return specCanonicalNaN(to, negative);
  APFloat largest = APFloat::getLargest(sem, negative);
  if (!fi.hasInfinity && (isInf || std::fabs(d) > std::fabs(largest.convertToDouble()))) {
    if (inexact)
      *inexact = true;
    return fromAP(to, largest); // fp8e4m3fn saturates
  }
  if (isInf)
    return fromAP(to, APFloat::getInf(sem, negative));
  APFloat v(d);
  bool losesInfo = false;
  v.convert(sem, APFloat::rmNearestTiesToEven, &losesInfo);
  EXPECT_FALSE(losesInfo) << "MPFR's result is representable";
  return fromAP(to, v);
}

uint64_t mpfrFromDecimal(Format to, const std::string &decimal, bool *inexact) {
  return mpfrRound(to, [&](mpfr_ptr y) {
    char *end = nullptr;
    int inexact = mpfr_strtofr(y, decimal.c_str(), &end, 10, MPFR_RNDN);
    EXPECT_EQ(*end, '\0') << "MPFR parsed all of " << decimal;
    return inexact;
  }, inexact);
}

uint64_t mpfrArith(Format f, ArithOp op, uint64_t a, uint64_t b) {
  double x = exactValue(f, a), y = exactValue(f, b);
  if (std::isnan(x) || std::isnan(y)) // Keel's rule: the first NaN's sign
    return specCanonicalNaN(f, std::isnan(x) ? std::signbit(x) : std::signbit(y));
  uint64_t r = mpfrRound(f, [&](mpfr_ptr out) {
    mpfr_t mx, my;
    mpfr_init2(mx, 64);
    mpfr_init2(my, 64);
    mpfr_set_d(mx, x, MPFR_RNDN); // exact: a format value in range
    mpfr_set_d(my, y, MPFR_RNDN);
    int inexact = 0;
    switch (op) {
    case ArithOp::Add: inexact = mpfr_add(out, mx, my, MPFR_RNDN); break;
    case ArithOp::Sub: inexact = mpfr_sub(out, mx, my, MPFR_RNDN); break;
    case ArithOp::Mul: inexact = mpfr_mul(out, mx, my, MPFR_RNDN); break;
    case ArithOp::Div: inexact = mpfr_div(out, mx, my, MPFR_RNDN); break;
    }
    mpfr_clear(mx);
    mpfr_clear(my);
    return inexact;
  });
  // Invalid operations: Keel's NaN is positive (MPFR's NaN has no sign rule).
  if (toAP(f, r).isNaN())
    return specCanonicalNaN(f, false);
  return r;
}

uint64_t viaF64(Format to, const std::string &decimal) {
  uint64_t d = mpfrFromDecimal(Format::F64, decimal);
  bool differed = false;
  return apConvert(Format::F64, to, d, differed);
}

std::string exactDecimalOf(mpfr_srcptr x) {
  // More digits than any value in these tests has (2^-1075 needs 751), then
  // the zeros trimmed.
  char *s = nullptr;
  mpfr_asprintf(&s, "%.1300Re", x);
  std::string out = s;
  mpfr_free_str(s);
  size_t e = out.find('e');
  std::string mant = out.substr(0, e), exp = out.substr(e);
  while (mant.back() == '0')
    mant.pop_back();
  if (mant.back() == '.')
    mant.pop_back();
  return mant + exp;
}

std::string exactDecimalOf(double v) {
  mpfr_t x;
  mpfr_init2(x, 64);
  mpfr_set_d(x, v, MPFR_RNDN);
  std::string s = exactDecimalOf(x);
  mpfr_clear(x);
  return s;
}

std::string hexOf(Format f, uint64_t bits) {
  char buf[32];
  std::snprintf(buf, sizeof buf, "0x%0*llx", info(f).hexDigits(),
                static_cast<unsigned long long>(bits));
  return buf;
}

} // namespace keel::fp::ref
