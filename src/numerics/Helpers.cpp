//===- Helpers.cpp - The C entry points of keel/numerics/Helpers.h -------===//
//
// Scalar f32 conversions and all bulk loops use the kernels of
// FastConvert.h; f64 sources and arithmetic use the exact library routines.
// Bulk loops are compiled twice (AVX2 and baseline x86-64) and the loader
// picks one for the CPU (GCC function multiversioning); both compute the
// same bits, since the kernels are integer code.
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
  extern "C" float keel_##NAME##_to_f32(CARRIER v) { return widen_##NAME(v); } \
  extern "C" double keel_##NAME##_to_f64(CARRIER v) {                          \
    return static_cast<double>(widen_##NAME(v));                               \
  }                                                                            \
  extern "C" int keel_##NAME##_cmp(CARRIER a, CARRIER b) {                     \
    return orderingToInt(compare(k_##NAME, bitsOf(a), bitsOf(b)));            \
  }                                                                            \
  extern "C" KEEL_MULTIVERSION void keel_f32_to_##NAME##_array(                \
      const float *__restrict in, CARRIER *__restrict out, size_t n) {           \
    for (size_t i = 0; i < n; ++i)                                             \
      out[i] = narrow_##NAME(in[i]);                                           \
  }
KEEL_FP_FORMATS(KEEL_DEFINE_CONVERSIONS)
#undef KEEL_DEFINE_CONVERSIONS

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
