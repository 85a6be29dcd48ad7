//===- keel/instantiate/LowerScalar.h - Scalar code to the loop IR -*- C++ -*-===//
//
// Lowers the functions without tensor types that `main` or the `test`
// blocks reach (a test as a function `test.N`), of a checked program.
// `while` becomes `loop` with a conditional `break`; compound assignments become assignments; `&&` and
// `||` stay short-circuit operators; literals become constants in their
// checked type (float literals with the checker's one-rounding encoding);
// math built-ins on scalars use the tensor operations' element definitions.
//
// Tensors in scalar code: each tensor-valued expression (constructors,
// operators, calls of tensor functions) becomes a tensor IR function of the
// variables it reads (ExpressionBuilder), called with buffers; a tensor
// variable owns its buffer (freed when reassigned and when the function
// ends); `x[i, j]` checks each index against its dimension; `print` shows
// tensors. The tensor functions are returned apart: the pipeline verifies
// them, runs its passes and lowers them into the same loop module.
//
//===----------------------------------------------------------------------===//
#ifndef KEEL_INSTANTIATE_LOWERSCALAR_H
#define KEEL_INSTANTIATE_LOWERSCALAR_H

#include "keel/ir/IR.h"
#include "keel/loop/LoopIR.h"
#include "keel/sema/Checker.h"
#include "keel/support/Diagnostics.h"
#include "keel/support/ProgramRoots.h"
#include "keel/syntax/AST.h"

#include <optional>

namespace keel::instantiate {

/// A program's scalar code as loop IR, and the tensor IR functions it calls.
struct ScalarProgram {
  loop::Module scalar;
  ir::Module tensors;
};

/// Lowers `roots` and the functions their calls reach (and only the tensor
/// expressions those hold): what nothing reaches was checked, but is never
/// lowered or compiled. Nullopt after reporting why a construct cannot be
/// lowered. Functions come in declaration order, then the tests.
std::optional<ScalarProgram> lowerScalarProgram(const SourceManager &sources, const syntax::Program &program,
                                                const sema::CheckedProgram &checked, DiagnosticEngine &diags,
                                                ProgramRoots roots,
                                                ir::SumOrder defaultOrder = ir::SumOrder::Sequential);

} // namespace keel::instantiate

#endif // KEEL_INSTANTIATE_LOWERSCALAR_H
