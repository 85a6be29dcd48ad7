//===- keel/loop/LowerTensor.h - The scalar-reference lowering -*- C++ -*-===//
//
// The CPU oracle (SFEP-0053 §3.6, spec README §6): every verified tensor IR
// function becomes a loop IR function that computes each element of each
// result by plain loops, in the logical (row-major) iteration order.
//
//   fn @NAME(%0: ptr, ..., %P-1: ptr, %P: ptr, ...) -> void
//
// takes the data of its P parameters, then the data of its results, which
// it writes (result buffers must not overlap parameter buffers); the shapes
// and layouts are the IR's static types, so inside one module only data
// pointers travel. `@NAME.entry(%0: ptr)`, for everything outside the
// module (the host), takes an array of KeelBuffer pointers (parameters,
// then results) and checks each descriptor against the static type before
// the call; a mismatch stops the program naming both types.
//
// Element addresses come from each value's minor_to_major layout.
// Reductions and contractions accumulate in the explicit accumulator dtype
// from index 0 upward (several axes: row-major over them); a contraction
// rounds each product to the accumulator before adding it; nothing is
// reassociated or fused. Low-precision values are converted by the numerics
// library's format-named helpers. A fusion region is lowered op by op like
// the function around it, so fused and unfused programs give the same bits.
// With an empty schedule that is all: each operation one loop nest over its
// result, each value in a buffer of its own. A schedule (Schedule.h) moves
// computation between loops and skips buffers without changing a bit.
// Element semantics are in docs/semantics.md.
//
//===----------------------------------------------------------------------===//
#ifndef KEEL_LOOP_LOWERTENSOR_H
#define KEEL_LOOP_LOWERTENSOR_H

#include "keel/ir/IR.h"
#include "keel/loop/LoopIR.h"
#include "keel/loop/Schedule.h"

#include <cstdint>
#include <string>
#include <vector>

namespace keel::loop {

/// Adds the functions of a verified tensor IR module (and their entries),
/// realizing `schedule` (Schedule.h); an empty schedule is the reference.
void lowerTensorModule(const ir::Module &m, const Schedule &schedule, Module &out);

/// The name of the host entry of tensor function `name`.
std::string entryName(const std::string &name);

/// One element of a unary operation in dtype `t` (docs/semantics.md), `x`
/// in the dtype's compute type (pred as bool, i4 in an i8). Scalar code's
/// math built-ins use the same definitions.
ExprPtr unaryElement(ir::UnaryCode code, ir::DType t, ExprPtr x);
/// `a op b` in dtype `t`: f16, bf16, tf32 + - * / by the numerics
/// library's helpers, other low-precision operations widened to f32 and
/// rounded once, i4 wrapped to 4 bits.
ExprPtr binaryElement(BinaryOp op, ir::DType t, ExprPtr a, ExprPtr b);
/// The loop IR operation of a tensor IR binary code.
BinaryOp binaryOp(ir::BinaryCode c);

/// The loop IR type a dtype is stored as (pred: u8 holding 0 or 1; i4: i8
/// holding the sign-extended value).
Type storageType(ir::DType t);
/// An encoding as the IR holds it (i4: 4 bits) as the stored value (i4:
/// sign-extended); other dtypes unchanged.
uint64_t storedValue(ir::DType t, uint64_t encoding);
/// Elements given as encodings, as the bytes of their storage (little-
/// endian, storageType's width).
std::vector<uint8_t> storedBytes(ir::DType t, const std::vector<uint64_t> &encodings);

} // namespace keel::loop

#endif // KEEL_LOOP_LOWERTENSOR_H
