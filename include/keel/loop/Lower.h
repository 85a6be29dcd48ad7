//===- keel/loop/Lower.h - Checked scalar code to the loop IR --*- C++ -*-===//
//
// Lowers every function without tensor types, and every `test` block (as a
// function `test.N`), of a checked program. `while` becomes `loop` with a
// conditional `break`; compound assignments become assignments; `&&` and
// `||` stay short-circuit operators; literals become constants in their
// checked type (float literals with the checker's one-rounding encoding).
// Scalar code that calls a tensor function, or a scalar math built-in, is
// reported (E0500) until the CPU oracle (issue 7) runs them.
//
//===----------------------------------------------------------------------===//
#ifndef KEEL_LOOP_LOWER_H
#define KEEL_LOOP_LOWER_H

#include "keel/loop/LoopIR.h"
#include "keel/sema/Checker.h"
#include "keel/support/Diagnostics.h"
#include "keel/syntax/AST.h"

#include <optional>

namespace keel::loop {

std::optional<Module> lowerScalarProgram(const SourceManager &sources, const syntax::Program &program,
                                         const sema::CheckedProgram &checked, DiagnosticEngine &diags);

} // namespace keel::loop

#endif // KEEL_LOOP_LOWER_H
