/*===- keel/numerics/Helpers.h - Format-named helpers for generated code -===*
 *
 * The stable C entry points that generated programs call (SFEP-0054 section
 * 3.7). Every name carries the full format name, so an fp8e4m3fn helper can
 * never be called on an fp8e5m2 byte by accident. Carriers:
 *   f16, bf16        uint16_t  (raw encoding)
 *   fp8e4m3fn/e5m2   uint8_t   (raw encoding)
 *   tf32             float     (an f32 whose 13 low fraction bits are zero)
 * Semantics are those of keel/numerics/Format.h: one rounding to nearest
 * even, subnormals kept, canonical NaNs with their sign, fp8e4m3fn
 * saturating to +-448. None of these functions reads or changes the
 * floating-point environment, and none depends on flush-to-zero modes.
 *
 * Scalar: keel_f32_to_F, keel_f64_to_F, keel_i64_to_F, keel_u64_to_F,
 *         keel_F_to_f32, keel_F_to_f64;
 *         keel_F_{add,sub,mul,div} for f16, bf16, tf32;
 *         keel_F_cmp for every F: KEEL_CMP_LESS, _EQUAL, _GREATER, _UNORDERED.
 * Bulk:   keel_f32_to_F_array(in, out, n) and keel_F_to_f32_array(in, out, n);
 *         the arrays must not overlap. Bulk and scalar results are identical.
 *
 *===----------------------------------------------------------------------===*/
#ifndef KEEL_NUMERICS_HELPERS_H
#define KEEL_NUMERICS_HELPERS_H

#include <stddef.h>
#include <stdint.h>

#ifdef __cplusplus
extern "C" {
#endif

enum { KEEL_CMP_LESS = -1, KEEL_CMP_EQUAL = 0, KEEL_CMP_GREATER = 1, KEEL_CMP_UNORDERED = 2 };

#define KEEL_FP_FORMATS(X)                                                     \
  X(f16, uint16_t)                                                             \
  X(bf16, uint16_t)                                                            \
  X(tf32, float)                                                               \
  X(fp8e4m3fn, uint8_t)                                                        \
  X(fp8e5m2, uint8_t)

#define KEEL_DECLARE_CONVERSIONS(NAME, CARRIER)                                \
  CARRIER keel_f32_to_##NAME(float v);                                         \
  CARRIER keel_f64_to_##NAME(double v);                                        \
  CARRIER keel_i64_to_##NAME(int64_t v);                                       \
  CARRIER keel_u64_to_##NAME(uint64_t v);                                      \
  float keel_##NAME##_to_f32(CARRIER v);                                       \
  double keel_##NAME##_to_f64(CARRIER v);                                      \
  int keel_##NAME##_cmp(CARRIER a, CARRIER b);                                 \
  void keel_f32_to_##NAME##_array(const float *in, CARRIER *out, size_t n);    \
  void keel_##NAME##_to_f32_array(const CARRIER *in, float *out, size_t n);
KEEL_FP_FORMATS(KEEL_DECLARE_CONVERSIONS)
#undef KEEL_DECLARE_CONVERSIONS

#define KEEL_DECLARE_ARITHMETIC(NAME, CARRIER)                                 \
  CARRIER keel_##NAME##_add(CARRIER a, CARRIER b);                             \
  CARRIER keel_##NAME##_sub(CARRIER a, CARRIER b);                             \
  CARRIER keel_##NAME##_mul(CARRIER a, CARRIER b);                             \
  CARRIER keel_##NAME##_div(CARRIER a, CARRIER b);
KEEL_DECLARE_ARITHMETIC(f16, uint16_t)
KEEL_DECLARE_ARITHMETIC(bf16, uint16_t)
KEEL_DECLARE_ARITHMETIC(tf32, float)
#undef KEEL_DECLARE_ARITHMETIC

#ifdef __cplusplus
} /* extern "C" */
#endif

#endif /* KEEL_NUMERICS_HELPERS_H */
