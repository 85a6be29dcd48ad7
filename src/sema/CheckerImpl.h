//===- CheckerImpl.h - The checker's class, shared by its files -*- C++ -*-===//
//
// Private to src/sema. The checker is one class whose members live in one
// file per seam: Checker.cpp (declarations, signatures, the entry points),
// CheckStatements.cpp (bodies and statements), CheckExpressions.cpp
// (expressions, operators, conversions, calls of user functions),
// CheckBuiltins.cpp (the built-in functions, from keel/sema/Builtins.def)
// and CheckShapes.cpp (dimensions and proofs through the shape solver).
//
// One pass over each function body with a scope stack. Expressions are
// checked with an optional expected type, which is how literals get their
// type: a literal takes the expected type, or in a binary operation the
// other operand's exact type (SFEP-0054 §3.3), so the non-literal operand is
// checked first. An expression whose error has been reported gets the Error
// type, which every later check accepts, so one mistake gives one message.
//
//===----------------------------------------------------------------------===//
#ifndef KEEL_SEMA_CHECKERIMPL_H
#define KEEL_SEMA_CHECKERIMPL_H

#include "keel/sema/Builtins.h"
#include "keel/sema/Checker.h"
#include "keel/sema/Solver.h"
#include "keel/support/Codes.h"

#include <map>
#include <optional>
#include <set>
#include <string>
#include <unordered_map>
#include <vector>

namespace keel::sema::detail {

// The checker's files read the AST's names unqualified.
using namespace syntax;
using Kind = Type::Kind;

/// Spellings that people try for the low-precision types (E0910).
std::optional<std::string> lowPrecisionHint(std::string_view name);
void collectDimNames(const syntax::Dim &d, std::vector<std::pair<std::string, Span>> &out);
bool isArithmetic(Tok op);
bool isComparison(Tok op);
/// Whether `e` is built of number literals and arithmetic alone. Memoized in
/// `memo`: the checker asks at every node of a chain, so without it a chain
/// of n literals would cost n^2.
bool isLiteralTree(const Expr &e, std::unordered_map<const Expr *, bool> &memo);
/// A built-in's name (its rows are keel/sema/Builtins.def's).
bool isBuiltinName(std::string_view name);

class Checker {
public:
  Checker(const SourceManager &sources, DiagnosticEngine &diags, ShapeSolver &solver)
      : src_(sources), diags_(diags), solver_(solver) {}

  CheckedProgram run(const Program &program) {
    collectSignatures(program);
    for (const FunctionDecl &fn : program.functions)
      if (auto it = out_.functions.find(fn.name); it != out_.functions.end() && it->second.decl == &fn)
        checkFunction(fn, it->second);
    std::set<std::string> testNames;
    for (const TestDecl &t : program.tests) {
      if (!testNames.insert(t.name).second)
        diags_.error(code::E0101, t.nameSpan, "test \"" + t.name + "\" is defined twice");
      checkTest(t);
    }
    return std::move(out_);
  }

private:
  //===-- Declarations ---------------------------------------------------===//

  void collectSignatures(const Program &program);

  /// The `requires` clause in normal form. Its variables must be shape
  /// variables of the parameters; `V >= 0` (or lower) lifts V's default
  /// lower bound of 1.
  void readRefinements(const FunctionDecl &fn, FunctionSig &sig);

  /// Resolves a written type. `allowVoid` for return types.
  Type resolveType(const TypeExpr &t, bool allowVoid);

  std::optional<Scalar> resolveScalarName(const std::string &name, Span at, bool dtype);

  //===-- Shapes -----------------------------------------------------------===//

  /// A written dimension in normal form. Products of shape variables are
  /// dimensions anywhere (../shared/spec/README.md §2.1), and so are exact
  /// quotients (`C / H`, see quotient()); remainder by a variable (`D % H`)
  /// only in a `requires` clause (`inRequires`).
  std::optional<Dim> toDim(const syntax::Dim &d, bool inRequires);

  /// `a / q` for a q that is not a constant: the exact quotient, with its
  /// divisibility proved now in the function's context, or recorded in
  /// quotientSink_ while a signature is read.
  std::optional<Dim> quotient(const Dim &a, const Dim &q, Span at);
  bool proveQuotient(const QuotientObligation &o);

  std::optional<Dim> checkedDim(std::optional<Dim> d, Span at);

  /// A dimension written as an expression (reshape targets, slice bounds,
  /// constructor shapes): integer literals, shape variables, + - * / % and
  /// parentheses.
  std::optional<Dim> exprToDim(const Expr &e);

  /// A compile-time integer argument (`axis: 1`, `axis: -1`).
  std::optional<int64_t> constantInt(const Expr &e);

  /// An axis of a tensor of rank `rank`, written `k` or `-k` (from the
  /// end: -1 is the last); recorded in CheckedProgram::axes. Out of range
  /// is E0203 (E0204 for a permutation's element, `code`).
  std::optional<size_t> axisValue(const Expr &e, size_t rank, const char *code = code::E0203);

  std::optional<size_t> axisArgument(const CallExpr &c, size_t rank, bool required = true);

  /// `axis: 1` or, for the accumulating reductions, `axis: [0, 2]`
  /// (distinct axes; Phase 0 §8).
  std::optional<std::vector<size_t>> reductionAxes(const CallExpr &c, size_t rank, bool listAllowed);

  /// "K = 3, N = 4 (M = 1)": the goal's variables in the order the goal
  /// mentions them, then the others.
  static std::string counterexampleText(const ProofResult &r, const std::vector<std::string> &goalOrder);

  /// Proves `goal` in the function's context. On failure reports `code` at
  /// `at` with the counterexample, and notes where the clashing shape
  /// variables were introduced; a timeout or unknown is E0211.
  bool prove(const Goal &goal, Span at, const char *errorCode, const std::string &message,
             const std::vector<DiagNote> &extraNotes = {}, const std::string &help = "");

  /// Each dimension of `a` equal to that of `b`, with the same rank.
  bool sameShape(const Type &a, const Type &b, Span at, const char *errorCode, const std::string &what);

  /// NumPy-style broadcasting of two shapes for a binary operator: ranks
  /// aligned on the right, each pair provably equal or one side literally 1.
  std::optional<std::vector<Dim>> broadcastShapes(const Type &l, const Type &r, Span at, const std::string &op);

  //===-- Bodies ---------------------------------------------------------===//

  struct Var {
    Type type;
    bool isMutable;
    Span decl;
    /// `let x = 0.5;`: the type is the literal's default (f64 or i64), not
    /// a choice the author wrote; a mismatch then says how to choose.
    bool literalDefault = false;
  };

  void pushScope() { scopes_.emplace_back(); }
  void popScope() { scopes_.pop_back(); }
  void declare(const std::string &name, Type type, bool isMutable, Span decl);
  Var *lookup(const std::string &name);

  void checkFunction(const FunctionDecl &fn, const FunctionSig &sig);

  bool isShapeVariable(const FunctionDecl &fn, const std::string &name);

  void checkTest(const TestDecl &t);

  static bool alwaysReturns(const Block &b);
  static bool alwaysReturns(const Stmt &s);
  /// Whether a `break` in `b` leaves the loop whose body `b` is.
  static bool containsBreak(const Block &b);
  static bool containsBreak(const Stmt &s);

  void block(const Block &b);

  void letStmt(const LetStmt &l);
  /// `let (value, d1, ...) = value_and_grad(f, ..., wrt: [...])`.
  void gradientLet(const LetStmt &l);
  void assignStmt(const AssignStmt &a);
  void forStmt(const ForStmt &f);
  void returnStmt(const ReturnStmt &r);
  void stmt(const Stmt &s);

  void condition(const Expr &e, const char *what);

  /// A print or assert message: a string whose interpolations are values.
  void message(const Expr &e);

  void stringValue(const StringExpr &s);

  //===-- Conversions ----------------------------------------------------===//

  /// A value of type `from` (the checked `e`) used where `to` is required.
  void requireAssignable(const Expr &e, const Type &from, const Type &to, const std::string &what);

  //===-- Expressions ----------------------------------------------------===//

  Type record(const Expr &e, Type t);

  Type expr(const Expr &e, const Type *expected) { return record(e, exprUncached(e, expected)); }

  Type exprUncached(const Expr &e, const Type *expected);

  /// An integer literal (negated when `negative`) in its context.
  Type intLiteral(const IntExpr &e, const Type *expected, bool negative, Span at);

  /// A float literal in its context, rounded once from its decimal value.
  Type floatLiteral(const FloatExpr &e, const Type *expected, bool negative, Span at);

  Type unary(const UnaryExpr &u, const Type *expected);

  void fp8Arithmetic(Span at, std::string_view op, Scalar s, const std::string &lhs, const std::string &rhs, bool call = false);

  Type binary(const BinaryExpr &b, const Type *expected);

  static bool isValue(const Type &t) { return t.is(Kind::Scalar) || t.is(Kind::Tensor); }
  static bool sameValueType(const Type &l, const Type &r);
  /// The result of an elementwise operation: tensor op tensor (NumPy-style
  /// broadcasting sugar where provable), tensor op scalar (the scalar is
  /// broadcast), scalar op scalar. The element type is the operands'.
  Type elementwise(const Type &l, const Type &r, Span at, const std::string &op);

  Type mismatch(Tok op, Span at, const Type &l, const Type &r, const std::string &ls, const std::string &rs);
  /// The same for a built-in's operands (`call`: `where`, `pow`, named by
  /// it) or an operator's spelling.
  Type mismatch(const std::string &op, bool call, Span at, const Type &l, const Type &r, const std::string &ls,
                const std::string &rs);

  Type arithmeticResult(Tok op, Span at, const Type &l, const Type &r, const std::string &ls, const Expr &rhs);

  Type comparison(const BinaryExpr &b, const Type &l, const Type &r);

  Type cast(const CastExpr &c);

  Type index(const IndexExpr &ix);

  //===-- Calls ----------------------------------------------------------===//

  void requireEffects(const CallExpr &c, EffectSet needed);

  Type call(const CallExpr &c, const Type *expected);

  Type userCall(const CallExpr &c, const FunctionSig &sig);

  /// Binds the callee's shape variables: its dimension parameters from the
  /// call's dimension arguments, the rest from the arguments' shapes; proves
  /// the remaining parameter dimensions and the callee's `requires` in the
  /// caller's context. nullopt after reporting a failure.
  std::optional<std::map<std::string, Dim>> bindShapes(const CallExpr &c, const FunctionSig &sig,
                                                       const std::vector<std::pair<size_t, Type>> &args,
                                                       const std::vector<const Expr *> &argExprs,
                                                       const std::map<std::string, Dim> &dimArguments);

  /// A type-valued argument (`dtype: f32`, `acc: f64`).
  std::optional<Scalar> typeArgument(const Arg &a);

  /// A call of a built-in (`info`, resolved from the table). `expected`:
  /// the type its context wants, which constructors take their element type
  /// from when they have no `dtype:` (as literals do, SFEP-0054 §3.3).
  Type builtinCall(const CallExpr &c, const BuiltinInfo &info, const Type *expected);
  /// A built-in call's arguments, typed (builtinArguments: positional
  /// values with their literals' hints, `dtype:` first, named arguments
  /// checked against the family's), for its family's rule.
  struct BuiltinArgs {
    const CallExpr &call;
    const BuiltinInfo &info;
    std::vector<Type> positional;
    std::vector<const Expr *> positionalExprs;
    std::optional<Scalar> dtype, acc;
    std::optional<Scalar> context; ///< the element type the context wants
    std::vector<std::string_view> allowed; ///< the named arguments it takes
  };
  BuiltinArgs builtinArguments(const CallExpr &c, const BuiltinInfo &info, const Type *expected);
  // What the rules ask of the arguments, each reporting what is wrong.
  bool builtinArity(const BuiltinArgs &a, size_t lo, size_t hi);
  std::optional<Type> builtinTensor(const BuiltinArgs &a, size_t i);
  static const Expr *namedArgument(const CallExpr &c, const char *name);
  std::optional<std::vector<Dim>> builtinShape(const BuiltinArgs &a, size_t i); ///< `[d1, d2, ...]`
  bool builtinAdmits(const BuiltinArgs &a, Admits op, Scalar dt, size_t argIndex);
  // One rule per family of Builtins.def.
  Type printBuiltin(BuiltinArgs &a);
  Type unaryBuiltin(BuiltinArgs &a);
  Type binaryBuiltin(BuiltinArgs &a);
  Type whereBuiltin(BuiltinArgs &a);
  Type matmulBuiltin(BuiltinArgs &a);
  Type reduceBuiltin(BuiltinArgs &a);
  Type transposeBuiltin(BuiltinArgs &a);
  Type reshapeBuiltin(BuiltinArgs &a);
  Type broadcastBuiltin(BuiltinArgs &a);
  Type sliceBuiltin(BuiltinArgs &a);
  Type concatBuiltin(BuiltinArgs &a);
  Type fullBuiltin(BuiltinArgs &a);
  Type shapedBuiltin(BuiltinArgs &a); ///< zeros, random
  Type iotaBuiltin(BuiltinArgs &a);
  Type tensorBuiltin(BuiltinArgs &a);

  /// The shape of nested `[...]` data: every row of a level the same length.
  bool nestedShape(const Expr &e, std::vector<Dim> &dims, size_t);

  static std::string joinDims(const std::vector<Dim> &dims);

  /// Arguments of tensor built-ins may be `[...]` lists (shapes,
  /// permutations, data); their literals keep their default types.
  Type builtinArgument(const Expr &e, const Type *hint);

  /// The accumulator of a reduction or contraction over `input` (SFEP-0054
  /// §3.6): f32 by default for low precision, else the input type; an
  /// explicit one must be f32/f64 for low precision, and never narrower or
  /// of another kind.
  std::optional<Scalar> accumulator(const CallExpr &c, Scalar input, std::optional<Scalar> acc);

  const SourceManager &src_;
  DiagnosticEngine &diags_;
  ShapeSolver &solver_;
  CheckedProgram out_;
  ShapeContext shapes_;                 ///< the current function's shape facts
  /// Where quotient() records obligations while a signature is read (null
  /// in a body), and the factsBefore they get.
  std::vector<QuotientObligation> *quotientSink_ = nullptr;
  size_t quotientFacts_ = SIZE_MAX;
  std::set<std::string> failedQuotients_; ///< in the current function, reported once
  std::map<std::string, Span> shapeVars_; ///< shape variable -> where introduced
  std::unordered_map<const Expr *, bool> literalTrees_; ///< isLiteralTree's memo
  std::vector<std::unordered_map<std::string, Var>> scopes_;
  Type returnType_;
  EffectSet effects_;
  bool allEffects_ = false;
  int loopDepth_ = 0;
};

} // namespace keel::sema::detail

#endif // KEEL_SEMA_CHECKERIMPL_H
