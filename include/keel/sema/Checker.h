//===- keel/sema/Checker.h - Type and effect checking ----------*- C++ -*-===//
//
// Checks a parsed program: names and scopes, scalar types with exact
// low-precision identity (SFEP-0054 §3.2-§3.5), contextual literal typing
// (a literal takes the type its context expects, rounded once from its
// decimal value), explicit `as` casts, control flow, effects, and the
// dtype-level rules of tensor built-ins including accumulators (§3.6).
// Shapes of tensor expressions are the shape checker's (issue 4); this
// checker carries declared shapes as written.
//
// Results live in side tables keyed by AST node, so the AST stays free of
// types.
//
//===----------------------------------------------------------------------===//
#ifndef KEEL_SEMA_CHECKER_H
#define KEEL_SEMA_CHECKER_H

#include "keel/sema/Builtins.h"
#include "keel/sema/Solver.h"
#include "keel/sema/Types.h"
#include "keel/support/Diagnostics.h"
#include "keel/support/Effects.h"
#include "keel/support/Operators.h"
#include "keel/syntax/AST.h"

#include <set>
#include <unordered_map>

namespace keel::sema {

/// `C / H` written where a dimension is: an exact quotient, so the checker
/// proves C % H == 0 (and H >= 1) in the context where it is written.
struct QuotientObligation {
  Dim dividend, divisor;
  Span at;
  /// How many of the `requires` predicates the proof may use: those before
  /// the one that writes it, or all of them (SIZE_MAX) for a type.
  size_t factsBefore = SIZE_MAX;
};

struct FunctionSig {
  const syntax::FunctionDecl *decl = nullptr;
  /// Dimension parameters (`fn f<H, Dh>`): shape variables each call
  /// supplies as a named argument.
  std::vector<std::string> dimParams;
  std::vector<Type> params;
  Type result;
  EffectSet effects;
  /// The `requires` clause, in normal form, with the span of each predicate.
  std::vector<Comparison> refinements;
  std::vector<Span> refinementSpans;
  /// Shape variables without the default lower bound 1.
  std::set<std::string> noDefaultLowerBound;
  /// The quotients by a dimension in the signature, proved by the body's check.
  std::vector<QuotientObligation> quotients;
};

struct CheckedProgram {
  std::unordered_map<const syntax::Expr *, Type> exprTypes;
  /// Float literals: their encoding in the literal's type (one rounding
  /// from the decimal value).
  std::unordered_map<const syntax::Expr *, uint64_t> floatLiterals;
  /// What each operator expression (binary or prefix) computes, and the binary code of
  /// each compound assignment (`x += e`): keel/support/Operators.def's
  /// rows, so that no later stage reads the operator's token.
  std::unordered_map<const syntax::Expr *, ElementOperator> operators;
  std::unordered_map<const syntax::Stmt *, BinaryCode> compoundAssignments;
  std::unordered_map<std::string, FunctionSig> functions;
  /// Each call of a built-in, and the row of keel/sema/Builtins.def it is.
  std::unordered_map<const syntax::CallExpr *, BuiltinId> builtinCalls;
  /// Each call's dimension arguments (`H: C / 64`), in the caller's shape
  /// variables, by the callee's dimension parameter.
  std::unordered_map<const syntax::CallExpr *, std::map<std::string, Dim>> dimArguments;
  /// Each axis written in a built-in call (`axis: -1`, an element of
  /// `axis: [0, -1]` or of transpose's permutation), counted from 0: a
  /// negative axis counts from the end, as NumPy's do.
  std::unordered_map<const syntax::Expr *, size_t> axes;
};

/// Binds the shape variables of `sig` that its parameters' shapes fix, from
/// the shapes of the arguments given (parameter index, shape; ranks equal):
/// a lone variable (`T`) is the argument's dimension; a variable seen only
/// as an exact quotient's dividend (`C` of `C / H`) is that dimension times
/// the divisor, once the divisor's variables are bound. Existing bindings
/// are kept. The one rule for the checker's calls and for instantiation.
void bindParameterVariables(const FunctionSig &sig, const std::vector<std::pair<size_t, std::vector<Dim>>> &args,
                            std::map<std::string, Dim> &bindings);

CheckedProgram check(const SourceManager &sources, const syntax::Program &program,
                     DiagnosticEngine &diags);
/// With a caller's solver: its timeout, cache and statistics.
CheckedProgram check(const SourceManager &sources, const syntax::Program &program,
                     DiagnosticEngine &diags, ShapeSolver &solver);

} // namespace keel::sema

#endif // KEEL_SEMA_CHECKER_H
