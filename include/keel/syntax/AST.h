//===- keel/syntax/AST.h - The abstract syntax tree ------------*- C++ -*-===//
//
// The tree the parser builds for the grammar of ../shared/spec/README.md §2.
// Every node carries its Span. The tree holds only what was written: types
// are names and dimension expressions, checked later by sema, which keeps
// its results in side tables so this layer knows nothing of types.
//
//===----------------------------------------------------------------------===//
#ifndef KEEL_SYNTAX_AST_H
#define KEEL_SYNTAX_AST_H

#include "keel/syntax/Token.h"

#include <cstdint>
#include <memory>
#include <optional>
#include <string>
#include <vector>

namespace keel::syntax {

//===-- Dimensions and types ---------------------------------------------===//

/// A dimension expression: `8`, `D`, `D / 8`, `2 * S + 1`, `(B * H)`.
struct Dim {
  enum class Kind { Int, Name, Add, Sub, Mul, Div, Mod };
  Kind kind;
  Span span;
  int64_t value = 0;             ///< Int
  std::string name;              ///< Name
  std::unique_ptr<Dim> lhs, rhs; ///< the operators
  uint32_t height = 1;           ///< nodes on the longest path down (bounded by the parser)
};

/// `f16`, `int`, or `Tensor<bf16, [B, S, D]>`. Names are not resolved here.
struct TypeExpr {
  enum class Kind { Named, Tensor };
  Kind kind = Kind::Named;
  Span span;
  std::string name; ///< the scalar name, or the tensor's dtype name
  Span nameSpan;
  std::vector<std::unique_ptr<Dim>> dims; ///< Tensor only
};

/// A refinement `lhs op rhs` with op one of == != < <= > >=.
struct Predicate {
  Span span;
  Tok op;
  std::unique_ptr<Dim> lhs, rhs;
};

/// A node of kind `Kind` with a span; `as<T>()` is the checked downcast to
/// the subclass whose `kKind` matches.
template <typename Kind> struct Node {
  explicit Node(Kind k, Span s) : kind(k), span(s) {}
  virtual ~Node() = default;
  const Kind kind;
  Span span;

  template <typename T> T *as() { return kind == T::kKind ? static_cast<T *>(this) : nullptr; }
  template <typename T> const T *as() const {
    return kind == T::kKind ? static_cast<const T *>(this) : nullptr;
  }
};

//===-- Expressions ------------------------------------------------------===//

enum class ExprKind { Int, Float, Bool, String, Name, Unary, Binary, Cast, Call, Index, Array };

struct Expr : Node<ExprKind> {
  using Node::Node;
  /// Nodes on the longest path from here to a leaf. The parser bounds it
  /// (kMaxExpressionHeight), so every pass may recurse over expressions.
  uint32_t height = 1;
};
using ExprPtr = std::unique_ptr<Expr>;

/// An integer literal; `text` is as written without `_` separators.
struct IntExpr : Expr {
  static constexpr ExprKind kKind = ExprKind::Int;
  IntExpr(Span s, std::string t) : Expr(kKind, s), text(std::move(t)) {}
  std::string text;
};
/// A float literal; `text` is as written without `_` separators.
struct FloatExpr : Expr {
  static constexpr ExprKind kKind = ExprKind::Float;
  FloatExpr(Span s, std::string t) : Expr(kKind, s), text(std::move(t)) {}
  std::string text;
};
struct BoolExpr : Expr {
  static constexpr ExprKind kKind = ExprKind::Bool;
  BoolExpr(Span s, bool v) : Expr(kKind, s), value(v) {}
  bool value;
};
/// A string with its escapes resolved and `${expr}` parts parsed.
struct StringPart {
  std::string text; ///< literal text (when expr is null)
  ExprPtr expr;     ///< an interpolated expression
};
struct StringExpr : Expr {
  static constexpr ExprKind kKind = ExprKind::String;
  explicit StringExpr(Span s) : Expr(kKind, s) {}
  std::vector<StringPart> parts;
};
struct NameExpr : Expr {
  static constexpr ExprKind kKind = ExprKind::Name;
  NameExpr(Span s, std::string n) : Expr(kKind, s), name(std::move(n)) {}
  std::string name;
};
/// Prefix `-x`, `!x`, `~x`.
struct UnaryExpr : Expr {
  static constexpr ExprKind kKind = ExprKind::Unary;
  UnaryExpr(Span s, Tok o, ExprPtr e) : Expr(kKind, s), op(o), operand(std::move(e)) {}
  Tok op;
  ExprPtr operand;
};
struct BinaryExpr : Expr {
  static constexpr ExprKind kKind = ExprKind::Binary;
  BinaryExpr(Span s, Tok o, Span os, ExprPtr l, ExprPtr r)
      : Expr(kKind, s), op(o), opSpan(os), lhs(std::move(l)), rhs(std::move(r)) {}
  Tok op;
  Span opSpan;
  ExprPtr lhs, rhs;
};
/// `e as T`.
struct CastExpr : Expr {
  static constexpr ExprKind kKind = ExprKind::Cast;
  CastExpr(Span s, ExprPtr e, TypeExpr t) : Expr(kKind, s), operand(std::move(e)), type(std::move(t)) {}
  ExprPtr operand;
  TypeExpr type;
};
/// One argument: positional (`name` empty) or named (`axis: 1`).
struct Arg {
  std::string name;
  Span nameSpan;
  ExprPtr value;
};
struct CallExpr : Expr {
  static constexpr ExprKind kKind = ExprKind::Call;
  CallExpr(Span s, std::string c, Span cs) : Expr(kKind, s), callee(std::move(c)), calleeSpan(cs) {}
  std::string callee;
  Span calleeSpan;
  std::vector<Arg> args;
};
/// `x[i, j]`.
struct IndexExpr : Expr {
  static constexpr ExprKind kKind = ExprKind::Index;
  IndexExpr(Span s, ExprPtr b) : Expr(kKind, s), base(std::move(b)) {}
  ExprPtr base;
  std::vector<ExprPtr> indices;
};
/// `[a, b, c]`.
struct ArrayExpr : Expr {
  static constexpr ExprKind kKind = ExprKind::Array;
  explicit ArrayExpr(Span s) : Expr(kKind, s) {}
  std::vector<ExprPtr> elements;
};

//===-- Statements -------------------------------------------------------===//

enum class StmtKind { Let, Assign, If, For, While, Loop, Break, Continue, Return, Assert, Expr, Block };

struct Stmt : Node<StmtKind> {
  using Node::Node;
};
using StmtPtr = std::unique_ptr<Stmt>;

struct Block {
  Span span;
  std::vector<StmtPtr> stmts;
};

struct LetStmt : Stmt {
  static constexpr StmtKind kKind = StmtKind::Let;
  explicit LetStmt(Span s) : Stmt(kKind, s) {}
  bool isMutable = false;
  std::string name;
  Span nameSpan;
  std::optional<TypeExpr> type;
  ExprPtr init;
  /// `let (value, d1, ...) = value_and_grad(f, args..., wrt: [p1, ...]);`
  /// (docs/autodiff.md): the names bound, in order (empty for `let name`);
  /// `init` is then the call `f(args...)` itself, and `wrt` f's
  /// parameters whose gradients the other names take.
  std::vector<std::string> names;
  std::vector<Span> nameSpans;
  std::vector<std::string> wrt;
  std::vector<Span> wrtSpans;
};
/// `x = e`, `x += e`, ... (op is Assign, PlusAssign, MinusAssign, ...).
struct AssignStmt : Stmt {
  static constexpr StmtKind kKind = StmtKind::Assign;
  explicit AssignStmt(Span s) : Stmt(kKind, s) {}
  Tok op = Tok::Assign;
  std::string name;
  Span nameSpan;
  ExprPtr value;
};
struct IfStmt : Stmt {
  static constexpr StmtKind kKind = StmtKind::If;
  explicit IfStmt(Span s) : Stmt(kKind, s) {}
  ExprPtr cond;
  Block thenBlock;
  StmtPtr elseStmt; ///< an IfStmt or a BlockStmt, or null
};
/// `for i in from..to { }`: i takes from, from + 1, ..., to - 1.
struct ForStmt : Stmt {
  static constexpr StmtKind kKind = StmtKind::For;
  explicit ForStmt(Span s) : Stmt(kKind, s) {}
  std::string var;
  Span varSpan;
  ExprPtr from, to;
  Block body;
};
struct WhileStmt : Stmt {
  static constexpr StmtKind kKind = StmtKind::While;
  explicit WhileStmt(Span s) : Stmt(kKind, s) {}
  ExprPtr cond;
  Block body;
};
struct LoopStmt : Stmt {
  static constexpr StmtKind kKind = StmtKind::Loop;
  explicit LoopStmt(Span s) : Stmt(kKind, s) {}
  Block body;
};
struct BreakStmt : Stmt {
  static constexpr StmtKind kKind = StmtKind::Break;
  explicit BreakStmt(Span s) : Stmt(kKind, s) {}
};
struct ContinueStmt : Stmt {
  static constexpr StmtKind kKind = StmtKind::Continue;
  explicit ContinueStmt(Span s) : Stmt(kKind, s) {}
};
struct ReturnStmt : Stmt {
  static constexpr StmtKind kKind = StmtKind::Return;
  explicit ReturnStmt(Span s) : Stmt(kKind, s) {}
  ExprPtr value; ///< null for `return;`
};
/// `assert cond;` or `assert cond, "message";`.
struct AssertStmt : Stmt {
  static constexpr StmtKind kKind = StmtKind::Assert;
  explicit AssertStmt(Span s) : Stmt(kKind, s) {}
  ExprPtr cond;
  ExprPtr message; ///< a StringExpr, or null
};
struct ExprStmt : Stmt {
  static constexpr StmtKind kKind = StmtKind::Expr;
  ExprStmt(Span s, ExprPtr e) : Stmt(kKind, s), expr(std::move(e)) {}
  ExprPtr expr;
};
struct BlockStmt : Stmt {
  static constexpr StmtKind kKind = StmtKind::Block;
  explicit BlockStmt(Span s) : Stmt(kKind, s) {}
  Block block;
};

//===-- Declarations -----------------------------------------------------===//

struct Param {
  std::string name;
  Span nameSpan;
  TypeExpr type;
};

struct Effect {
  std::string name;
  Span span;
};

/// A dimension parameter, `H` in `fn split_heads<H, Dh>(...)`: a shape
/// variable the caller supplies as a named argument (`H: 12`).
struct DimParam {
  std::string name;
  Span span;
};

struct FunctionDecl {
  std::string name;
  Span nameSpan, span;
  std::vector<DimParam> dimParams; ///< `<H, Dh>`
  std::vector<Param> params;
  std::optional<TypeExpr> returnType;
  std::vector<Effect> effects; ///< as written in `![...]`
  std::vector<Predicate> refinements; ///< the `requires` clause
  Block body;
};

struct TestDecl {
  std::string name; ///< the string's text
  Span nameSpan, span;
  Block body;
};

struct Program {
  FileId file = kNoFile;
  std::vector<FunctionDecl> functions;
  std::vector<TestDecl> tests;
};

} // namespace keel::syntax

#endif // KEEL_SYNTAX_AST_H
