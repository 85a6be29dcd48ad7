//===- keel/instantiate/Becomes.h - What each built-in is in the IR -*- C++ -*-===//
//
// The `Becomes` column of keel/sema/Builtins.def, as tensor IR: the
// instantiation builds each built-in call from it and the scalar lowering
// computes scalar math built-ins with the same element functions.
//
//===----------------------------------------------------------------------===//
#ifndef KEEL_INSTANTIATE_BECOMES_H
#define KEEL_INSTANTIATE_BECOMES_H

#include "keel/ir/IR.h"
#include "keel/sema/Builtins.h"

#include <optional>

namespace keel::instantiate {

struct Becomes {
  ir::OpKind kind;
  ir::UnaryCode unary = ir::UnaryCode::Neg;     ///< kind Unary
  ir::BinaryCode binary = ir::BinaryCode::Add;  ///< kind Binary
  ir::Combiner combiner = ir::Combiner::Sum;    ///< kind Reduce
};

/// The tensor IR a built-in becomes; nullopt for `print` (an effect).
std::optional<Becomes> becomes(sema::BuiltinId id);

} // namespace keel::instantiate

#endif // KEEL_INSTANTIATE_BECOMES_H
