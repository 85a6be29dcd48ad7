//===- keel/exits/cpu/Elements.h - Keel's element semantics on loop IR -*- C++ -*-===//
//
// How one element of each tensor IR element code is computed on the CPU,
// as loop IR expressions (docs/semantics.md). The CPU exit's lowerings
// (Lower.h) and scalar code's math built-ins (instantiate/LowerScalar.cpp,
// which runs on the CPU too) build every element through these, so a
// scalar `exp(x)` and a tensor's give the same bits.
//
// Values are in their dtype's compute type (pred as bool, i4 in an i8 that
// wraps at 4 bits) and stored in its storage type (pred as a 0/1 byte, i4
// as a sign-extended byte).
//
//===----------------------------------------------------------------------===//
#ifndef KEEL_EXITS_CPU_ELEMENTS_H
#define KEEL_EXITS_CPU_ELEMENTS_H

#include "keel/ir/IR.h"
#include "keel/loop/LoopIR.h"

#include <cstdint>
#include <vector>

namespace keel::cpu {

/// One element of a unary operation in dtype `t`, `x` in the dtype's
/// compute type. Low-precision math is computed on f32 and rounded once.
loop::ExprPtr unaryElement(ir::UnaryCode code, ir::DType t, loop::ExprPtr x);
/// `a op b` in dtype `t`: f16, bf16, tf32 + - * / by the numerics
/// library's helpers, other low-precision operations widened to f32 and
/// rounded once, i4 wrapped to 4 bits.
loop::ExprPtr binaryElement(loop::BinaryOp op, ir::DType t, loop::ExprPtr a, loop::ExprPtr b);
/// One element converted from `from` to `to`: to pred is `!= 0`; to i4
/// wraps integers and saturates floats to [-8, 7]; the rest is the loop
/// IR's cast (one rounding; floats to integers saturate).
loop::ExprPtr convert(loop::ExprPtr v, ir::DType from, ir::DType to);

/// The loop IR type a dtype is stored as (pred: u8 holding 0 or 1; i4: i8
/// holding the sign-extended value).
loop::Type storageType(ir::DType t);
/// The type an element of `t` is computed in (pred as bool, i4 in i8).
loop::Type computeType(ir::DType t);
/// Bytes one stored element of `t` takes.
int64_t storageBytes(ir::DType t);
/// An encoding as the IR holds it (i4: 4 bits) as the stored value (i4:
/// sign-extended); other dtypes unchanged.
uint64_t storedValue(ir::DType t, uint64_t encoding);
/// Elements given as encodings, as the bytes of their storage (little-
/// endian, storageType's width).
std::vector<uint8_t> storedBytes(ir::DType t, const std::vector<uint64_t> &encodings);
/// An encoding of `t` (as the IR holds it) as a constant of its compute type.
loop::ExprPtr encodingConst(ir::DType t, uint64_t bits);
/// The first value of an accumulator: the combiner's identity (-0 for a
/// float sum, so that a sum of negative zeros stays -0 as in IEEE).
loop::ExprPtr identity(ir::Combiner c, ir::DType acc);

} // namespace keel::cpu

#endif // KEEL_EXITS_CPU_ELEMENTS_H
