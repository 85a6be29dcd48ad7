//===- keel/exits/cpu/Lower.h - The CPU exit: tensor IR to loop IR -*- C++ -*-===//
//
// The CPU oracle (SFEP-0053 §3.6, spec README §6). Every verified tensor IR
// function becomes a loop IR function
//
//   fn @NAME(%0: ptr, ..., %P-1: ptr, %P: ptr, ...) -> void
//
// over the data of its P parameters, then of its results, which it writes
// (result buffers must not overlap parameter buffers); shapes and layouts
// are the IR's static types, so inside one module only data pointers
// travel. `@NAME.entry(%0: ptr)`, for the host, takes an array of
// KeelBuffer pointers (parameters, then results) and checks each
// descriptor against the static type before the call; a mismatch stops the
// program naming both types.
//
// Two lowerings, one meaning:
//
//   lowerReference  the definition (`keel run --exit reference`): each
//                   operation a plain loop nest over its result in logical
//                   (row-major) order whose body computes one element
//                   (Elements.h); reductions and contractions accumulate in
//                   the explicit accumulator dtype from index 0 upward
//                   (several axes: row-major over them), a contraction
//                   rounding each product to the accumulator before adding
//                   it; each value in a buffer of its own, freed on return.
//                   It reads no schedule.
//   lowerScheduled  the CPU exit proper: the same element code, realizing a
//                   Schedule's decisions (Schedule.h), which move
//                   computation between loops and skip buffers without
//                   changing a bit of any result.
//
// Element addresses come from each value's minor_to_major layout. A fusion
// region is lowered op by op like the function around it, so fused and
// unfused programs give the same bits.
//
//===----------------------------------------------------------------------===//
#ifndef KEEL_EXITS_CPU_LOWER_H
#define KEEL_EXITS_CPU_LOWER_H

#include "keel/exits/cpu/Schedule.h"
#include "keel/ir/IR.h"
#include "keel/loop/LoopIR.h"
#include "keel/transforms/Legalize.h"

#include <string>

namespace keel::cpu {

/// Adds the functions of a verified tensor IR module, and their entries,
/// as the reference defines them.
void lowerReference(const ir::Module &m, loop::Module &out);

/// The same, realizing `schedule` (a function it does not name is lowered
/// as the reference lowers it).
void lowerScheduled(const ir::Module &m, const Schedule &schedule, loop::Module &out);

/// What both CPU lowerings map with Keel's meaning: everything. Their
/// element code (Elements.h) is Keel's semantics on loop IR values, which
/// scalar code reaches without tensor IR, so legalization leaves the CPU
/// exit's modules as they are.
const transforms::Capabilities &cpuCapabilities();

/// The name of the host entry of tensor function `name`.
std::string entryName(const std::string &name);

} // namespace keel::cpu

#endif // KEEL_EXITS_CPU_LOWER_H
