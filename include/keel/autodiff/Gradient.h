//===- keel/autodiff/Gradient.h - Reverse mode on the tensor IR -*- C++ -*-===//
//
// One transformation (docs/autodiff.md): a function of verified tensor IR
// whose result is a rank-0 f32 or f64 tensor becomes its value-and-gradient
// function: the same name and parameters, the value as its first result,
// then the gradient with respect to each chosen parameter, from one forward
// and one backward sweep. Every adjoint rule is ordinary tensor IR in a
// fixed order (docs/autodiff.md says each), so any exit computes the same
// gradient, and the CPU exit the same bits for any thread count.
//
//===----------------------------------------------------------------------===//
#ifndef KEEL_AUTODIFF_GRADIENT_H
#define KEEL_AUTODIFF_GRADIENT_H

#include "keel/ir/IR.h"

#include <optional>
#include <string>
#include <vector>

namespace keel::autodiff {

/// Why a gradient cannot be made, at the operation that stops it (a
/// low-precision value on the path, a result that is no f32 or f64 scalar).
struct Problem {
  std::string message;
  ir::Location loc;
};

/// Replaces `function` of `m` by its value-and-gradient function with
/// respect to the parameters at `wrt` (indices, in the order the gradients
/// are returned); the functions it calls are differentiated through
/// (inlined into it; they stay in `m`, perhaps called by nothing now).
/// Nullopt on success; else the problem, `m` unchanged.
std::optional<Problem> valueAndGradient(ir::Module &m, const std::string &function, const std::vector<size_t> &wrt);

} // namespace keel::autodiff

#endif // KEEL_AUTODIFF_GRADIENT_H
