//===- fp_bulk_bench.cpp - Bulk f32 <-> low-precision conversion speed ---===//
//
// Converts N f32 values (default 64M) to each low-precision format and back,
// and prints the throughput of each direction beside a memcpy measured in
// the same run, and beside the CPU's F16C instructions for f16 where the CPU
// has them.
//
// Throughput counts the bytes a loop moves: bytes read plus bytes written,
// per second (a memcpy of S bytes moves 2S). Each figure is the best of R
// runs over buffers that were touched before timing. The ratio column is
// throughput / memcpy throughput: 1.0 means the conversion runs as fast as
// copying memory of the same traffic.
//
//   fp_bulk_bench [--elements N] [--runs R]
//
//===----------------------------------------------------------------------===//
#include "FastConvert.h" // the portable f16 loop, for comparison
#include "keel/numerics/Helpers.h"

#include <algorithm>
#include <chrono>
#include <cmath>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <functional>
#include <numeric>
#include <random>
#include <string>
#include <vector>

#if defined(__x86_64__)
#include <immintrin.h>
#define KEEL_HAVE_F16C_PATH 1
#endif

namespace {

double bestSeconds(int runs, const std::function<void()> &body) {
  double best = 1e30;
  for (int r = 0; r < runs; ++r) {
    auto start = std::chrono::steady_clock::now();
    body();
    std::chrono::duration<double> took = std::chrono::steady_clock::now() - start;
    best = std::min(best, took.count());
  }
  return best;
}

#ifdef KEEL_HAVE_F16C_PATH
__attribute__((target("avx,f16c"))) void f16cNarrow(const float *in, uint16_t *out, size_t n) {
  size_t i = 0;
  for (; i + 8 <= n; i += 8) {
    __m128i h = _mm256_cvtps_ph(_mm256_loadu_ps(in + i), _MM_FROUND_TO_NEAREST_INT);
    _mm_storeu_si128(reinterpret_cast<__m128i *>(out + i), h);
  }
  for (; i < n; ++i)
    out[i] = static_cast<uint16_t>(_cvtss_sh(in[i], _MM_FROUND_TO_NEAREST_INT));
}
__attribute__((target("avx,f16c"))) void f16cWiden(const uint16_t *in, float *out, size_t n) {
  size_t i = 0;
  for (; i + 8 <= n; i += 8)
    _mm256_storeu_ps(out + i, _mm256_cvtph_ps(_mm_loadu_si128(reinterpret_cast<const __m128i *>(in + i))));
  for (; i < n; ++i)
    out[i] = _cvtsh_ss(in[i]);
}
#endif

struct Row {
  std::string name;
  double bytesMoved, seconds;
};

} // namespace

int main(int argc, char **argv) {
  size_t n = size_t{64} << 20;
  int runs = 5;
  for (int i = 1; i < argc; ++i) {
    std::string arg = argv[i];
    if ((arg == "--elements" || arg == "--runs") && i + 1 < argc) {
      char *end = nullptr;
      unsigned long long v = std::strtoull(argv[++i], &end, 10);
      if (*end != '\0' || v == 0) {
        std::fprintf(stderr, "fp_bulk_bench: error: '%s' needs a positive integer\n", arg.c_str());
        return 2;
      }
      if (arg == "--elements")
        n = static_cast<size_t>(v);
      else
        runs = static_cast<int>(std::min<unsigned long long>(v, 1000));
    } else {
      std::fprintf(stderr, "usage: fp_bulk_bench [--elements N] [--runs R]\n");
      return 2;
    }
  }

  // Inputs: magnitudes spread over 2^-20 .. 2^20 with both signs, the range
  // activations and weights live in; deterministic.
  std::vector<float> src(n), back(n), copy(n);
  std::vector<uint16_t> half(n);
  std::vector<uint8_t> byte(n);
  std::mt19937 rng(2026);
  std::uniform_real_distribution<float> mant(-2.0f, 2.0f);
  std::uniform_int_distribution<int> exp(-20, 20);
  for (float &x : src)
    x = std::ldexp(mant(rng), exp(rng));
  // Touch every output page before timing.
  std::memset(back.data(), 0, n * 4);
  std::memset(copy.data(), 0, n * 4);
  std::memset(half.data(), 0, n * 2);
  std::memset(byte.data(), 0, n);

  std::vector<Row> rows;
  double memcpySeconds = bestSeconds(runs, [&] { std::memcpy(copy.data(), src.data(), n * 4); });
  double memcpyRate = 2.0 * n * 4 / memcpySeconds;

  auto measure = [&](const std::string &name, double bytesMoved, const std::function<void()> &body) {
    rows.push_back({name, bytesMoved, bestSeconds(runs, body)});
  };
  measure("f32 -> bf16", n * 6.0, [&] { keel_f32_to_bf16_array(src.data(), half.data(), n); });
  measure("bf16 -> f32", n * 6.0, [&] { keel_bf16_to_f32_array(half.data(), back.data(), n); });
  measure("f32 -> f16", n * 6.0, [&] { keel_f32_to_f16_array(src.data(), half.data(), n); });
  measure("f32 -> f16 (portable)", n * 6.0,
          [&] { keel::fp::detail::f32ToF16ArrayPortable(src.data(), half.data(), n); });
  measure("f16 -> f32", n * 6.0, [&] { keel_f16_to_f32_array(half.data(), back.data(), n); });
  bool haveF16c = false;
  size_t f16cDisagree = 0;
#ifdef KEEL_HAVE_F16C_PATH
  haveF16c = __builtin_cpu_supports("f16c");
  if (haveF16c) {
    std::vector<uint16_t> hw(n);
    std::memset(hw.data(), 0, n * 2);
    measure("f32 -> f16 (F16C)", n * 6.0, [&] { f16cNarrow(src.data(), hw.data(), n); });
    measure("f16 -> f32 (F16C)", n * 6.0, [&] { f16cWiden(hw.data(), back.data(), n); });
    keel_f32_to_f16_array(src.data(), half.data(), n);
    f16cNarrow(src.data(), hw.data(), n);
    f16cDisagree = static_cast<size_t>(
        std::inner_product(half.begin(), half.end(), hw.begin(), size_t{0}, std::plus<>(),
                           [](uint16_t a, uint16_t b) { return size_t{a != b}; }));
  }
#endif
  measure("f32 -> tf32", n * 8.0, [&] { keel_f32_to_tf32_array(src.data(), back.data(), n); });
  measure("tf32 -> f32", n * 8.0, [&] { keel_tf32_to_f32_array(back.data(), copy.data(), n); });
  measure("f32 -> fp8e4m3fn", n * 5.0, [&] { keel_f32_to_fp8e4m3fn_array(src.data(), byte.data(), n); });
  measure("fp8e4m3fn -> f32", n * 5.0, [&] { keel_fp8e4m3fn_to_f32_array(byte.data(), back.data(), n); });
  measure("f32 -> fp8e5m2", n * 5.0, [&] { keel_f32_to_fp8e5m2_array(src.data(), byte.data(), n); });
  measure("fp8e5m2 -> f32", n * 5.0, [&] { keel_fp8e5m2_to_f32_array(byte.data(), back.data(), n); });

  std::printf("keel bulk conversions: %zu elements, best of %d runs\n", n, runs);
  std::printf("throughput = (bytes read + bytes written) / second\n\n");
  std::printf("%-22s %10s %12s\n", "loop", "GB/s", "vs memcpy");
  std::printf("%-22s %10.2f %12.2f\n", "memcpy", memcpyRate / 1e9, 1.0);
  for (const Row &r : rows) {
    double rate = r.bytesMoved / r.seconds;
    std::printf("%-22s %10.2f %12.2f\n", r.name.c_str(), rate / 1e9, rate / memcpyRate);
  }
  if (!haveF16c)
    std::printf("\nF16C: not available on this CPU\n");
  else
    std::printf("\nF16C and keel_f32_to_f16_array differ on %zu of %zu inputs "
                "(inputs hold no NaN, where only the payload rule would differ)\n",
                f16cDisagree, n);
  return 0;
}
