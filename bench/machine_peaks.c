/* The machine's limits for bench/oracle_bench.py, on THREADS threads
 * (OpenMP): the peak rate of separate f32 multiplies and adds (what Keel's
 * contractions may use: each product rounded, then added) and of fused
 * multiply-adds, each from independent vector chains that stay in
 * registers; and the memory bandwidth of a parallel copy.
 *
 *   gcc -O2 -march=native -fopenmp -ffp-contract=off -DMODE_MULADD ...
 *   gcc -O2 -march=native -fopenmp -ffp-contract=fast -DMODE_FMA ...
 *   gcc -O2 -march=native -fopenmp -DMODE_COPY ...
 *
 * prints one number: GFLOP/s (each multiply and each add a flop), or GB/s
 * (bytes read plus written); the best of 6 runs, since the first ones are
 * slowed by the clock ramping up. */
#include <omp.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

/* One register per chain: 16 chains of 16 lanes in AVX-512's 32 registers,
 * else 14 of 8 lanes in AVX2's 16 (chains enough to cover the latency of
 * two pipes). */
#ifdef __AVX512F__
#define LANES 16
#define CHAINS 16
#else
#define LANES 8
#define CHAINS 14
#endif
typedef float vec __attribute__((vector_size(4 * LANES)));

static double now(void) { return omp_get_wtime(); }

#if defined(MODE_MULADD) || defined(MODE_FMA)
static double peak(int threads, long steps) {
  double best = 0;
  for (int run = 0; run < 6; ++run) {
    double start = now();
    float sink = 0;
#pragma omp parallel num_threads(threads) reduction(+ : sink)
    {
      vec acc[CHAINS], x, y;
      for (int i = 0; i < LANES; ++i) {
        x[i] = 1.0f + 1e-7f * (float)(i + omp_get_thread_num());
        y[i] = 1e-8f;
      }
      for (int c = 0; c < CHAINS; ++c)
        acc[c] = x * (float)c;
      for (long s = 0; s < steps; ++s) {
#pragma GCC unroll 16
        for (int c = 0; c < CHAINS; ++c)
          acc[c] = acc[c] * x + y; /* a multiply and an add, fused or not by the flags */
      }
      for (int c = 0; c < CHAINS; ++c)
        for (int i = 0; i < LANES; ++i)
          sink += acc[c][i];
    }
    double seconds = now() - start;
    double gflops = 2.0 * LANES * CHAINS * (double)steps * threads / seconds / 1e9;
    if (gflops > best)
      best = gflops;
    if (sink == 12345.0f)
      puts("");
  }
  return best;
}
#endif

int main(int argc, char **argv) {
  int threads = argc > 1 ? atoi(argv[1]) : 1;
  if (threads < 1)
    threads = 1;
#if defined(MODE_MULADD) || defined(MODE_FMA)
  printf("%.1f\n", peak(threads, 20000000));
#else
  size_t bytes = (size_t)256 << 20;
  char *from = aligned_alloc(64, bytes), *to = aligned_alloc(64, bytes);
  double best = 0;
#pragma omp parallel for num_threads(threads) schedule(static)
  for (size_t i = 0; i < bytes; i += 4096) {
    memset(from + i, 1, 4096);
    memset(to + i, 0, 4096);
  }
  for (int run = 0; run < 6; ++run) {
    double start = now();
#pragma omp parallel num_threads(threads)
    {
      size_t part = bytes / (size_t)omp_get_num_threads(), at = part * (size_t)omp_get_thread_num();
      memcpy(to + at, from + at, part);
    }
    double gbs = 2.0 * (double)bytes / (now() - start) / 1e9;
    if (gbs > best)
      best = gbs;
  }
  printf("%.1f\n", best);
  free(from);
  free(to);
#endif
  return 0;
}
