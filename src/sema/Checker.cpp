//===- Checker.cpp - Names, scalar types, low precision, effects ---------===//
//
// One pass over each function body with a scope stack. Expressions are
// checked with an optional expected type, which is how literals get their
// type: a literal takes the expected type, or in a binary operation the
// other operand's exact type (SFEP-0054 §3.3), so the non-literal operand is
// checked first. An expression whose error has been reported gets the Error
// type, which every later check accepts, so one mistake gives one message.
//
//===----------------------------------------------------------------------===//
#include "keel/sema/Checker.h"

#include "keel/syntax/Codes.h"

#include <algorithm>
#include <charconv>
#include <functional>

namespace keel::sema {

using namespace syntax;

bool isEffectName(std::string_view name) {
  for (std::string_view e : {"clock", "gpu", "io", "model", "net", "rand"})
    if (name == e)
      return true;
  return false;
}

namespace {

using Kind = Type::Kind;

/// Spellings that people try for the low-precision types (E0910).
std::optional<std::string> lowPrecisionHint(std::string_view name) {
  struct Row {
    std::initializer_list<std::string_view> spellings;
    const char *hint;
  };
  static const Row rows[] = {
      {{"fp8", "float8", "f8", "fp8e4", "fp8_e4", "float8e4"},
       "`fp8` does not say which encoding: use `fp8e4m3fn` or `fp8e5m2`"},
      {{"fp8e4m3", "e4m3", "e4m3fn", "float8_e4m3fn", "float8e4m3fn", "fp8e4m3fnuz", "float8_e4m3"},
       "did you mean `fp8e4m3fn`? (the `fn` is part of the name: finite, no infinity)"},
      {{"fp8e5", "e5m2", "float8_e5m2", "float8e5m2", "fp8e5m2fnuz", "fp8_e5m2"},
       "did you mean `fp8e5m2`?"},
      {{"half", "fp16", "float16", "binary16"}, "did you mean `f16`?"},
      {{"bfloat16", "bfloat", "bf", "brain16"}, "did you mean `bf16`?"},
      {{"tensorfloat32", "tfloat32", "tf", "tensorfloat"}, "did you mean `tf32`?"},
  };
  for (const Row &r : rows)
    for (std::string_view s : r.spellings)
      if (s == name)
        return std::string(r.hint);
  return std::nullopt;
}

std::string dimText(const Dim &d) {
  switch (d.kind) {
  case Dim::Kind::Int: return std::to_string(d.value);
  case Dim::Kind::Name: return d.name;
  case Dim::Kind::Add: return dimText(*d.lhs) + " + " + dimText(*d.rhs);
  case Dim::Kind::Sub: return dimText(*d.lhs) + " - " + dimText(*d.rhs);
  case Dim::Kind::Mul: return dimText(*d.lhs) + " * " + dimText(*d.rhs);
  case Dim::Kind::Div: return dimText(*d.lhs) + " / " + dimText(*d.rhs);
  case Dim::Kind::Mod: return dimText(*d.lhs) + " % " + dimText(*d.rhs);
  }
  return "?";
}

void collectDimNames(const Dim &d, std::vector<std::pair<std::string, Span>> &out) {
  if (d.kind == Dim::Kind::Name)
    out.push_back({d.name, d.span});
  if (d.lhs)
    collectDimNames(*d.lhs, out);
  if (d.rhs)
    collectDimNames(*d.rhs, out);
}

bool isLiteralTree(const Expr &e) {
  switch (e.kind) {
  case ExprKind::Int:
  case ExprKind::Float:
    return true;
  case ExprKind::Unary:
    return e.as<UnaryExpr>()->op == Tok::Minus && isLiteralTree(*e.as<UnaryExpr>()->operand);
  case ExprKind::Binary: {
    auto &b = *e.as<BinaryExpr>();
    switch (b.op) {
    case Tok::Plus: case Tok::Minus: case Tok::Star: case Tok::Slash: case Tok::Percent:
      return isLiteralTree(*b.lhs) && isLiteralTree(*b.rhs);
    default:
      return false;
    }
  }
  default:
    return false;
  }
}

bool isArithmetic(Tok op) {
  return op == Tok::Plus || op == Tok::Minus || op == Tok::Star || op == Tok::Slash ||
         op == Tok::Percent;
}
bool isComparison(Tok op) {
  return op == Tok::EqEq || op == Tok::NotEq || op == Tok::Less || op == Tok::LessEq ||
         op == Tok::Greater || op == Tok::GreaterEq;
}

/// The built-in functions of ../shared/spec/README.md §2.
enum class Builtin {
  Print, Unary, Binary, Matmul, Reduce, ReduceIndex, ReduceBool, Transpose, Reshape, Broadcast,
  Slice, Concat, Full, Zeros, Iota, TensorLit, Random, None,
};

Builtin builtinOf(std::string_view name, bool reductionForm) {
  if (name == "print") return Builtin::Print;
  for (std::string_view u : {"relu", "gelu", "silu", "tanh", "sigmoid", "exp", "log", "neg", "abs",
                             "sqrt", "rsqrt", "bitwise_not"})
    if (name == u) return Builtin::Unary;
  if (name == "max" || name == "min")
    return reductionForm ? Builtin::Reduce : Builtin::Binary;
  if (name == "pow") return Builtin::Binary;
  if (name == "matmul") return Builtin::Matmul;
  if (name == "sum" || name == "mean" || name == "prod") return Builtin::Reduce;
  if (name == "argmax" || name == "argmin") return Builtin::ReduceIndex;
  if (name == "any" || name == "all") return Builtin::ReduceBool;
  if (name == "transpose") return Builtin::Transpose;
  if (name == "reshape") return Builtin::Reshape;
  if (name == "broadcast") return Builtin::Broadcast;
  if (name == "slice") return Builtin::Slice;
  if (name == "concat") return Builtin::Concat;
  if (name == "full") return Builtin::Full;
  if (name == "zeros") return Builtin::Zeros;
  if (name == "iota") return Builtin::Iota;
  if (name == "tensor") return Builtin::TensorLit;
  if (name == "random") return Builtin::Random;
  return Builtin::None;
}

bool isBuiltinName(std::string_view name) {
  return builtinOf(name, false) != Builtin::None || name == "max" || name == "min";
}

class Checker {
public:
  Checker(const SourceManager &sources, DiagnosticEngine &diags) : src_(sources), diags_(diags) {}

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

  void collectSignatures(const Program &program) {
    for (const FunctionDecl &fn : program.functions) {
      if (isBuiltinName(fn.name)) {
        diags_.error(code::E0101, fn.nameSpan, "`" + fn.name + "` is a built-in function and cannot be redefined");
        continue;
      }
      if (auto it = out_.functions.find(fn.name); it != out_.functions.end()) {
        diags_.error(code::E0101, fn.nameSpan, "function `" + fn.name + "` is defined twice")
            .note(it->second.decl->nameSpan, "first defined here");
        continue;
      }
      FunctionSig sig;
      sig.decl = &fn;
      for (const Param &p : fn.params)
        sig.params.push_back(resolveType(p.type, false));
      sig.result = fn.returnType ? resolveType(*fn.returnType, true) : Type::voidType();
      for (const Effect &e : fn.effects) {
        if (!isEffectName(e.name))
          diags_.error(code::E0121, e.span, "unknown effect `" + e.name + "`")
              .note("the effects are clock, gpu, io, model, net and rand");
        else
          sig.effects.insert(e.name);
      }
      if (fn.name == "main") {
        bool resultOk = sig.result.is(Kind::Void) || sig.result.isScalar(Scalar::I64) ||
                        sig.result.is(Kind::Error);
        if (!fn.params.empty() || !resultOk)
          diags_.error(code::E0114, fn.nameSpan, "`main` must take no parameters and return nothing or `int`")
              .help("write `fn main() ![io] { ... }` or `fn main() -> int ![io] { ... }`");
      }
      out_.functions.emplace(fn.name, std::move(sig));
    }
  }

  /// Resolves a written type. `allowVoid` for return types.
  Type resolveType(const TypeExpr &t, bool allowVoid) {
    if (t.kind == TypeExpr::Kind::Tensor) {
      std::optional<Scalar> dtype = resolveScalarName(t.name, t.nameSpan, /*dtype=*/true);
      if (!dtype)
        return Type::error();
      std::vector<std::string> dims;
      for (const auto &d : t.dims)
        dims.push_back(dimText(*d));
      return Type::tensor(*dtype, std::move(dims), true);
    }
    if (t.name == "void") {
      if (allowVoid)
        return Type::voidType();
      diags_.error(code::E0102, t.nameSpan, "`void` is only a return type");
      return Type::error();
    }
    std::optional<Scalar> s = resolveScalarName(t.name, t.nameSpan, false);
    return s ? Type::scalarType(*s) : Type::error();
  }

  std::optional<Scalar> resolveScalarName(const std::string &name, Span at, bool dtype) {
    std::optional<Scalar> s = parseScalarName(name);
    if (s && *s == Scalar::I4 && !dtype) {
      diags_.error(code::E0102, at, "`i4` is only a tensor element type")
          .help("use `i8` for a scalar, or `Tensor<i4, [...]>`");
      return std::nullopt;
    }
    if (s)
      return s;
    if (std::optional<std::string> hint = lowPrecisionHint(name)) {
      diags_.error(code::E0910, at, "unknown low-precision type `" + name + "`").help(*hint);
      return std::nullopt;
    }
    diags_.error(code::E0102, at, "unknown type `" + name + "`")
        .note("the scalar types are bool, int, float, i8-i64, u8-u64, f16, bf16, tf32, "
              "fp8e4m3fn, fp8e5m2, f32, f64");
    return std::nullopt;
  }

  //===-- Bodies ---------------------------------------------------------===//

  struct Var {
    Type type;
    bool isMutable;
    Span decl;
  };

  void pushScope() { scopes_.emplace_back(); }
  void popScope() { scopes_.pop_back(); }
  void declare(const std::string &name, Type type, bool isMutable, Span decl) {
    scopes_.back()[name] = Var{std::move(type), isMutable, decl};
  }
  Var *lookup(const std::string &name) {
    for (auto it = scopes_.rbegin(); it != scopes_.rend(); ++it)
      if (auto found = it->find(name); found != it->end())
        return &found->second;
    return nullptr;
  }

  void checkFunction(const FunctionDecl &fn, const FunctionSig &sig) {
    scopes_.clear();
    pushScope();
    // Shape variables are readable as `int` values in the body.
    for (const Param &p : fn.params) {
      std::vector<std::pair<std::string, Span>> names;
      for (const auto &d : p.type.dims)
        collectDimNames(*d, names);
      for (auto &[name, span] : names)
        if (!lookup(name))
          declare(name, Type::scalarType(Scalar::I64), false, span);
    }
    for (size_t i = 0; i < fn.params.size(); ++i) {
      const Param &p = fn.params[i];
      if (scopes_.back().count(p.name) && scopes_.back()[p.name].decl.begin != p.nameSpan.begin &&
          !isShapeVariable(fn, p.name))
        diags_.error(code::E0101, p.nameSpan, "parameter `" + p.name + "` is declared twice");
      declare(p.name, sig.params[i], false, p.nameSpan);
    }
    returnType_ = sig.result;
    effects_ = sig.effects;
    allEffects_ = false;
    loopDepth_ = 0;
    block(fn.body);
    if (!returnType_.is(Kind::Void) && !returnType_.is(Kind::Error) && !alwaysReturns(fn.body))
      diags_.error(code::E0107, {fn.body.span.file, fn.body.span.end - 1, fn.body.span.end},
                   "function `" + fn.name + "` can reach its end without returning a `" +
                       typeName(returnType_) + "`")
          .note(fn.returnType->span, "the return type is declared here");
  }

  bool isShapeVariable(const FunctionDecl &fn, const std::string &name) {
    for (const Param &p : fn.params) {
      std::vector<std::pair<std::string, Span>> names;
      for (const auto &d : p.type.dims)
        collectDimNames(*d, names);
      for (auto &n : names)
        if (n.first == name)
          return true;
    }
    return false;
  }

  void checkTest(const TestDecl &t) {
    scopes_.clear();
    pushScope();
    returnType_ = Type::voidType();
    effects_.clear();
    allEffects_ = true; // a test is the harness: it may use every effect
    loopDepth_ = 0;
    block(t.body);
  }

  static bool alwaysReturns(const Block &b) {
    return !b.stmts.empty() && alwaysReturns(*b.stmts.back());
  }
  static bool alwaysReturns(const Stmt &s) {
    switch (s.kind) {
    case StmtKind::Return: return true;
    case StmtKind::Block: return alwaysReturns(s.as<BlockStmt>()->block);
    case StmtKind::If: {
      auto &i = *s.as<IfStmt>();
      return i.elseStmt && alwaysReturns(i.thenBlock) && alwaysReturns(*i.elseStmt);
    }
    case StmtKind::Loop: return !containsBreak(s.as<LoopStmt>()->body);
    default: return false;
    }
  }
  /// Whether a `break` in `b` leaves the loop whose body `b` is.
  static bool containsBreak(const Block &b) {
    for (const StmtPtr &s : b.stmts)
      if (containsBreak(*s))
        return true;
    return false;
  }
  static bool containsBreak(const Stmt &s) {
    switch (s.kind) {
    case StmtKind::Break: return true;
    case StmtKind::Block: return containsBreak(s.as<BlockStmt>()->block);
    case StmtKind::If: {
      auto &i = *s.as<IfStmt>();
      return containsBreak(i.thenBlock) || (i.elseStmt && containsBreak(*i.elseStmt));
    }
    default: return false; // nested loops own their breaks
    }
  }

  void block(const Block &b) {
    pushScope();
    for (const StmtPtr &s : b.stmts)
      stmt(*s);
    popScope();
  }

  void stmt(const Stmt &s) {
    switch (s.kind) {
    case StmtKind::Let: {
      auto &l = *s.as<LetStmt>();
      Type declared = l.type ? resolveType(*l.type, false) : Type::error();
      Type t = expr(*l.init, l.type ? &declared : nullptr);
      if (l.type)
        requireAssignable(*l.init, t, declared, "the initializer of `" + l.name + "`");
      Type varType = l.type ? declared : t;
      if (varType.is(Kind::Void)) {
        diags_.error(code::E0106, l.init->span, "`" + l.name + "` cannot hold the result of a function that returns nothing");
        varType = Type::error();
      }
      declare(l.name, varType, l.isMutable, l.nameSpan);
      return;
    }
    case StmtKind::Assign: {
      auto &a = *s.as<AssignStmt>();
      Var *v = lookup(a.name);
      if (!v) {
        diags_.error(code::E0100, a.nameSpan, "`" + a.name + "` is not defined");
        expr(*a.value, nullptr);
        return;
      }
      if (!v->isMutable)
        diags_.error(code::E0105, a.nameSpan, "cannot assign to `" + a.name + "`: it is not `let mut`")
            .note(v->decl, "`" + a.name + "` is declared here")
            .help("declare it with `let mut " + a.name + "`");
      Type t = expr(*a.value, &v->type);
      if (a.op == Tok::Assign) {
        requireAssignable(*a.value, t, v->type, "the assignment to `" + a.name + "`");
      } else {
        Tok op = a.op == Tok::PlusAssign ? Tok::Plus : a.op == Tok::MinusAssign ? Tok::Minus
               : a.op == Tok::StarAssign ? Tok::Star : Tok::Slash;
        arithmeticResult(op, a.nameSpan.to(a.value->span), v->type, t, a.name, *a.value);
      }
      return;
    }
    case StmtKind::If: {
      auto &i = *s.as<IfStmt>();
      condition(*i.cond, "`if`");
      block(i.thenBlock);
      if (i.elseStmt)
        stmt(*i.elseStmt);
      return;
    }
    case StmtKind::For: {
      auto &f = *s.as<ForStmt>();
      Type from = expr(*f.from, nullptr);
      Type to = expr(*f.to, from.is(Kind::Scalar) ? &from : nullptr);
      Type var = from;
      if (!from.is(Kind::Error) && !(from.is(Kind::Scalar) && isInteger(from.scalar))) {
        diags_.error(code::E0106, f.from->span, "a `for` range needs integers, found `" + typeName(from) + "`");
        var = Type::error();
      } else if (!to.is(Kind::Error) && !(to == from) && !from.is(Kind::Error)) {
        diags_.error(code::E0106, f.to->span, "the range ends in `" + typeName(to) + "` but starts in `" + typeName(from) + "`");
      }
      pushScope();
      declare(f.var, var, false, f.varSpan);
      ++loopDepth_;
      block(f.body);
      --loopDepth_;
      popScope();
      return;
    }
    case StmtKind::While: {
      auto &w = *s.as<WhileStmt>();
      condition(*w.cond, "`while`");
      ++loopDepth_;
      block(w.body);
      --loopDepth_;
      return;
    }
    case StmtKind::Loop:
      ++loopDepth_;
      block(s.as<LoopStmt>()->body);
      --loopDepth_;
      return;
    case StmtKind::Break:
    case StmtKind::Continue:
      if (loopDepth_ == 0)
        diags_.error(code::E0108, s.span, std::string(s.kind == StmtKind::Break ? "`break`" : "`continue`") +
                                              " outside a loop");
      return;
    case StmtKind::Return: {
      auto &r = *s.as<ReturnStmt>();
      if (!r.value) {
        if (!returnType_.is(Kind::Void) && !returnType_.is(Kind::Error))
          diags_.error(code::E0106, s.span, "`return;` without a value in a function that returns `" +
                                                typeName(returnType_) + "`");
        return;
      }
      if (returnType_.is(Kind::Void)) {
        expr(*r.value, nullptr);
        diags_.error(code::E0106, r.value->span, "a value is returned from a function that returns nothing")
            .help("declare the return type with `-> TYPE`");
        return;
      }
      Type t = expr(*r.value, &returnType_);
      requireAssignable(*r.value, t, returnType_, "the returned value");
      return;
    }
    case StmtKind::Assert: {
      auto &a = *s.as<AssertStmt>();
      condition(*a.cond, "`assert`");
      if (a.message)
        message(*a.message);
      return;
    }
    case StmtKind::Expr: {
      const Expr &e = *s.as<ExprStmt>()->expr;
      if (auto *str = e.as<StringExpr>()) {
        stringValue(*str);
        return;
      }
      expr(e, nullptr);
      return;
    }
    case StmtKind::Block:
      block(s.as<BlockStmt>()->block);
      return;
    }
  }

  void condition(const Expr &e, const char *what) {
    Type t = expr(e, nullptr);
    if (!t.is(Kind::Error) && !t.isScalar(Scalar::Bool))
      diags_.error(code::E0109, e.span, std::string("the condition of ") + what + " must be `bool`, found `" +
                                            typeName(t) + "`")
          .help(t.isNumericScalar() ? "compare it, e.g. `x != 0`" : "use a comparison");
  }

  /// A print or assert message: a string whose interpolations are values.
  void message(const Expr &e) {
    record(e, Type::of(Kind::String));
    for (const StringPart &part : e.as<StringExpr>()->parts) {
      if (!part.expr)
        continue;
      Type t = expr(*part.expr, nullptr);
      if (t.is(Kind::Void) || t.is(Kind::Array) || t.is(Kind::TypeName))
        diags_.error(code::E0106, part.expr->span, "`" + typeName(t) + "` cannot be printed");
    }
  }

  void stringValue(const StringExpr &s) {
    diags_.error(code::E0011, s.span, "string values are not supported in Keel")
        .note("strings may only be `print` and `assert` messages");
    record(s, Type::error());
  }

  //===-- Conversions ----------------------------------------------------===//

  /// A value of type `from` (the checked `e`) used where `to` is required.
  void requireAssignable(const Expr &e, const Type &from, const Type &to, const std::string &what) {
    if (from.is(Kind::Error) || to.is(Kind::Error) || from == to)
      return;
    std::string source = std::string(src_.slice(e.span));
    bool lowPrecision = (from.is(Kind::Scalar) && isLowPrecision(from.scalar)) ||
                        (to.is(Kind::Scalar) && isLowPrecision(to.scalar)) ||
                        (from.is(Kind::Tensor) && isLowPrecision(from.scalar)) ||
                        (to.is(Kind::Tensor) && isLowPrecision(to.scalar));
    bool castable = (from.is(Kind::Scalar) && to.is(Kind::Scalar) && from.scalar != Scalar::Bool &&
                     to.scalar != Scalar::Bool) ||
                    (from.is(Kind::Tensor) && to.is(Kind::Tensor));
    if (lowPrecision && castable) {
      diags_.error(code::E0912, e.span, "implicit conversion from `" + typeName(from) + "` to `" +
                                            typeName(to) + "` in " + what)
          .note("an existing value changes format only through an explicit `as` (SFEP-0054 §3.4)")
          .help("convert explicitly: `" + source + " as " + std::string(scalarName(to.scalar)) + "`");
      return;
    }
    Diagnostic &d = diags_.error(code::E0106, e.span, "mismatched types in " + what + ": expected `" +
                                                          typeName(to) + "`, found `" + typeName(from) + "`");
    if (castable && to.is(Kind::Scalar))
      d.help("convert explicitly: `" + source + " as " + std::string(scalarName(to.scalar)) + "`");
  }

  //===-- Expressions ----------------------------------------------------===//

  Type record(const Expr &e, Type t) {
    out_.exprTypes[&e] = t;
    return t;
  }

  Type expr(const Expr &e, const Type *expected) { return record(e, exprUncached(e, expected)); }

  Type exprUncached(const Expr &e, const Type *expected) {
    switch (e.kind) {
    case ExprKind::Int: return intLiteral(*e.as<IntExpr>(), expected, false, e.span);
    case ExprKind::Float: return floatLiteral(*e.as<FloatExpr>(), expected, false, e.span);
    case ExprKind::Bool: return Type::scalarType(Scalar::Bool);
    case ExprKind::String:
      stringValue(*e.as<StringExpr>());
      return Type::error();
    case ExprKind::Name: {
      auto &n = *e.as<NameExpr>();
      if (Var *v = lookup(n.name))
        return v->type;
      if (out_.functions.count(n.name) || isBuiltinName(n.name))
        diags_.error(code::E0106, e.span, "`" + n.name + "` is a function: call it, or pass a value")
            .note("functions are not values in Keel");
      else if (parseScalarName(n.name) || lowPrecisionHint(n.name))
        diags_.error(code::E0100, e.span, "`" + n.name + "` is a type, not a value")
            .help("types are values only as `dtype:` and `acc:` arguments of tensor built-ins");
      else
        diags_.error(code::E0100, e.span, "`" + n.name + "` is not defined");
      return Type::error();
    }
    case ExprKind::Unary: return unary(*e.as<UnaryExpr>(), expected);
    case ExprKind::Binary: return binary(*e.as<BinaryExpr>(), expected);
    case ExprKind::Cast: return cast(*e.as<CastExpr>());
    case ExprKind::Call: return call(*e.as<CallExpr>());
    case ExprKind::Index: return index(*e.as<IndexExpr>());
    case ExprKind::Array:
      for (const ExprPtr &x : e.as<ArrayExpr>()->elements)
        expr(*x, nullptr);
      diags_.error(code::E0106, e.span, "array values are not supported in Keel")
          .note("`[...]` lists appear only as arguments of tensor built-ins (shapes, "
                "permutations, `tensor(...)` data)");
      return Type::error();
    }
    return Type::error();
  }

  /// An integer literal (negated when `negative`) in its context.
  Type intLiteral(const IntExpr &e, const Type *expected, bool negative, Span at) {
    Scalar target = Scalar::I64;
    if (expected && expected->is(Kind::Scalar) && isInteger(expected->scalar))
      target = expected->scalar;
    else if (expected && expected->is(Kind::Tensor) && isInteger(expected->scalar))
      target = expected->scalar; // broadcast sugar: the literal takes the element type
    else if (expected && (expected->is(Kind::Scalar) || expected->is(Kind::Tensor)) && isFloat(expected->scalar)) {
      diags_.error(code::E0106, at, "expected `" + std::string(scalarName(expected->scalar)) +
                                            "`, found integer literal `" + e.text + "`")
          .help("write a float literal: `" + e.text + ".0`");
      return Type::error();
    }
    // Range: the magnitude must fit the target's range (two's complement).
    unsigned __int128 magnitude = 0;
    bool tooBig = false;
    for (char c : e.text) {
      magnitude = magnitude * 10 + static_cast<unsigned>(c - '0');
      if (magnitude > (static_cast<unsigned __int128>(1) << 64)) {
        tooBig = true;
        break;
      }
    }
    int bits = bitWidth(target);
    unsigned __int128 limit = isSigned(target)
                                  ? (static_cast<unsigned __int128>(1) << (bits - 1)) - (negative ? 0 : 1)
                                  : (negative ? 0 : (static_cast<unsigned __int128>(1) << bits) - 1);
    if (tooBig || (magnitude > limit && !(negative && magnitude == 0))) {
      diags_.error(code::E0111, at, "integer literal `" + std::string(negative ? "-" : "") + e.text +
                                            "` does not fit in `" + std::string(scalarName(target)) + "`");
      return Type::error();
    }
    return Type::scalarType(target);
  }

  /// A float literal in its context, rounded once from its decimal value.
  Type floatLiteral(const FloatExpr &e, const Type *expected, bool negative, Span at) {
    Scalar target = Scalar::F64;
    if (expected && (expected->is(Kind::Scalar) || expected->is(Kind::Tensor)) && isFloat(expected->scalar))
      target = expected->scalar;
    else if (expected && expected->is(Kind::Scalar) && isInteger(expected->scalar)) {
      diags_.error(code::E0106, at, "expected `" + std::string(scalarName(expected->scalar)) +
                                            "`, found float literal `" + e.text + "`")
          .help("mixing integers and floats needs `as`");
      return Type::error();
    }
    fp::Format f = formatOf(target);
    bool inexact = false;
    std::string text = (negative ? "-" : "") + e.text;
    uint64_t bits = fp::fromDecimal(f, text, &inexact).value_or(0);
    out_.floatLiterals[&e] = bits;
    fp::FpClass cls = fp::classify(f, bits);
    std::string shown = "`" + text + "` as `" + std::string(scalarName(target)) + "`";
    if (inexact && cls == fp::FpClass::Infinity)
      diags_.warning("W0901", at, "literal " + shown + " overflows to infinity");
    else if (inexact && !fp::info(f).hasInfinity && bits == fp::largestFinite(f, negative))
      diags_.warning("W0901", at, "literal " + shown + " saturates to " + fp::exactDecimal(f, bits));
    else if (inexact && cls == fp::FpClass::Zero)
      diags_.warning("W0902", at, "literal " + shown + " is below half the smallest subnormal and becomes " +
                                          fp::exactDecimal(f, bits));
    return Type::scalarType(target);
  }

  Type unary(const UnaryExpr &u, const Type *expected) {
    // A negated literal is one literal: `-128 as i8` fits, `-1.0` rounds once.
    if (u.op == Tok::Minus) {
      if (auto *i = u.operand->as<IntExpr>())
        return record(*i, intLiteral(*i, expected, true, u.span));
      if (auto *f = u.operand->as<FloatExpr>())
        return record(*f, floatLiteral(*f, expected, true, u.span));
    }
    Type t = expr(*u.operand, expected);
    if (t.is(Kind::Error))
      return t;
    Scalar s = t.scalar;
    bool value = t.is(Kind::Scalar) || t.is(Kind::Tensor);
    switch (u.op) {
    case Tok::Minus:
      if (value && t.is(Kind::Scalar) && isFp8(s)) {
        fp8Arithmetic(u.span, "-", s, std::string(src_.slice(u.operand->span)), "");
        return Type::error();
      }
      if (value && s != Scalar::Bool)
        return t;
      break;
    case Tok::Bang:
      if (value && s == Scalar::Bool)
        return t;
      break;
    case Tok::Tilde:
      if (value && isInteger(s))
        return t;
      break;
    default:
      break;
    }
    diags_.error(code::E0110, u.span, "`" + std::string(tokenSpelling(u.op)) + "` is not defined for `" +
                                          typeName(t) + "`");
    return Type::error();
  }

  void fp8Arithmetic(Span at, std::string_view op, Scalar s, const std::string &lhs, const std::string &rhs) {
    Diagnostic &d = diags_.error(code::E0914, at, "arithmetic on `" + std::string(scalarName(s)) +
                                                     "` values is not supported");
    d.note("fp8 formats are for storage, conversion, comparison and tensors; scalar fp8 arithmetic "
           "would hide expensive helpers (SFEP-0054 §3.5)");
    if (rhs.empty())
      d.help("compute in f32: `-(" + lhs + " as f32)`");
    else
      d.help("compute in f32: `(" + lhs + " as f32) " + std::string(op) + " (" + rhs + " as f32)`");
  }

  Type binary(const BinaryExpr &b, const Type *expected) {
    if (b.op == Tok::AmpAmp || b.op == Tok::PipePipe) {
      Type l = expr(*b.lhs, nullptr), r = expr(*b.rhs, nullptr);
      for (auto [t, side] : {std::pair{l, b.lhs.get()}, std::pair{r, b.rhs.get()}})
        if (!t.is(Kind::Error) && !t.isScalar(Scalar::Bool))
          diags_.error(code::E0110, side->span, "`" + std::string(tokenSpelling(b.op)) +
                                                    "` needs `bool` operands, found `" + typeName(t) + "`");
      return Type::scalarType(Scalar::Bool);
    }
    // Literal operands take the other operand's type: check the other first.
    const Type *hint = isComparison(b.op) ? nullptr : expected;
    Type l, r;
    if (isLiteralTree(*b.lhs) && isLiteralTree(*b.rhs)) {
      l = expr(*b.lhs, hint); // two literals: each from the context alone
      r = expr(*b.rhs, hint);
    } else if (isLiteralTree(*b.lhs)) {
      r = expr(*b.rhs, hint);
      l = expr(*b.lhs, r.is(Kind::Error) ? hint : &r);
    } else {
      l = expr(*b.lhs, hint);
      r = expr(*b.rhs, l.is(Kind::Error) ? hint : &l);
    }
    if (l.is(Kind::Error) || r.is(Kind::Error))
      return Type::error();
    if (isComparison(b.op))
      return comparison(b, l, r);
    if (isArithmetic(b.op))
      return arithmeticResult(b.op, b.span, l, r, std::string(src_.slice(b.lhs->span)), *b.rhs);
    // & | ^: integers or bool.
    if (sameValueType(l, r) && (isInteger(l.scalar) || l.scalar == Scalar::Bool))
      return tensorOr(l, r);
    if (!sameValueType(l, r))
      return mismatch(b.op, b.span, l, r, std::string(src_.slice(b.lhs->span)), std::string(src_.slice(b.rhs->span)));
    diags_.error(code::E0110, b.opSpan, "`" + std::string(tokenSpelling(b.op)) + "` is not defined for `" +
                                            typeName(l) + "`");
    return Type::error();
  }

  static bool isValue(const Type &t) { return t.is(Kind::Scalar) || t.is(Kind::Tensor); }
  static bool sameValueType(const Type &l, const Type &r) {
    return isValue(l) && isValue(r) && l.scalar == r.scalar;
  }
  /// Tensor op tensor, tensor op scalar (broadcast sugar), scalar op scalar.
  static Type tensorOr(const Type &l, const Type &r) {
    if (l.is(Kind::Tensor))
      return l;
    return r;
  }

  Type mismatch(Tok op, Span at, const Type &l, const Type &r, const std::string &ls, const std::string &rs) {
    std::string opText(tokenSpelling(op));
    bool lowL = isValue(l) && isLowPrecision(l.scalar), lowR = isValue(r) && isLowPrecision(r.scalar);
    bool numeric = isValue(l) && isValue(r) && l.scalar != Scalar::Bool && r.scalar != Scalar::Bool;
    if ((lowL || lowR) && numeric) {
      // The explicit computation type: the wider IEEE type if one side is
      // f32 or f64, else f32.
      Scalar via = (l.scalar == Scalar::F64 || r.scalar == Scalar::F64) ? Scalar::F64 : Scalar::F32;
      std::string viaName(scalarName(via));
      std::string lc = l.scalar == via ? ls : "(" + ls + " as " + viaName + ")";
      std::string rc = r.scalar == via ? rs : "(" + rs + " as " + viaName + ")";
      std::string what = lowL && lowR ? "mixed low-precision formats" : "mixed formats";
      diags_.error(code::E0911, at, what + " `" + std::string(scalarName(l.scalar)) + "` and `" +
                                        std::string(scalarName(r.scalar)) + "` in `" + opText + "`")
          .note("there is no implicit promotion between numeric formats (SFEP-0054 §3.5)")
          .help("convert explicitly, e.g. `" + lc + " " + opText + " " + rc + "`");
      return Type::error();
    }
    Diagnostic &d = diags_.error(code::E0106, at, "mismatched types `" + typeName(l) + "` and `" + typeName(r) +
                                                      "` in `" + opText + "`");
    if (numeric && l.is(Kind::Scalar) && r.is(Kind::Scalar))
      d.help("convert one side explicitly, e.g. `" + ls + " " + opText + " (" + rs + " as " +
             std::string(scalarName(l.scalar)) + ")`");
    return Type::error();
  }

  Type arithmeticResult(Tok op, Span at, const Type &l, const Type &r, const std::string &ls, const Expr &rhs) {
    if (l.is(Kind::Error) || r.is(Kind::Error))
      return Type::error();
    std::string rs(src_.slice(rhs.span));
    if (!sameValueType(l, r))
      return mismatch(op, at, l, r, ls, rs);
    Scalar s = l.scalar;
    if (s == Scalar::Bool) {
      diags_.error(code::E0110, at, "`" + std::string(tokenSpelling(op)) + "` is not defined for `bool`");
      return Type::error();
    }
    bool scalarCode = l.is(Kind::Scalar) && r.is(Kind::Scalar);
    if (scalarCode && isFp8(s)) {
      fp8Arithmetic(at, tokenSpelling(op), s, ls, rs);
      return Type::error();
    }
    if (op == Tok::Percent && isLowPrecision(s)) {
      diags_.error(code::E0110, at, "`%` is not defined for `" + std::string(scalarName(s)) + "`")
          .note("f16, bf16 and tf32 have + - * / (SFEP-0054 §3.5)");
      return Type::error();
    }
    return tensorOr(l, r);
  }

  Type comparison(const BinaryExpr &b, const Type &l, const Type &r) {
    if (!sameValueType(l, r))
      return mismatch(b.op, b.span, l, r, std::string(src_.slice(b.lhs->span)), std::string(src_.slice(b.rhs->span)));
    bool ordered = b.op != Tok::EqEq && b.op != Tok::NotEq;
    if (ordered && l.scalar == Scalar::Bool)
      diags_.error(code::E0110, b.opSpan, "`" + std::string(tokenSpelling(b.op)) + "` is not defined for `bool`");
    if (l.is(Kind::Tensor) || r.is(Kind::Tensor)) {
      Type t = tensorOr(l, r);
      t.scalar = Scalar::Bool;
      return t;
    }
    return Type::scalarType(Scalar::Bool);
  }

  Type cast(const CastExpr &c) {
    Type to = resolveType(c.type, false);
    const Expr &operand = *c.operand;
    // A literal cast to a type is that literal in that type (`0.125 as bf16`).
    Type from = isLiteralTree(operand) && to.is(Kind::Scalar) && isFloat(to.scalar) &&
                        operand.as<IntExpr>() == nullptr
                    ? expr(operand, &to)
                    : expr(operand, nullptr);
    if (from.is(Kind::Error) || to.is(Kind::Error))
      return to;
    if (from.is(Kind::Tensor) && to.is(Kind::Scalar))
      return Type::tensor(to.scalar, from.dims, from.shapeKnown); // elementwise cast
    if (from.is(Kind::Scalar) && to.is(Kind::Scalar)) {
      bool fromBool = from.scalar == Scalar::Bool, toBool = to.scalar == Scalar::Bool;
      if (!fromBool && !toBool)
        return to;
      if (fromBool && toBool)
        return to;
      if (fromBool && isInteger(to.scalar))
        return to;
      Scalar low = isLowPrecision(from.scalar) ? from.scalar : to.scalar;
      std::string code = isLowPrecision(low) ? code::E0912 : code::E0112;
      diags_.error(code, c.span, "cannot cast `" + typeName(from) + "` to `" + typeName(to) + "`")
          .note(fromBool ? "`bool` converts only to integer types" : "nothing converts to `bool`; compare instead")
          .help(toBool ? "write a comparison, e.g. `x != 0`" : "convert through an integer: `(b as i32) as f32`");
      return Type::error();
    }
    Scalar low = to.is(Kind::Scalar) && isLowPrecision(to.scalar) ? to.scalar : Scalar::F64;
    diags_.error(isLowPrecision(low) ? code::E0912 : code::E0112, c.span,
                 "cannot cast `" + typeName(from) + "` to `" + typeName(to) + "`");
    return Type::error();
  }

  Type index(const IndexExpr &ix) {
    Type base = expr(*ix.base, nullptr);
    for (const ExprPtr &i : ix.indices) {
      Type t = expr(*i, nullptr);
      if (!t.is(Kind::Error) && !(t.is(Kind::Scalar) && isInteger(t.scalar)))
        diags_.error(code::E0106, i->span, "an index must be an integer, found `" + typeName(t) + "`");
    }
    if (base.is(Kind::Error))
      return base;
    if (!base.is(Kind::Tensor)) {
      diags_.error(code::E0110, ix.span, "`" + typeName(base) + "` cannot be indexed");
      return Type::error();
    }
    if (base.shapeKnown && base.dims.size() != ix.indices.size())
      diags_.error(code::E0110, ix.span, "`" + typeName(base) + "` has " + std::to_string(base.dims.size()) +
                                             " dimensions but " + std::to_string(ix.indices.size()) +
                                             (ix.indices.size() == 1 ? " index is" : " indices are") + " given");
    return Type::scalarType(base.scalar);
  }

  //===-- Calls ----------------------------------------------------------===//

  void requireEffects(const CallExpr &c, const std::set<std::string> &needed) {
    if (allEffects_)
      return;
    std::vector<std::string> missing;
    for (const std::string &e : needed)
      if (!effects_.count(e))
        missing.push_back(e);
    if (missing.empty())
      return;
    std::string list;
    for (size_t i = 0; i < missing.size(); ++i)
      list += (i ? ", " : "") + missing[i];
    std::string all;
    std::set<std::string> merged = effects_;
    merged.insert(missing.begin(), missing.end());
    for (const std::string &e : merged)
      all += (all.empty() ? "" : ", ") + e;
    diags_.error(code::E0120, c.span, "`" + c.callee + "` needs the effect" + (missing.size() > 1 ? "s " : " ") +
                                          list + ", which this function does not declare")
        .help("declare it in the signature: `![" + all + "]`");
  }

  Type call(const CallExpr &c) {
    if (auto it = out_.functions.find(c.callee); it != out_.functions.end())
      return userCall(c, it->second);
    bool reductionForm = std::any_of(c.args.begin(), c.args.end(), [](const Arg &a) { return !a.name.empty(); }) ||
                         c.args.size() == 1;
    Builtin b = builtinOf(c.callee, reductionForm);
    if (b == Builtin::None) {
      for (const Arg &a : c.args)
        expr(*a.value, nullptr);
      if (lookup(c.callee))
        diags_.error(code::E0104, c.calleeSpan, "`" + c.callee + "` is a variable, not a function");
      else
        diags_.error(code::E0104, c.calleeSpan, "there is no function `" + c.callee + "`");
      return Type::error();
    }
    return builtinCall(c, b);
  }

  Type userCall(const CallExpr &c, const FunctionSig &sig) {
    requireEffects(c, sig.effects);
    size_t positional = 0;
    for (const Arg &a : c.args) {
      if (!a.name.empty()) {
        diags_.error(code::E0113, a.nameSpan, "`" + c.callee + "` takes no named arguments");
        expr(*a.value, nullptr);
        continue;
      }
      const Type *want = positional < sig.params.size() ? &sig.params[positional] : nullptr;
      Type t = expr(*a.value, want);
      if (want)
        requireAssignable(*a.value, t, *want, "argument " + std::to_string(positional + 1) + " of `" + c.callee + "`");
      ++positional;
    }
    if (positional != sig.params.size())
      diags_.error(code::E0103, c.span, "`" + c.callee + "` takes " + std::to_string(sig.params.size()) +
                                            " argument" + (sig.params.size() == 1 ? "" : "s") + " but " +
                                            std::to_string(positional) + (positional == 1 ? " was" : " were") + " given")
          .note(sig.decl->nameSpan, "`" + c.callee + "` is defined here");
    return sig.result;
  }

  /// A type-valued argument (`dtype: f32`, `acc: f64`).
  std::optional<Scalar> typeArgument(const Arg &a) {
    auto *n = a.value->as<NameExpr>();
    if (!n) {
      expr(*a.value, nullptr);
      diags_.error(code::E0106, a.value->span, "`" + a.name + ":` takes a type, e.g. `" + a.name + ": f32`");
      return std::nullopt;
    }
    std::optional<Scalar> s = resolveScalarName(n->name, n->span, true);
    if (s)
      record(*n, Type::of(Kind::TypeName, *s));
    return s;
  }

  Type builtinCall(const CallExpr &c, Builtin b) {
    std::vector<Type> positional;
    std::vector<const Expr *> positionalExprs;
    std::optional<Scalar> dtype, acc;
    std::set<std::string> seen;
    auto allowed = namedArgumentsOf(b);
    for (const Arg &a : c.args) {
      if (a.name.empty()) {
        if (b == Builtin::Print && a.value->as<StringExpr>()) {
          message(*a.value);
          positional.push_back(Type::of(Kind::String));
          positionalExprs.push_back(a.value.get());
          continue;
        }
        // Positional values: literals take the first tensor's dtype.
        const Type *hint = !positional.empty() && positional[0].is(Kind::Tensor) ? &positional[0] : nullptr;
        positional.push_back(builtinArgument(*a.value, hint));
        positionalExprs.push_back(a.value.get());
        continue;
      }
      if (!seen.insert(a.name).second) {
        diags_.error(code::E0113, a.nameSpan, "`" + a.name + ":` is given twice");
        continue;
      }
      if (std::find(allowed.begin(), allowed.end(), a.name) == allowed.end()) {
        std::string list;
        for (std::string_view s : allowed)
          list += (list.empty() ? "" : ", ") + std::string(s) + ":";
        diags_.error(code::E0113, a.nameSpan, "`" + c.callee + "` takes no argument `" + a.name + ":`")
            .note(list.empty() ? "it takes no named arguments" : "it takes " + list);
        expr(*a.value, nullptr);
        continue;
      }
      if (a.name == "dtype")
        dtype = typeArgument(a);
      else if (a.name == "acc")
        acc = typeArgument(a);
      else
        builtinArgument(*a.value, nullptr);
    }
    auto arity = [&](size_t lo, size_t hi) {
      if (positional.size() >= lo && positional.size() <= hi)
        return true;
      diags_.error(code::E0103, c.span, "`" + c.callee + "` takes " +
                                            (lo == hi ? std::to_string(lo) : std::to_string(lo) + " or more") +
                                            " positional argument" + (hi == 1 ? "" : "s") + " but " +
                                            std::to_string(positional.size()) + " given");
      return false;
    };
    auto tensorArg = [&](size_t i) -> std::optional<Type> {
      if (i >= positional.size() || positional[i].is(Kind::Error))
        return std::nullopt;
      if (!positional[i].is(Kind::Tensor) && !(b == Builtin::Unary && positional[i].is(Kind::Scalar)) &&
          !(b == Builtin::Binary && positional[i].is(Kind::Scalar))) {
        diags_.error(code::E0106, positionalExprs[i]->span, "`" + c.callee + "` needs a tensor here, found `" +
                                                                typeName(positional[i]) + "`");
        return std::nullopt;
      }
      return positional[i];
    };
    auto unknownShape = [](Scalar dt) { return Type::tensor(dt, {}, false); };
    switch (b) {
    case Builtin::Print: {
      requireEffects(c, {"io"});
      if (arity(1, 1) && (positional[0].is(Kind::Void) || positional[0].is(Kind::Array) ||
                          positional[0].is(Kind::TypeName)))
        diags_.error(code::E0106, positionalExprs[0]->span, "`" + typeName(positional[0]) + "` cannot be printed");
      return Type::voidType();
    }
    case Builtin::Unary: {
      if (!arity(1, 1)) return Type::error();
      auto t = tensorArg(0);
      if (!t) return Type::error();
      if (isFp8(t->scalar) && t->is(Kind::Scalar)) {
        fp8Arithmetic(c.span, c.callee, t->scalar, std::string(src_.slice(positionalExprs[0]->span)), "");
        return Type::error();
      }
      return *t;
    }
    case Builtin::Binary: {
      if (!arity(2, 2)) return Type::error();
      auto l = tensorArg(0), r = tensorArg(1);
      if (!l || !r) return Type::error();
      if (!sameValueType(*l, *r))
        return mismatch(Tok::Comma, c.span, *l, *r, std::string(src_.slice(positionalExprs[0]->span)),
                        std::string(src_.slice(positionalExprs[1]->span)));
      return tensorOr(*l, *r);
    }
    case Builtin::Matmul: {
      if (!arity(2, 2)) return Type::error();
      auto l = tensorArg(0), r = tensorArg(1);
      if (!l || !r) return Type::error();
      if (l->scalar != r->scalar)
        return mismatch(Tok::Comma, c.span, *l, *r, std::string(src_.slice(positionalExprs[0]->span)),
                        std::string(src_.slice(positionalExprs[1]->span)));
      return unknownShape(accumulator(c, l->scalar, acc));
    }
    case Builtin::Reduce: {
      if (!arity(1, 1)) return Type::error();
      auto t = tensorArg(0);
      if (!t) return Type::error();
      bool accumulates = c.callee != "max" && c.callee != "min";
      Scalar result = accumulates ? accumulator(c, t->scalar, acc) : t->scalar;
      if (!accumulates && acc)
        diags_.error(code::E0113, c.span, "`" + c.callee + "` does not accumulate: it takes no `acc:`");
      return unknownShape(result);
    }
    case Builtin::ReduceIndex:
      if (!arity(1, 1) || !tensorArg(0)) return Type::error();
      return unknownShape(Scalar::I64);
    case Builtin::ReduceBool:
      if (!arity(1, 1) || !tensorArg(0)) return Type::error();
      return unknownShape(Scalar::Bool);
    case Builtin::Transpose:
    case Builtin::Reshape:
    case Builtin::Broadcast: {
      if (!arity(2, 2)) return Type::error();
      auto t = tensorArg(0);
      return t ? unknownShape(t->scalar) : Type::error();
    }
    case Builtin::Slice: {
      if (!arity(1, 1)) return Type::error();
      auto t = tensorArg(0);
      return t ? unknownShape(t->scalar) : Type::error();
    }
    case Builtin::Concat: {
      if (!arity(1, ~size_t{0})) return Type::error();
      std::optional<Type> first;
      for (size_t i = 0; i < positional.size(); ++i) {
        auto t = tensorArg(i);
        if (!t) return Type::error();
        if (first && first->scalar != t->scalar)
          return mismatch(Tok::Comma, positionalExprs[i]->span, *first, *t, std::string(src_.slice(positionalExprs[0]->span)),
                          std::string(src_.slice(positionalExprs[i]->span)));
        if (!first) first = t;
      }
      return unknownShape(first->scalar);
    }
    case Builtin::Full: {
      if (!arity(2, 2) || positional[1].is(Kind::Error)) return Type::error();
      if (!positional[1].is(Kind::Scalar)) {
        diags_.error(code::E0106, positionalExprs[1]->span, "`full` fills with a scalar, found `" + typeName(positional[1]) + "`");
        return Type::error();
      }
      return unknownShape(positional[1].scalar);
    }
    case Builtin::Zeros:
    case Builtin::TensorLit:
      if (!arity(1, 1)) return Type::error();
      return unknownShape(dtype.value_or(b == Builtin::Zeros ? Scalar::F32 : Scalar::F64));
    case Builtin::Iota:
      if (!arity(1, 1)) return Type::error();
      return unknownShape(dtype.value_or(Scalar::I64));
    case Builtin::Random:
      if (!arity(1, 1)) return Type::error();
      return unknownShape(dtype.value_or(Scalar::F32));
    case Builtin::None:
      break;
    }
    return Type::error();
  }

  static std::vector<std::string_view> namedArgumentsOf(Builtin b) {
    switch (b) {
    case Builtin::Reduce: return {"axis", "keepdims", "acc"};
    case Builtin::ReduceIndex:
    case Builtin::ReduceBool: return {"axis", "keepdims"};
    case Builtin::Matmul: return {"acc"};
    case Builtin::Slice: return {"axis", "start", "stop"};
    case Builtin::Concat: return {"axis"};
    case Builtin::Zeros:
    case Builtin::TensorLit: return {"dtype"};
    case Builtin::Iota: return {"axis", "dtype"};
    case Builtin::Random: return {"seed", "dtype"};
    case Builtin::Print: case Builtin::Unary: case Builtin::Binary: case Builtin::Transpose:
    case Builtin::Reshape: case Builtin::Broadcast: case Builtin::Full: case Builtin::None:
      return {};
    }
    return {};
  }

  /// Arguments of tensor built-ins may be `[...]` lists (shapes,
  /// permutations, data); their literals keep their default types.
  Type builtinArgument(const Expr &e, const Type *hint) {
    if (auto *a = e.as<ArrayExpr>()) {
      for (const ExprPtr &x : a->elements)
        builtinArgument(*x, nullptr);
      return record(e, Type::of(Kind::Array));
    }
    return expr(e, hint);
  }

  /// The accumulator of a reduction or contraction over `input` (SFEP-0054
  /// §3.6): f32 by default for low precision, else the input type; an
  /// explicit one must be f32/f64 for low precision, and never narrower or
  /// of another kind.
  Scalar accumulator(const CallExpr &c, Scalar input, std::optional<Scalar> acc) {
    Scalar fallback = isLowPrecision(input) ? Scalar::F32 : input;
    if (!acc)
      return fallback;
    const Arg *accArg = nullptr;
    for (const Arg &a : c.args)
      if (a.name == "acc")
        accArg = &a;
    Span at = accArg ? accArg->value->span : c.span;
    std::string in(scalarName(input)), ac(scalarName(*acc));
    if (isLowPrecision(input) && *acc != Scalar::F32 && *acc != Scalar::F64) {
      diags_.error(code::E0913, at, "invalid accumulator `" + ac + "` for `" + in + "` input")
          .note("reductions and contractions over low-precision inputs accumulate in f32 or f64 "
                "(SFEP-0054 §3.6)")
          .help("use `acc: f32` (the default) or `acc: f64`");
      return fallback;
    }
    bool otherKind = isFloat(input) != isFloat(*acc) || (isInteger(input) != isInteger(*acc)) ||
                     input == Scalar::Bool || *acc == Scalar::Bool;
    bool narrower = bitWidth(*acc) < bitWidth(input) || (isInteger(input) && isSigned(input) != isSigned(*acc));
    if (!isLowPrecision(input) && (otherKind || narrower)) {
      diags_.error(code::E0913, at, "invalid accumulator `" + ac + "` for `" + in + "` input")
          .note(otherKind ? "the accumulator must be of the input's kind (integer or float)"
                          : "the accumulator must be at least as wide as the input")
          .help("use `acc: " + in + "` (the default)" +
                (input == Scalar::F32 ? " or `acc: f64`" : ""));
      return fallback;
    }
    return *acc;
  }

  const SourceManager &src_;
  DiagnosticEngine &diags_;
  CheckedProgram out_;
  std::vector<std::unordered_map<std::string, Var>> scopes_;
  Type returnType_;
  std::set<std::string> effects_;
  bool allEffects_ = false;
  int loopDepth_ = 0;
};

} // namespace

CheckedProgram check(const SourceManager &sources, const Program &program, DiagnosticEngine &diags) {
  return Checker(sources, diags).run(program);
}

} // namespace keel::sema
