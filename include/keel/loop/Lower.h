//===- keel/loop/Lower.h - Checked scalar code to the loop IR --*- C++ -*-===//
//
// Lowers every function without tensor types, and every `test` block (as a
// function `test.N`), of a checked program. `while` becomes `loop` with a
// conditional `break`; compound assignments become assignments; `&&` and
// `||` stay short-circuit operators; literals become constants in their
// checked type (float literals with the checker's one-rounding encoding);
// math built-ins on scalars use the tensor operations' element definitions.
//
// Tensors in scalar code: each tensor-valued expression (constructors,
// operators, calls of tensor functions) becomes a tensor IR function of the
// variables it reads (ir::ExpressionBuilder), lowered by the CPU oracle
// into the same module and called with buffers; a tensor variable owns its
// buffer (freed when reassigned and when the function ends); `x[i, j]`
// checks each index against its dimension; `print` shows tensors.
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
