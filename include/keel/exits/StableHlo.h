//===- keel/exits/StableHlo.h - The StableHLO exit --------------*- C++ -*-===//
//
// A verified tensor IR module as one MLIR module in StableHLO 1.13 and
// `func` (SFEP-0053 §3.7, ../shared/spec/README.md §7): what XLA (through
// PJRT) and IREE compile. The entry is the public `@main`; the functions it
// calls follow, private. The module records the pinned version as
// `keel.stablehlo_version = "1.13.0"` and in a header comment, and every
// operation carries its `loc("file.sfn":line:col)`.
//
// Keel's meaning is kept where StableHLO leaves a choice to the consumer:
// accumulators are explicit converts around the reduction; reductions
// start at Keel's identities (-0 for float sums); argmax / argmin are
// two-operand reductions whose comparator picks the first index and lets a
// NaN win; float to integer conversions saturate, NaN to 0; conversions to
// fp8e4m3fn saturate at +-448; integer narrowing wraps explicitly; integer
// division and remainder by zero and MIN / -1 are guarded with select;
// contractions ask for HIGHEST precision. gelu and silu are
// `stablehlo.composite` ops (`keel.gelu`, `keel.silu`) whose decompositions
// use StableHLO operations only. Fusion regions are flattened: consumers
// fuse for their own targets.
//
// It fails closed (E0915), never with a custom call: a tf32 tensor exists
// only as a contraction's operand (dot_general with the tf32 algorithm,
// its operands rounded to tf32 first); the entry's parameters and results
// must be row-major; and the entry must declare the effect `gpu` (E0120).
// docs/exits.md has the mapping and which results are exact.
//
//===----------------------------------------------------------------------===//
#ifndef KEEL_EXITS_STABLEHLO_H
#define KEEL_EXITS_STABLEHLO_H

#include "keel/exits/Exit.h"
#include "keel/ir/IR.h"
#include "keel/transforms/Legalize.h"

#include <optional>
#include <string>
#include <vector>

namespace keel::exits {

/// The StableHLO release the text is written for and serializes to, by
/// default; --target-version chooses one from kStableHloOldest (the oldest
/// the pinned 1.13.8 release serializes to) to kStableHloNewest.
inline constexpr const char *kStableHloVersion = "1.13.0";
inline constexpr const char *kStableHloOldest = "0.9.0";
inline constexpr const char *kStableHloNewest = "1.13.8";

/// A StableHLO version, MAJOR.MINOR.PATCH.
struct StableHloVersion {
  int major = 0, minor = 0, patch = 0;
  bool operator<(const StableHloVersion &o) const {
    return major != o.major ? major < o.major : minor != o.minor ? minor < o.minor : patch < o.patch;
  }
  std::string str() const;
};

/// "1.6.0" as a version: three decimal numbers and two dots, nothing else;
/// nullopt when malformed or outside kStableHloOldest .. kStableHloNewest.
std::optional<StableHloVersion> parseStableHloVersion(const std::string &text);

struct StableHloOptions {
  std::string entry;  ///< the function emitted as @main; its callees follow
  std::string source; ///< for the header comment: what was compiled
  /// --main: the entry keeps its name (private) and a public `@main()`
  /// takes no arguments: it calls the entry on these constants (one per
  /// parameter: encodings in row-major order) and returns each result with
  /// floats bit-cast to unsigned integers of their width, so that
  /// `stablehlo-translate --interpret` prints exact encodings.
  std::optional<std::vector<std::vector<uint64_t>>> mainArguments;
  /// --target-version: the version the module records and may use
  /// (parseStableHloVersion's); empty for kStableHloVersion. An op or
  /// attribute first in a later version is refused (E0915).
  std::string targetVersion;
  /// --allow-reorder: a sum with `order = tree` is emitted as StableHLO's
  /// reduce or dot_general, whose order the consumer chooses (the user
  /// accepts other bits); without it such a sum is refused (E0915), since
  /// StableHLO cannot pin an order.
  bool allowReorder = false;
};

/// The StableHLO text of `options.entry` and every function it calls, or
/// the refusals. `m` is verified; `options.entry` is one of its functions.
ExitOutput emitStableHlo(const ir::Module &m, const StableHloOptions &options);

/// What the StableHLO exit maps with Keel's meaning (transforms/Legalize.h
/// writes out the rest before it): fp8 arithmetic, integer division, float
/// to integer conversion, rounding into fp8e4m3fn and inexact iotas are
/// written out; tf32 is the exit's own to refuse.
const transforms::Capabilities &stableHloCapabilities();

} // namespace keel::exits

#endif // KEEL_EXITS_STABLEHLO_H
