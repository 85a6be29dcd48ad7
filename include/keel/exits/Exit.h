//===- keel/exits/Exit.h - What every exit returns --------------*- C++ -*-===//
//
// An exit prints a verified tensor IR module for another tool (MLIR linalg,
// StableHLO), or refuses: what the target cannot express with Keel's
// meaning is never approximated (SFEP-0054 §3.8, E0915). The pipeline
// reports each refusal at its operation's source location.
//
//===----------------------------------------------------------------------===//
#ifndef KEEL_EXITS_EXIT_H
#define KEEL_EXITS_EXIT_H

#include "keel/ir/IR.h"
#include "keel/support/Source.h"

#include <string>
#include <vector>

namespace keel::exits {

/// Something the exit cannot express, at the operation's location: E0915,
/// or with `missingEffect` E0120 (the entry does not declare an effect the
/// target needs; the pipeline suggests the signature with it added).
struct Refusal {
  ir::Location loc;
  std::string message;
  std::string missingEffect; ///< non-empty: the effect (`gpu`) the entry must declare
  Span textSpan;             ///< where it is in IR text, for a location-less operation or function
  /// With `missingEffect`: every effect the entry should declare (its own
  /// and the missing one), in the effect table's order.
  std::vector<std::string> effectsToDeclare;
};

struct ExitOutput {
  std::string text;              ///< the module; empty when refused
  std::vector<Refusal> refusals; ///< non-empty: nothing is printed
};

} // namespace keel::exits

#endif // KEEL_EXITS_EXIT_H
