//===- keel/instantiate/Builder.h - Checked programs to tensor IR -*- C++ -*-===//
//
// Instantiates a checked tensor function at static shapes: every shape
// variable is bound to a positive integer (from --bind, or at a call from
// the argument shapes), the `requires` clause is evaluated at those sizes,
// and the body becomes tensor IR. Each (function, bindings) pair is built
// once and named `f.B2.S8` (entry: its own name). The builder reads the
// checker's results (types, literal encodings); it never re-derives a
// tensor fact from scalar code.
//
// Lowering of the surface sugar: broadcasting operators become explicit
// broadcast_in_dim; scalar operands (literals, shape variables, casts of
// them) become rank-0 constants broadcast to the tensor's shape; `matmul`
// becomes dot_general; `mean` a sum divided by the count; `keepdims` a
// reshape after the reduce; several-axis reductions one reduce over all axes;
// `order: tree` (or the request's default order) the ops' `order = tree`.
//
//===----------------------------------------------------------------------===//
#ifndef KEEL_INSTANTIATE_BUILDER_H
#define KEEL_INSTANTIATE_BUILDER_H

#include "keel/ir/IR.h"
#include "keel/sema/Checker.h"
#include "keel/support/Diagnostics.h"
#include "keel/syntax/AST.h"

#include <map>
#include <memory>
#include <optional>
#include <string>
#include <vector>

namespace keel::instantiate {

struct BuildRequest {
  std::string entry;
  std::map<std::string, int64_t> bindings;
  /// The order of `sum`, `mean` and `matmul` calls that give no `order:`
  /// (--default-order).
  ir::SumOrder defaultOrder = ir::SumOrder::Sequential;
  /// Messages show sizes as keyword arguments (`H=8, KV=8`: the Python
  /// module), not as `--bind H=8,KV=8`.
  bool keywordSizes = false;
};

/// Parses `B=2,S=8` (also several --bind flags joined by commas); nullopt
/// with `error` set when malformed.
std::optional<std::map<std::string, int64_t>> parseBindings(std::string_view text, std::string &error);

/// The shape variables that argument shapes give `entry`: each parameter
/// dimension that is a lone variable takes the argument's size (an empty
/// `shapes[i]`: that argument does not say). Existing `bindings` count as
/// earlier arguments. False, with `error` naming the parameter, when a rank
/// differs or a variable would get two sizes.
bool bindFromShapes(const sema::CheckedProgram &checked, const std::string &entry,
                    const std::vector<std::optional<std::vector<int64_t>>> &shapes,
                    std::map<std::string, int64_t> &bindings, std::string &error);

/// `random(..., seed: s)`'s elements: SplitMix64 from the seed; element k
/// takes the k-th output's top 24 bits as a multiple of 2^-24 in [0, 1),
/// exact in every float type with 24 or more bits and rounded once (to
/// nearest even) otherwise; integer types take its lowest bit. `first`
/// starts at element `first`, so that a large tensor can be made in pieces.
std::vector<uint64_t> randomEncodings(uint64_t seed, int64_t count, ir::DType t, int64_t first = 0);

/// The most elements `random(...)` in source may make: its values are built
/// at compile time into the program (E0404 above it).
inline constexpr int64_t kMaxRandomElements = int64_t{1} << 24;

std::optional<ir::Module> build(const SourceManager &sources, const syntax::Program &program,
                            const sema::CheckedProgram &checked, const BuildRequest &request,
                            DiagnosticEngine &diags);

/// The tensor expressions of scalar code (functions without tensor types,
/// and tests): each becomes a function of its own whose parameters are the
/// variables it reads (tensors with their static types, scalars as rank-0
/// tensors); the tensor functions it calls are instantiated once each and
/// added to the same module.
class ExpressionBuilder {
public:
  ExpressionBuilder(const SourceManager &sources, const syntax::Program &program,
                    const sema::CheckedProgram &checked, DiagnosticEngine &diags,
                    ir::SumOrder defaultOrder = ir::SumOrder::Sequential);
  ~ExpressionBuilder();
  /// The result type, or nullopt after reporting why `e` cannot be built.
  std::optional<ir::TensorType> build(const syntax::Expr &e, const std::vector<std::pair<std::string, ir::TensorType>> &params,
                                  const std::string &name);
  ir::Module &module();

private:
  struct Impl;
  std::unique_ptr<Impl> impl_;
};

} // namespace keel::instantiate

#endif // KEEL_INSTANTIATE_BUILDER_H
