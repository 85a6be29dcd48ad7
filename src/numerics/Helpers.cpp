//===- Helpers.cpp - The C entry points of keel/numerics/Helpers.h -------===//
//
// Scalar f32 conversions and all bulk loops use the kernels of
// FastConvert.h; f64 sources and arithmetic use the exact library routines.
// On x86-64, bulk loops are compiled three times (x86-64-v4 with AVX-512,
// AVX2, baseline) and the loader picks one for the CPU (GCC function
// multiversioning); all compute the same bits, since the kernels are integer
// code. f32 -> f16 uses the CPU's F16C instruction where it may (see
// f32ToF16ArrayF16c). The exhaustive tests compare every path with convert().
//
//===----------------------------------------------------------------------===//
#include "keel/numerics/Helpers.h"

#include "FastConvert.h"
#include "keel/numerics/Format.h"

#include <bit>

using namespace keel::fp;
using namespace keel::fp::detail;

#if defined(__x86_64__) && defined(__GNUC__) && !defined(__clang__)
#define KEEL_MULTIVERSION __attribute__((target_clones("arch=x86-64-v4", "avx2", "default")))
#define KEEL_HAVE_F16C 1
#include <immintrin.h>
#else
#define KEEL_MULTIVERSION
#endif

namespace keel::fp::detail {
namespace {
std::array<uint32_t, 256> buildFp8Table(Format f) {
  std::array<uint32_t, 256> table{};
  for (uint32_t byte = 0; byte < 256; ++byte)
    table[byte] = static_cast<uint32_t>(convert(f, Format::F32, byte));
  return table;
}
} // namespace
const std::array<uint32_t, 256> &fp8e4m3fnToF32Table() {
  static const std::array<uint32_t, 256> table = buildFp8Table(Format::FP8E4M3FN);
  return table;
}
const std::array<uint32_t, 256> &fp8e5m2ToF32Table() {
  static const std::array<uint32_t, 256> table = buildFp8Table(Format::FP8E5M2);
  return table;
}
} // namespace keel::fp::detail

namespace {

// Carrier <-> encoding. tf32 travels as float; the others as their bits.
template <typename Carrier> uint64_t bitsOf(Carrier v) {
  if constexpr (std::is_same_v<Carrier, float>)
    return std::bit_cast<uint32_t>(v);
  else
    return v;
}
template <typename Carrier> Carrier carrierOf(uint64_t bits) {
  if constexpr (std::is_same_v<Carrier, float>)
    return std::bit_cast<float>(static_cast<uint32_t>(bits));
  else
    return static_cast<Carrier>(bits);
}

// The two f32 kernels of each format, as carrier -> carrier functions.
uint16_t narrow_f16(float v) { return f32ToF16(std::bit_cast<uint32_t>(v)); }
uint16_t narrow_bf16(float v) { return f32ToBf16(std::bit_cast<uint32_t>(v)); }
float narrow_tf32(float v) { return std::bit_cast<float>(f32ToTf32(std::bit_cast<uint32_t>(v))); }
uint8_t narrow_fp8e4m3fn(float v) { return f32ToFp8e4m3fn(std::bit_cast<uint32_t>(v)); }
uint8_t narrow_fp8e5m2(float v) { return f32ToFp8e5m2(std::bit_cast<uint32_t>(v)); }

float widen_f16(uint16_t v) { return std::bit_cast<float>(f16ToF32(v)); }
float widen_bf16(uint16_t v) { return std::bit_cast<float>(bf16ToF32(v)); }
float widen_tf32(float v) { return std::bit_cast<float>(tf32ToF32(std::bit_cast<uint32_t>(v))); }
float widen_fp8e4m3fn(uint8_t v) { return std::bit_cast<float>(fp8e4m3fnToF32Table()[v]); }
float widen_fp8e5m2(uint8_t v) { return std::bit_cast<float>(fp8e5m2ToF32Table()[v]); }

int orderingToInt(Ordering o) { return static_cast<int>(o); }

constexpr Format k_f16 = Format::F16;
constexpr Format k_bf16 = Format::BF16;
constexpr Format k_tf32 = Format::TF32;
constexpr Format k_fp8e4m3fn = Format::FP8E4M3FN;
constexpr Format k_fp8e5m2 = Format::FP8E5M2;

// Widening kernels for the bulk loops: the fp8 ones take the table once,
// outside the loop, so the loop body is a plain (gatherable) load.
template <typename Carrier, typename Kernel>
inline void widenLoop(const Carrier *__restrict in, float *__restrict out, size_t n, Kernel kernel) {
  for (size_t i = 0; i < n; ++i)
    out[i] = kernel(in[i]);
}
inline void widenTableLoop(const uint8_t *__restrict in, float *__restrict out, size_t n,
                           const std::array<uint32_t, 256> &table) {
  const uint32_t *t = table.data();
  for (size_t i = 0; i < n; ++i)
    out[i] = std::bit_cast<float>(t[in[i]]);
}

} // namespace

#define KEEL_DEFINE_CONVERSIONS(NAME, CARRIER)                                 \
  extern "C" CARRIER keel_f32_to_##NAME(float v) { return narrow_##NAME(v); }  \
  extern "C" CARRIER keel_f64_to_##NAME(double v) {                            \
    return carrierOf<CARRIER>(fromF64(k_##NAME, v));                           \
  }                                                                            \
  extern "C" CARRIER keel_i64_to_##NAME(int64_t v) {                           \
    return carrierOf<CARRIER>(fromI64(k_##NAME, v));                           \
  }                                                                            \
  extern "C" CARRIER keel_u64_to_##NAME(uint64_t v) {                          \
    return carrierOf<CARRIER>(fromU64(k_##NAME, v));                           \
  }                                                                            \
  extern "C" float keel_##NAME##_to_f32(CARRIER v) { return widen_##NAME(v); } \
  extern "C" double keel_##NAME##_to_f64(CARRIER v) {                          \
    return toF64(k_##NAME, bitsOf(v));                                         \
  }                                                                            \
  extern "C" int keel_##NAME##_cmp(CARRIER a, CARRIER b) {                     \
    return orderingToInt(compare(k_##NAME, bitsOf(a), bitsOf(b)));            \
  }
#define KEEL_DEFINE_BULK_NARROWING(NAME, CARRIER)                              \
  extern "C" KEEL_MULTIVERSION void keel_f32_to_##NAME##_array(                \
      const float *__restrict in, CARRIER *__restrict out, size_t n) {         \
    for (size_t i = 0; i < n; ++i)                                             \
      out[i] = narrow_##NAME(in[i]);                                           \
  }
KEEL_DEFINE_BULK_NARROWING(bf16, uint16_t)
KEEL_DEFINE_BULK_NARROWING(tf32, float)
KEEL_DEFINE_BULK_NARROWING(fp8e4m3fn, uint8_t)
KEEL_DEFINE_BULK_NARROWING(fp8e5m2, uint8_t)
#undef KEEL_DEFINE_BULK_NARROWING
KEEL_FP_FORMATS(KEEL_DEFINE_CONVERSIONS)
#undef KEEL_DEFINE_CONVERSIONS

#ifdef KEEL_HAVE_F16C
namespace {
// f32 -> f16 with the CPU's F16C instruction, which rounds to nearest even
// (the immediate selects the mode, so MXCSR's rounding field is not read)
// and keeps subnormals. Only NaNs differ from the contract: the hardware
// keeps part of the payload, so NaN lanes are replaced by the canonical NaN
// of their sign. Used only while MXCSR's flush-to-zero and
// denormals-are-zero bits are clear, which Keel never sets.
__attribute__((target("avx2,f16c"))) void f32ToF16ArrayF16c(const float *__restrict in,
                                                           uint16_t *__restrict out,
                                                           size_t n) {
  const __m128i magnitude = _mm_set1_epi16(0x7FFF), signBit = _mm_set1_epi16(-0x8000);
  const __m128i infinity = _mm_set1_epi16(0x7C00), quietNaN = _mm_set1_epi16(0x7E00);
  size_t i = 0;
  for (; i + 8 <= n; i += 8) {
    __m128i h = _mm256_cvtps_ph(_mm256_loadu_ps(in + i), _MM_FROUND_TO_NEAREST_INT);
    __m128i isNaN = _mm_cmpgt_epi16(_mm_and_si128(h, magnitude), infinity);
    __m128i canonical = _mm_or_si128(_mm_and_si128(h, signBit), quietNaN);
    h = _mm_blendv_epi8(h, canonical, isNaN);
    _mm_storeu_si128(reinterpret_cast<__m128i *>(out + i), h);
  }
  for (; i < n; ++i)
    out[i] = narrow_f16(in[i]);
}

bool f16cUsable() {
  static const bool cpu = __builtin_cpu_supports("f16c") && __builtin_cpu_supports("avx2");
  constexpr unsigned kFlushToZero = 1u << 15, kDenormalsAreZero = 1u << 6;
  return cpu && (_mm_getcsr() & (kFlushToZero | kDenormalsAreZero)) == 0;
}
} // namespace
#endif

namespace keel::fp::detail {
KEEL_MULTIVERSION void f32ToF16ArrayPortable(const float *__restrict in, uint16_t *__restrict out,
                                             size_t n) {
  for (size_t i = 0; i < n; ++i)
    out[i] = narrow_f16(in[i]);
}
} // namespace keel::fp::detail

extern "C" void keel_f32_to_f16_array(const float *in, uint16_t *out, size_t n) {
#ifdef KEEL_HAVE_F16C
  if (f16cUsable())
    return f32ToF16ArrayF16c(in, out, n);
#endif
  f32ToF16ArrayPortable(in, out, n);
}

extern "C" KEEL_MULTIVERSION void keel_f16_to_f32_array(const uint16_t *in, float *out, size_t n) {
  widenLoop(in, out, n, widen_f16);
}
extern "C" KEEL_MULTIVERSION void keel_bf16_to_f32_array(const uint16_t *in, float *out, size_t n) {
  widenLoop(in, out, n, widen_bf16);
}
extern "C" KEEL_MULTIVERSION void keel_tf32_to_f32_array(const float *in, float *out, size_t n) {
  widenLoop(in, out, n, widen_tf32);
}
extern "C" KEEL_MULTIVERSION void keel_fp8e4m3fn_to_f32_array(const uint8_t *in, float *out, size_t n) {
  widenTableLoop(in, out, n, fp8e4m3fnToF32Table());
}
extern "C" KEEL_MULTIVERSION void keel_fp8e5m2_to_f32_array(const uint8_t *in, float *out, size_t n) {
  widenTableLoop(in, out, n, fp8e5m2ToF32Table());
}

#define KEEL_DEFINE_ARITHMETIC(NAME, CARRIER)                                  \
  extern "C" CARRIER keel_##NAME##_add(CARRIER a, CARRIER b) {                 \
    return carrierOf<CARRIER>(arith(k_##NAME, ArithOp::Add, bitsOf(a), bitsOf(b))); \
  }                                                                            \
  extern "C" CARRIER keel_##NAME##_sub(CARRIER a, CARRIER b) {                 \
    return carrierOf<CARRIER>(arith(k_##NAME, ArithOp::Sub, bitsOf(a), bitsOf(b))); \
  }                                                                            \
  extern "C" CARRIER keel_##NAME##_mul(CARRIER a, CARRIER b) {                 \
    return carrierOf<CARRIER>(arith(k_##NAME, ArithOp::Mul, bitsOf(a), bitsOf(b))); \
  }                                                                            \
  extern "C" CARRIER keel_##NAME##_div(CARRIER a, CARRIER b) {                 \
    return carrierOf<CARRIER>(arith(k_##NAME, ArithOp::Div, bitsOf(a), bitsOf(b))); \
  }
KEEL_DEFINE_ARITHMETIC(f16, uint16_t)
KEEL_DEFINE_ARITHMETIC(bf16, uint16_t)
KEEL_DEFINE_ARITHMETIC(tf32, float)
#undef KEEL_DEFINE_ARITHMETIC
