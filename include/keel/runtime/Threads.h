/*===- keel/runtime/Threads.h - Running independent iterations on cores --===*
 *
 * A parallel loop of generated code (loop IR's `for.parallel`) calls
 * keel_rt_parallel_for with its body as a function of a range. The range
 * from .. to-1 is split into one contiguous part per thread, the first
 * (n mod T) parts one iteration longer (a static partition, OpenMP's
 * threads). The iterations are independent and each computes the same
 * bits wherever it runs, so no result depends on the thread count; the
 * count only decides how fast. A loop reached from inside another runs
 * on the calling thread.
 *
 *===----------------------------------------------------------------------===*/
#ifndef KEEL_RUNTIME_THREADS_H
#define KEEL_RUNTIME_THREADS_H

#include <stdint.h>

#ifdef __cplusplus
extern "C" {
#endif

typedef void (*KeelParallelBody)(void *context, int64_t begin, int64_t end);
void keel_rt_parallel_for(KeelParallelBody body, void *context, int64_t from, int64_t to);
/* The threads parallel loops use: `threads` (1 to KEEL_MAX_THREADS), or
 * with 0 the default, every CPU this process may run on. */
#define KEEL_MAX_THREADS 1024
void keel_rt_set_threads(int32_t threads);
int32_t keel_rt_threads(void);
/* The threads for the parallel loops the calling thread starts, in place of
 * keel_rt_set_threads's (1 to KEEL_MAX_THREADS; 0: that setting again): for
 * a host that runs several calls at once, each with its own count (the
 * Python module's `threads=`). */
void keel_rt_set_threads_here(int32_t threads);
/* The CPUs this process may run on (its affinity mask). */
int32_t keel_rt_available_cpus(void);

#ifdef __cplusplus
} /* extern "C" */
#endif

#endif /* KEEL_RUNTIME_THREADS_H */
