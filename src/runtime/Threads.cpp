//===- Threads.cpp - keel_rt_parallel_for on OpenMP's threads -------------===//
#include "keel/runtime/Threads.h"

#include <omp.h>

#include <algorithm>
#include <atomic>

namespace {
std::atomic<int32_t> chosenThreads{0}; ///< 0: every available CPU
thread_local int32_t threadsHere = 0;  ///< 0: chosenThreads
} // namespace

extern "C" {

int32_t keel_rt_available_cpus(void) { return std::max(1, omp_get_num_procs()); }

void keel_rt_set_threads(int32_t threads) {
  chosenThreads = std::clamp(threads, 0, KEEL_MAX_THREADS);
}

void keel_rt_set_threads_here(int32_t threads) { threadsHere = std::clamp(threads, 0, KEEL_MAX_THREADS); }

int32_t keel_rt_threads(void) {
  int32_t t = threadsHere > 0 ? threadsHere : chosenThreads.load();
  return t > 0 ? t : keel_rt_available_cpus();
}

void keel_rt_parallel_for(KeelParallelBody body, void *context, int64_t from, int64_t to) {
  if (to <= from)
    return;
  int64_t n = to - from;
  int64_t threads = std::min<int64_t>(keel_rt_threads(), n);
  if (threads <= 1 || omp_in_parallel()) {
    body(context, from, to);
    return;
  }
#pragma omp parallel num_threads(static_cast<int>(threads))
  {
    int64_t t = omp_get_thread_num(), parts = omp_get_num_threads();
    int64_t size = n / parts, longer = n % parts;
    int64_t begin = from + t * size + std::min(t, longer);
    int64_t end = begin + size + (t < longer ? 1 : 0);
    if (begin < end)
      body(context, begin, end);
  }
}

} // extern "C"
