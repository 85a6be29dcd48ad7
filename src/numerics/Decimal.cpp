//===- Decimal.cpp - Exact decimal <-> binary conversion -----------------===//
//
// Decimal to binary. A decimal number is N * 10^E with N an integer of n
// significant digits. Its exact value is the rational
//     (N * 5^max(E,0)) / 5^max(-E,0) * 2^E,
// and binary long division of the two big integers gives a 63- or 64-bit
// truncated quotient Q and a sticky bit (remainder != 0). Q has at least
// 62 bits, 9 more than the widest destination (f64, 53), so roundPack rounds
// Q + sticky exactly as it would round the rational itself: one rounding.
//
// Two shortcuts keep any input cheap without changing a result:
//  - Only the first kMaxDigits significant digits are kept; if a nonzero
//    digit follows, a final 1 is appended as a decimal sticky digit. Every
//    rounding boundary of every format (a midpoint k * 2^q with k < 2^54 and
//    q >= -1075) has at most 768 significant digits, so no boundary lies
//    between the truncated and the exact value, and the result is the same.
//  - A value of 10^309 or more overflows every format; a value below 10^-324
//    is under half the smallest f64 subnormal (2^-1075 ~ 2.47e-324) and so
//    under half the smallest subnormal of every format: it rounds to zero.
//
// Binary to decimal. m * 2^e with e < 0 equals m * 5^-e / 10^-e: the digits
// of m * 5^-e with the point -e places from the right.
//
//===----------------------------------------------------------------------===//
#include "BigUint.h"
#include "Exact.h"

#include <cassert>
#include <cctype>
#include <cstdint>

namespace keel::fp {

using detail::BigUint;

namespace {

constexpr int kMaxDigits = 800;
// Clamp for exponents written with absurd digit counts; any |E| this large
// is decided by the overflow/underflow shortcuts above.
constexpr int64_t kExponentClamp = int64_t{1} << 40;

bool equalsIgnoringCase(std::string_view a, std::string_view b) {
  if (a.size() != b.size())
    return false;
  for (size_t i = 0; i < a.size(); ++i)
    if (std::tolower(static_cast<unsigned char>(a[i])) != b[i])
      return false;
  return true;
}

bool isDigit(char c) { return c >= '0' && c <= '9'; }

/// A parsed decimal: value = digits * 10^exponent, digits without leading
/// zeros (empty means zero).
struct Decimal {
  bool negative = false;
  std::string digits;
  int64_t exponent = 0;
};

std::optional<Decimal> parseDecimal(std::string_view s) {
  Decimal d;
  size_t i = 0;
  if (i < s.size() && (s[i] == '+' || s[i] == '-'))
    d.negative = s[i++] == '-';
  bool anyDigit = false, truncatedNonzero = false;
  int64_t pointShift = 0; // digits after the point that were kept
  auto take = [&](char c, bool afterPoint) {
    anyDigit = true;
    if (d.digits.empty() && c == '0') { // leading zero: only moves the point
      pointShift += afterPoint;
      return;
    }
    if (static_cast<int>(d.digits.size()) < kMaxDigits) {
      d.digits += c;
      pointShift += afterPoint;
    } else {
      truncatedNonzero |= c != '0';
      pointShift -= !afterPoint; // a dropped integer digit scales by 10
    }
  };
  for (; i < s.size() && isDigit(s[i]); ++i)
    take(s[i], false);
  if (i < s.size() && s[i] == '.') {
    for (++i; i < s.size() && isDigit(s[i]); ++i)
      take(s[i], true);
  }
  if (!anyDigit)
    return std::nullopt;
  int64_t written = 0;
  if (i < s.size() && (s[i] == 'e' || s[i] == 'E')) {
    ++i;
    bool negExp = false;
    if (i < s.size() && (s[i] == '+' || s[i] == '-'))
      negExp = s[i++] == '-';
    if (i == s.size() || !isDigit(s[i]))
      return std::nullopt;
    for (; i < s.size() && isDigit(s[i]); ++i)
      written = std::min(kExponentClamp, written * 10 + (s[i] - '0'));
    if (negExp)
      written = -written;
  }
  if (i != s.size())
    return std::nullopt;
  if (truncatedNonzero) { // the decimal sticky digit
    d.digits += '1';
    ++pointShift;
  }
  d.exponent = written - pointShift;
  return d;
}

/// Rounds digits * 10^exponent (nonzero) to `to`.
uint64_t roundDecimal(Format to, const Decimal &d, bool *inexact) {
  int64_t n = static_cast<int64_t>(d.digits.size());
  bool outOfRange = n - 1 + d.exponent >= 309 || n + d.exponent <= -324;
  if (outOfRange && inexact)
    *inexact = true;
  if (n - 1 + d.exponent >= 309)
    return detail::packInfinity(to, d.negative);
  if (n + d.exponent <= -324)
    return detail::packZero(to, d.negative);
  int e = static_cast<int>(d.exponent);

  BigUint num, den(1);
  for (char c : d.digits)
    num.mulAdd(10, static_cast<uint32_t>(c - '0'));
  if (e >= 0)
    num.mulPow5(e);
  else
    den.mulPow5(-e);

  // num/den lies in [2^(t-1), 2^(t+1)); scaling by 2^(63-t) puts the
  // quotient in [2^62, 2^64).
  int t = num.bitLength() - den.bitLength();
  int scale = 63 - t;
  if (scale >= 0)
    num.shiftLeft(scale);
  else
    den.shiftLeft(-scale);
  // Restoring division, one quotient bit at a time from bit 63 down.
  den.shiftLeft(63);
  uint64_t q = 0;
  for (int bit = 63; bit >= 0; --bit) {
    if (compare(num, den) >= 0) {
      num.subtract(den);
      q |= uint64_t{1} << bit;
    }
    den.shiftRightOne();
  }
  assert(q >> 61 && "quotient must carry guard bits");
  return detail::roundPack(to, d.negative, q, e - scale, !num.isZero(), inexact);
}

} // namespace

std::optional<uint64_t> fromDecimal(Format to, std::string_view text, bool *inexact) {
  if (inexact)
    *inexact = false;
  std::string_view body = text;
  bool negative = false;
  if (!body.empty() && (body[0] == '+' || body[0] == '-')) {
    negative = body[0] == '-';
    body.remove_prefix(1);
  }
  if (equalsIgnoringCase(body, "inf") || equalsIgnoringCase(body, "infinity")) {
    if (inexact)
      *inexact = !info(to).hasInfinity; // saturated
    return detail::packInfinity(to, negative);
  }
  if (equalsIgnoringCase(body, "nan"))
    return canonicalNaN(to, negative);
  std::optional<Decimal> d = parseDecimal(text);
  if (!d)
    return std::nullopt;
  if (d->digits.empty())
    return detail::packZero(to, d->negative);
  return roundDecimal(to, *d, inexact);
}

std::string exactDecimal(Format f, uint64_t bits) {
  detail::Unpacked u = detail::unpack(f, bits);
  std::string sign = u.negative ? "-" : "";
  switch (u.cls) {
  case FpClass::NaN: return sign + "nan";
  case FpClass::Infinity: return sign + "inf";
  case FpClass::Zero: return sign + "0";
  case FpClass::Subnormal:
  case FpClass::Normal: break;
  }
  BigUint value(u.mantissa);
  if (u.exponent >= 0) {
    value.shiftLeft(u.exponent);
    return sign + value.toDecimal();
  }
  int places = -u.exponent;
  value.mulPow5(places);
  std::string digits = value.toDecimal();
  if (static_cast<int>(digits.size()) <= places)
    digits.insert(0, static_cast<size_t>(places) + 1 - digits.size(), '0');
  std::string out = digits.substr(0, digits.size() - places) + "." +
                    digits.substr(digits.size() - places);
  while (out.back() == '0')
    out.pop_back();
  if (out.back() == '.')
    out.pop_back();
  return sign + out;
}

} // namespace keel::fp
