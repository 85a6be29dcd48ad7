//===- keel/transforms/TestPasses.h - Passes that test the pipeline -*- C++ -*-===//
//
// Passes that exist only for the pipeline's tests (`--test-pass=NAME`), as
// MLIR's test passes do: each returns whether it changed the module.
//
//===----------------------------------------------------------------------===//
#ifndef KEEL_TRANSFORMS_TESTPASSES_H
#define KEEL_TRANSFORMS_TESTPASSES_H

#include "keel/ir/IR.h"

namespace keel::transforms {

/// test-insert-copies: every value a function returns is returned through
/// a `copy` of it (a valid change that keeps every result's bits); values
/// that are copies already stay, so a second run changes nothing.
bool testInsertCopies(ir::Module &m);

/// (In the pipeline, test-change-silently is test-insert-copies reporting the
/// opposite of what it did, so that the check that an unchanged module is
/// unchanged must fire; test-throw throws, so that the step's internal
/// error must.)

/// test-break-verifier: the first function with results returns a value
/// that nothing defines, so the verifier after this pass must fail.
bool testBreakVerifier(ir::Module &m);

} // namespace keel::transforms

#endif // KEEL_TRANSFORMS_TESTPASSES_H
