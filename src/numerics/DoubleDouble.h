//===- DoubleDouble.h - Pairs of doubles, exact sums and products -*- C++ -*-===//
//
// Private to the numerics library (Math.cpp, Trig.cpp). A value hi + lo with
// |lo| <= ulp(hi) / 2: twoSum and twoProd are exact (Knuth's and Dekker's
// algorithms, IEEE f64 operations only, no fused multiply-add: the library
// is built with -ffp-contract=off); the others lose a few bits of lo.
//
//===----------------------------------------------------------------------===//
#ifndef KEEL_NUMERICS_DOUBLEDOUBLE_H
#define KEEL_NUMERICS_DOUBLEDOUBLE_H

namespace keel::fp::dd {

struct DD {
  double hi, lo;
};

inline DD twoSum(double a, double b) {
  double s = a + b, bb = s - a;
  return {s, (a - (s - bb)) + (b - bb)};
}
inline DD fastTwoSum(double a, double b) { // |a| >= |b|
  double s = a + b;
  return {s, b - (s - a)};
}
/// Dekker's split: hi has at most 26 significant bits, hi + lo == a.
inline DD split(double a) {
  double c = 134217729.0 * a; // 2^27 + 1
  double hi = c - (c - a);
  return {hi, a - hi};
}
inline DD twoProd(double a, double b) {
  double p = a * b;
  DD x = split(a), y = split(b);
  return {p, ((x.hi * y.hi - p) + x.hi * y.lo + x.lo * y.hi) + x.lo * y.lo};
}
inline DD add(DD a, DD b) {
  DD s = twoSum(a.hi, b.hi);
  DD t = twoSum(a.lo, b.lo);
  s = fastTwoSum(s.hi, s.lo + t.hi);
  return fastTwoSum(s.hi, s.lo + t.lo);
}
inline DD mul(DD a, DD b) {
  DD p = twoProd(a.hi, b.hi);
  return fastTwoSum(p.hi, p.lo + (a.hi * b.lo + a.lo * b.hi));
}
inline DD mul(DD a, double b) {
  DD p = twoProd(a.hi, b);
  return fastTwoSum(p.hi, p.lo + a.lo * b);
}
inline DD div(DD a, DD b) {
  double q1 = a.hi / b.hi;
  DD r = add(a, mul(b, -q1));
  double q2 = r.hi / b.hi;
  r = add(r, mul(b, -q2));
  double q3 = r.hi / b.hi;
  return add(fastTwoSum(q1, q2), DD{q3, 0});
}

} // namespace keel::fp::dd

#endif // KEEL_NUMERICS_DOUBLEDOUBLE_H
