/*===- keel/runtime/Buffer.h - The one tensor buffer descriptor ----------===*
 *
 * Every tensor that crosses the boundary of compiled code (the host calling
 * a tensor function's entry, which checks each descriptor against its static
 * type; printing; .npy files) travels as a KeelBuffer: element type, rank,
 * dimensions, layout (minor_to_major, a permutation of the dimensions;
 * row-major is rank-1, ..., 0) and a pointer to the data. Inside one
 * compiled module, where every type is static, scalar code and tensor
 * functions pass the data pointers alone.
 * Elements are stored in their encoding: pred and i4 one per byte (pred 0
 * or 1, i4 sign-extended), the others in their natural little-endian width
 * (tf32 in its 32-bit f32 carrier). The element type codes are fixed: the
 * order of the tensor IR's DType (checked by a static_assert in the IR).
 *
 *===----------------------------------------------------------------------===*/
#ifndef KEEL_RUNTIME_BUFFER_H
#define KEEL_RUNTIME_BUFFER_H

#include <stddef.h>
#include <stdint.h>

#ifdef __cplusplus
extern "C" {
#endif

enum KeelDType {
  KEEL_PRED = 0, KEEL_I4, KEEL_I8, KEEL_I16, KEEL_I32, KEEL_I64,
  KEEL_U8, KEEL_U16, KEEL_U32, KEEL_U64,
  KEEL_F16, KEEL_BF16, KEEL_TF32, KEEL_FP8E4M3FN, KEEL_FP8E5M2, KEEL_F32, KEEL_F64,
  KEEL_NUM_DTYPES
};

#define KEEL_MAX_RANK 16

typedef struct KeelBuffer {
  uint8_t dtype; /* enum KeelDType */
  uint8_t rank;
  int64_t dims[KEEL_MAX_RANK];
  int64_t minor_to_major[KEEL_MAX_RANK];
  void *data;
} KeelBuffer;

/* Bytes per stored element (pred and i4: 1). */
size_t keel_dtype_size(uint8_t dtype);

#ifdef __cplusplus
} /* extern "C" */
#endif

#endif /* KEEL_RUNTIME_BUFFER_H */
