/*===- keel/numerics/Math.h - Deterministic elementary functions ---------===*
 *
 * The transcendental functions of Keel programs, written in Keel from IEEE
 * f64 additions, subtractions, multiplications, divisions and square roots
 * only (no libm, no fused multiply-add: the library is built with
 * -ffp-contract=off), so every machine gives the same bits. Measured
 * accuracy against GNU MPFR is in docs/semantics.md.
 *
 *   exp log tanh sigmoid silu gelu pow   f64, from their own algorithms
 *   sin cos                              exact argument reduction (Payne-Hanek)
 *                                        and double-double kernels (Trig.cpp);
 *                                        f32 forms correctly rounded
 *   sqrt                                 the IEEE square root (exact rounding)
 *   rsqrt                                1 / sqrt(x), two IEEE roundings
 *
 * gelu is the exact form x * Phi(x) = x/2 * (1 + erf(x / sqrt(2))); silu is
 * x * sigmoid(x). pow follows C99 Annex F for its special cases. The f32
 * forms evaluate the f64 function on the exactly widened input and round
 * the result once to f32 (rsqrt: 1 / sqrt in f64, rounded once to f32),
 * except tanh and gelu, whose f32 forms are their own f64 evaluations
 * (tanh: a shorter series, relative error below 2^-40 before the final
 * rounding; gelu: plain f64 instead of double-double, error below 2^-46);
 * sin and cos round their double-double result once to f32, correctly.
 * NaN inputs give a quiet NaN of the input (its payload kept); invalid
 * operations (log of a negative number, pow of a negative number to a
 * non-integer) give the positive quiet NaN 0x7FF8000000000000.
 *
 *===----------------------------------------------------------------------===*/
#ifndef KEEL_NUMERICS_MATH_H
#define KEEL_NUMERICS_MATH_H

#ifdef __cplusplus
extern "C" {
#endif

#define KEEL_MATH_UNARY(X) X(exp) X(log) X(tanh) X(sigmoid) X(silu) X(gelu) X(sqrt) X(rsqrt) X(sin) X(cos)

#define KEEL_DECLARE_MATH(NAME)                                                \
  double keel_##NAME##_f64(double x);                                          \
  float keel_##NAME##_f32(float x);
KEEL_MATH_UNARY(KEEL_DECLARE_MATH)
#undef KEEL_DECLARE_MATH

double keel_pow_f64(double x, double y);
float keel_pow_f32(float x, float y);

/* The 40 coefficients (-1)^n / (n! (2n+1)) of erf's Taylor series that
 * keel_gelu_f32 evaluates for -2.12 <= x <= 3, for code generation, whose
 * vectorized gelu must compute with the same constants. */
#define KEEL_GELU_F32_SERIES_TERMS 40
const double *keel_gelu_f32_series(void);

#ifdef __cplusplus
} /* extern "C" */
#endif

#endif /* KEEL_NUMERICS_MATH_H */
