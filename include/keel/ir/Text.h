//===- keel/ir/Text.h - The text form of the tensor IR ---------*- C++ -*-===//
//
//   func @mlp(%0: f32[2,8], %1: f32[8,16]) -> f32[2,16] {
//     %2 = dot_general(%0, %1) {lhs_batch = [], rhs_batch = [], lhs_contract = [1],
//                               rhs_contract = [0], acc = f32} : f32[2,16]
//     %3 = unary.gelu(%2) : f32[2,16]
//     return %3
//   }
//
// Values are numbered in definition order when printed, so printing is
// canonical: print(parse(print(m))) == print(m). Types are DTYPE[dims] with
// `{minor_to_major}` after a non-default layout. Locations (` loc("f.sfn":3:12)`)
// are printed on request and always accepted. docs/ir.md has the grammar.
//
//===----------------------------------------------------------------------===//
#ifndef KEEL_IR_TEXT_H
#define KEEL_IR_TEXT_H

#include "keel/ir/IR.h"
#include "keel/support/Diagnostics.h"

#include <optional>
#include <unordered_map>
#include <string>

namespace keel::ir {

struct PrintOptions {
  bool locations = false;
  /// The author's value names (`%q`, read from IR text) instead of
  /// numbers; a value without one (a pass made it) gets the next number
  /// no author name takes (`keel opt --keep-names`).
  bool keepNames = false;
};

std::string print(const Module &m, const PrintOptions &options = {});
std::string print(const Function &f, const PrintOptions &options = {});
/// The name print() gives each value of `f` (`%3`): values are numbered in
/// the order the text defines them, whatever their ids.
std::unordered_map<ValueId, std::string> valueNames(const Function &f, const PrintOptions &options = {});
/// The names a user meets everywhere but the renumbered printed IR
/// (messages, --explain-fusion, --dot, the exits' `%v` names): the author's
/// (`%q`) where IR text gave one, else the number print() gives it with
/// keepNames (for a function built from source: print()'s numbers).
std::unordered_map<ValueId, std::string> displayNames(const Function &f);
/// displayNames(f) of one value.
std::string valueName(const Function &f, ValueId v);

/// The module's dataflow graph in Graphviz DOT: a cluster per function and
/// per fusion region, a node per parameter and operation, an edge per value
/// read labelled with its type, barriers shaded (`dot -Tsvg`).
std::string printDot(const Module &m);

/// Parses IR text; syntax errors are reported (E0300) with their line and
/// column, and nullopt is returned when there was any.
std::optional<Module> parse(const SourceManager &sources, FileId file, DiagnosticEngine &diags);

} // namespace keel::ir

#endif // KEEL_IR_TEXT_H
