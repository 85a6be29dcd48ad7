/*===- keel/runtime/Print.h - Printing and stopping for generated code ---===*
 *
 * print(...) in a Keel program calls these: each value readably (integers in
 * decimal, floats as the shortest decimal that reads back to the same value
 * in their own format, bool as true/false), then a newline. A failed assert
 * prints "assertion failed at FILE:LINE:COL" and its message on stderr and
 * exits with status 1; an internal error (a Keel bug) exits with status 70.
 *
 *===----------------------------------------------------------------------===*/
#ifndef KEEL_RUNTIME_PRINT_H
#define KEEL_RUNTIME_PRINT_H

#include <stdint.h>

#ifdef __cplusplus
extern "C" {
#endif

void keel_rt_print_text(const char *text, int64_t length);
void keel_rt_print_bool(int8_t v);
void keel_rt_print_i64(int64_t v);
void keel_rt_print_u64(uint64_t v);
void keel_rt_print_f32(float v);
void keel_rt_print_f64(double v);
/* A low-precision value by its encoding; format: 0 f16, 1 bf16, 2 tf32,
 * 3 fp8e4m3fn, 4 fp8e5m2 (keel::fp::Format order). */
void keel_rt_print_lowp(int32_t format, uint64_t bits);
void keel_rt_print_end(void);
/* Starts an assertion failure: later prints go to stderr. */
void keel_rt_assert_begin(const char *file, int32_t line, int32_t column, int8_t hasMessage);
void keel_rt_assert_fail(void) __attribute__((noreturn));
void keel_rt_internal_error(const char *what) __attribute__((noreturn));

/* A tensor, readably and numpy-like: nested brackets in logical (row-major)
 * order whatever the layout, each element as print() shows a scalar, the
 * middle of a dimension longer than 8 elided with "...". */
struct KeelBuffer;
void keel_rt_print_tensor(const struct KeelBuffer *buffer);
/* The same for row-major elements at `data` (a KeelDType, rank, dims). */
void keel_rt_print_elements(const void *data, int32_t dtype, int32_t rank, const int64_t *dims);
/* A dimension of more than 8 elements prints its first 3, `...` and its last
 * 3, unless full printing is set (keel run / keel test --print-full). */
void keel_rt_set_print_full(int32_t full);
/* Memory for a tensor's elements (64-byte aligned; not cleared: generated
 * code writes every element before reading it); an impossible size stops
 * the program with the location and exit status 1. keel_rt_free keeps a few
 * freed blocks for reuse; it accepts NULL. */
void *keel_rt_alloc(int64_t bytes, const char *file, int32_t line, int32_t column);
void keel_rt_free(void *data);
/* Tensor memory is bounded: keel_rt_alloc stops the program, with the size
 * and location, rather than hold more than the limit (its cached blocks are
 * released first). The limit is the machine's memory (physical memory, or
 * the cgroup's limit when lower) unless set; keel run --max-memory sets it. */
int64_t keel_rt_machine_memory(void);
int64_t keel_rt_memory_limit(void);
void keel_rt_set_memory_limit(int64_t bytes);
/* Frees the blocks kept for reuse now (the host does before it writes
 * results); what is still kept when the process ends is freed then. */
void keel_rt_release_memory(void);
/* The data of argument `argument` (0-based; parameters, then results) of
 * tensor function `function`, after checking its descriptor against the
 * static type the function was compiled for: `expected` holds dtype, rank,
 * then rank dimensions, then rank minor_to_major entries. A mismatch (or a
 * null descriptor) stops the program, naming both types. */
void *keel_rt_buffer_data(const struct KeelBuffer *buffer, const int64_t *expected, int32_t argument,
                          const char *function);
/* The stack guard. Functions compiled from source compare their frame's
 * address with keel_rt_stack_limit on entry and call
 * keel_rt_stack_overflow below it: "error: stack overflow (recursion too
 * deep) in f at FILE:LINE:COL", exit status 1. keel_rt_set_stack_limit,
 * called on the thread that will run the program, lets it use `bytes` of
 * stack below the caller's frame (less, if the thread's stack is smaller,
 * keeping 256 KiB for the runtime's own calls). 0: no check fails. */
extern uint64_t keel_rt_stack_limit;
void keel_rt_set_stack_limit(uint64_t bytes);
void keel_rt_stack_overflow(const char *function, const char *file, int32_t line, int32_t column)
    __attribute__((noreturn));
/* An index outside a dimension: stops the program with the location. The
 * index is shown as unsigned when `isUnsigned` (a u64 index past 2^63). */
void keel_rt_index_error(int64_t index, int64_t dimension, int64_t axis, const char *file, int32_t line,
                         int32_t column, int8_t isUnsigned) __attribute__((noreturn));

#ifdef __cplusplus
} /* extern "C" */
#endif

#endif /* KEEL_RUNTIME_PRINT_H */
