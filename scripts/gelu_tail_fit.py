#!/usr/bin/env python3
"""Coefficients of the f32 GELU tail kernel in src/codegen/Codegen.cpp.

The vector variants of keel_gelu_f32 compute, for 2.12 < |x| <= 8 outside
the library's series range, erfc(|x| / sqrt 2) = exp(-x^2 / 2) G(|x|) with
G(s) = exp(s^2 / 2) erfc(s / sqrt 2) (the scaled complementary error
function, an entire function), by one polynomial in y = s - c per interval:
the interpolant of G at the Chebyshev points of the interval, in monomial
form, computed with mpmath at 200 bits and rounded to double. Prints the C++
table and, for each interval, the largest relative error of its Horner
evaluation in IEEE double (no fused multiply-add) against G on a grid.

    python3 scripts/gelu_tail_fit.py  (Debian: python3-mpmath)
"""
import mpmath as mp

mp.mp.prec = 200
INTERVALS = [(2.12, 3.5), (3.5, 5.0), (5.0, 8.0)]
DEGREE = 16


def scaled_erfc(s):
    return mp.erfc(s / mp.sqrt(2)) * mp.exp(s * s / 2)


def fit(lo, hi):
    lo, hi = mp.mpf(lo), mp.mpf(hi)
    center, half = (lo + hi) / 2, (hi - lo) / 2
    nodes = [center + half * mp.cos(mp.pi * (k + mp.mpf(1) / 2) / (DEGREE + 1)) for k in range(DEGREE + 1)]
    vandermonde = mp.matrix([[(n - center) ** j for j in range(DEGREE + 1)] for n in nodes])
    a = mp.lu_solve(vandermonde, mp.matrix([scaled_erfc(n) for n in nodes]))
    return float(center), [float(a[j]) for j in range(DEGREE + 1)]


def horner(center, a, s):
    y = s - center
    p = a[-1]
    for k in range(len(a) - 2, -1, -1):
        p = a[k] + y * p
    return p


def main():
    print(f"// scripts/gelu_tail_fit.py: {len(INTERVALS)} intervals, degree {DEGREE}")
    for lo, hi in INTERVALS:
        center, a = fit(lo, hi)
        worst = 0.0
        for i in range(2001):
            s = lo + (hi - lo) * i / 2000
            worst = max(worst, abs(float(mp.mpf(horner(center, a, s)) / scaled_erfc(mp.mpf(s)) - 1)))
        print(f"// [{lo}, {hi}): largest relative error {worst:.2e} (2^{float(mp.log(worst, 2)):.1f})")
        print("{" + f"{center.hex()}, {{" + ", ".join(v.hex() for v in a) + "}},")


if __name__ == "__main__":
    main()
