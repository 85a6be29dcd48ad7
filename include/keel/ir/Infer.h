//===- keel/ir/Infer.h - Each operation's type rule, once --------*- C++ -*-===//
//
// One type-inference function per operation: its result type from its
// operands' types and its attributes, or why they admit none. The builder
// builds with it, the verifier checks each declared type against it (as
// XLA's shape verifier compares against shape inference), and lowerings
// read verified types, which it has fixed.
//
// Some operations carry part of their result type as their attribute: the
// declared type is then the `target` that supplies it. constant and iota:
// the whole type; convert: the element type; broadcast_in_dim and reshape:
// the shape; relayout, and every operation that gives a new tensor of a
// shape it computes (transpose, slice, concatenate, reduce, dot_general,
// broadcast_in_dim, reshape, iota, constant): the layout. Elementwise
// operations keep their operands' layout.
//
//===----------------------------------------------------------------------===//
#ifndef KEEL_IR_INFER_H
#define KEEL_IR_INFER_H

#include "keel/ir/IR.h"

#include <optional>
#include <string>
#include <vector>

namespace keel::ir {

struct Inferred {
  /// The result type, or nullopt when the operands and attributes admit
  /// none; `error` then says why.
  std::optional<TensorType> type;
  std::string error;
  /// What the declared type must agree with, for the verifier's message
  /// when it differs ("operand and result", "the permuted operand shape").
  std::string rule;
  /// The rule fixes a shape the operation computes (transpose, slice,
  /// concatenate, reduce, dot_general): a mismatch is reported as "must
  /// give shape [...] (rule)".
  bool computesShape = false;
};

/// The rule of a one-result operation (every kind but call, return and
/// fusion, whose types come from a callee or a region).
Inferred inferResultType(const Op &o, const std::vector<TensorType> &operands, const TensorType &target);

/// The spelling of an operation in messages: `unary.exp`, `reduce.sum`,
/// `dot_general`.
std::string opName(const Op &o);

} // namespace keel::ir

#endif // KEEL_IR_INFER_H
