//===- keel/ir/Verifier.h - The tensor IR verifier (SFEP-0053 §3.4) -*- C++ -*-===//
//
// Checks, in stages (structure before types, as MLIR's verifier does):
//  - every value defined once, before its uses, in its own function; regions
//    see only their parameters and their own values; result arity;
//  - every type: a positive static shape whose element count fits int64, a
//    layout that is a permutation of the dimensions;
//  - every operation's result type follows its shape and dtype rule, with no
//    implicit dtype conversion, broadcast or layout change;
//  - calls agree with their callee; returns with their function (or region);
//  - fusion regions hold only fusible operations and let nothing escape but
//    their returned values.
// It runs after building and after every pass; a failure after a transform
// is an internal compiler error.
//
//===----------------------------------------------------------------------===//
#ifndef KEEL_IR_VERIFIER_H
#define KEEL_IR_VERIFIER_H

#include "keel/ir/IR.h"

#include <string>
#include <vector>

namespace keel::ir {

struct VerifierError {
  const Function *function = nullptr;
  const Op *op = nullptr; ///< null for function-level problems
  std::string message;
  Span at; ///< a type of the signature, when the problem is there
  /// Where in IR text the problem is (the signature's type, the op's, else
  /// the function's span).
  Span where() const {
    return at.valid() ? at : op && op->textSpan.valid() ? op->textSpan : function ? function->textSpan : Span{};
  }
};

std::vector<VerifierError> verify(const Module &m);

} // namespace keel::ir

#endif // KEEL_IR_VERIFIER_H
