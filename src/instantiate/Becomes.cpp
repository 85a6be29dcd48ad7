//===- Becomes.cpp - The built-in table's IR column -----------------------===//
#include "keel/instantiate/Becomes.h"

namespace keel::instantiate {

namespace {

using ir::BinaryCode;
using ir::Combiner;
using ir::OpKind;
using ir::UnaryCode;

#define KEEL_UNARY(Code) Becomes{OpKind::Unary, UnaryCode::Code, BinaryCode::Add, Combiner::Sum}
#define KEEL_BINARY(Code) Becomes{OpKind::Binary, UnaryCode::Neg, BinaryCode::Code, Combiner::Sum}
#define KEEL_REDUCE(Code) Becomes{OpKind::Reduce, UnaryCode::Neg, BinaryCode::Add, Combiner::Code}
#define KEEL_OP(Kind) Becomes{OpKind::Kind, UnaryCode::Neg, BinaryCode::Add, Combiner::Sum}
#define KEEL_NO_IR std::nullopt
constexpr std::optional<Becomes> kBecomes[] = {
#define KEEL_BUILTIN(Id, Name, Family, Dtypes, Becomes, Named, Signature, Summary) Becomes,
#include "keel/sema/Builtins.def"
#undef KEEL_BUILTIN
};
#undef KEEL_UNARY
#undef KEEL_BINARY
#undef KEEL_REDUCE
#undef KEEL_OP
#undef KEEL_NO_IR

} // namespace

std::optional<Becomes> becomes(sema::BuiltinId id) { return kBecomes[static_cast<size_t>(id)]; }

} // namespace keel::instantiate
