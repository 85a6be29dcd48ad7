//===- keel/exits/Linalg.h - The MLIR linalg exit ---------------*- C++ -*-===//
//
// A verified tensor IR module as one MLIR module of upstream dialects only
// (builtin, func, arith, math, tensor, linalg; scf in the optional @main):
// linalg on tensors, named operations where MLIR has them with Keel's
// meaning (linalg.matmul, batch_matmul, transpose, broadcast, reduce, fill)
// and linalg.generic with explicit indexing maps elsewhere. A fusion region
// becomes one linalg.generic whose body holds the region's element
// operations (a reduction or contraction root gives it reduction
// iterators), so fusion decisions survive the exit. docs/exits.md has the
// mapping, the pipeline that runs it, and what is exact.
//
// Keel's semantics are kept, never approximated (src/exits/ElementCode.h):
// accumulation in the explicit accumulator dtype from Keel's identity
// (-0 for float sums), in index order once MLIR lowers linalg to loops;
// products rounded before they are added (arith.mulf then arith.addf, no
// fast-math flags); conversions written out where MLIR's meaning differs.
// It receives IR legalized for linalgCapabilities(): low-precision
// arithmetic, integer division and float to integer conversion arrive as
// ops MLIR gives Keel's meaning. Transcendentals are `math` operations, or with
// `keelMath` calls to Keel's own functions (libkeel_math.so), which give
// `keel run`'s bits.
//
//===----------------------------------------------------------------------===//
#ifndef KEEL_EXITS_LINALG_H
#define KEEL_EXITS_LINALG_H

#include "keel/exits/Exit.h"
#include "keel/ir/IR.h"
#include "keel/transforms/Legalize.h"

#include <optional>
#include <string>
#include <vector>

namespace keel::exits {

struct LinalgOptions {
  std::string entry;     ///< the public function; its callees follow, private
  bool keelMath = false; ///< --keel-math: transcendentals call libkeel_math.so
  /// --main: a `@main` that calls the entry on these arguments (one per
  /// parameter: encodings in row-major order) and prints each result's
  /// encodings, one line per result: `( 1065353216, 3212836864 )`.
  std::optional<std::vector<std::vector<uint64_t>>> mainArguments;
  std::string source; ///< for the header comment: what was compiled
};

using LinalgOutput = ExitOutput;

/// The MLIR text of `options.entry` and every function it calls. `m` is
/// verified; `options.entry` is one of its functions.
LinalgOutput emitLinalg(const ir::Module &m, const LinalgOptions &options);

/// What the linalg exit maps with Keel's meaning: arithmetic in f32 and
/// f64 only (transforms/Legalize.h writes out the rest before it).
const transforms::Capabilities &linalgCapabilities();

} // namespace keel::exits

#endif // KEEL_EXITS_LINALG_H
