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

#include "keel/sema/Builtins.h"

#include "keel/sema/Solver.h"
#include "keel/support/Codes.h"
#include "keel/support/Permutation.h"

#include <algorithm>
#include <charconv>
#include <functional>
#include <unordered_map>

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

void collectDimNames(const syntax::Dim &d, std::vector<std::pair<std::string, Span>> &out) {
  if (d.kind == syntax::Dim::Kind::Name)
    out.push_back({d.name, d.span});
  if (d.lhs)
    collectDimNames(*d.lhs, out);
  if (d.rhs)
    collectDimNames(*d.rhs, out);
}

bool isArithmetic(Tok op) {
  return op == Tok::Plus || op == Tok::Minus || op == Tok::Star || op == Tok::Slash ||
         op == Tok::Percent;
}
bool isComparison(Tok op) {
  return op == Tok::EqEq || op == Tok::NotEq || op == Tok::Less || op == Tok::LessEq ||
         op == Tok::Greater || op == Tok::GreaterEq;
}

/// Whether `e` is built of number literals and arithmetic alone. Memoized in
/// `memo`: the checker asks at every node of a chain, so without it a chain
/// of n literals would cost n^2.
bool isLiteralTree(const Expr &e, std::unordered_map<const Expr *, bool> &memo) {
  switch (e.kind) {
  case ExprKind::Int:
  case ExprKind::Float:
    return true;
  case ExprKind::Bool: case ExprKind::String: case ExprKind::Name: case ExprKind::Cast: case ExprKind::Call:
  case ExprKind::Index: case ExprKind::Array:
    return false;
  case ExprKind::Unary:
  case ExprKind::Binary:
    break;
  }
  if (auto it = memo.find(&e); it != memo.end())
    return it->second;
  bool literal;
  if (auto *u = e.as<UnaryExpr>())
    literal = u->op == Tok::Minus && isLiteralTree(*u->operand, memo);
  else {
    auto &b = *e.as<BinaryExpr>();
    literal = isArithmetic(b.op) && isLiteralTree(*b.rhs, memo) && isLiteralTree(*b.lhs, memo);
  }
  memo[&e] = literal;
  return literal;
}


/// A built-in's name (its rows are keel/sema/Builtins.def's).
bool isBuiltinName(std::string_view name) { return findBuiltin(name, false) != nullptr; }

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
      readRefinements(fn, sig);
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

  /// The `requires` clause in normal form. Its variables must be shape
  /// variables of the parameters; `V >= 0` (or lower) lifts V's default
  /// lower bound of 1.
  void readRefinements(const FunctionDecl &fn, FunctionSig &sig) {
    std::set<std::string> declared;
    for (const Param &p : fn.params) {
      std::vector<std::pair<std::string, Span>> names;
      for (const auto &d : p.type.dims)
        collectDimNames(*d, names);
      for (auto &n : names)
        declared.insert(n.first);
    }
    for (const Predicate &pr : fn.refinements) {
      std::vector<std::pair<std::string, Span>> names;
      collectDimNames(*pr.lhs, names);
      collectDimNames(*pr.rhs, names);
      bool ok = true;
      for (auto &[name, span] : names)
        if (!declared.count(name)) {
          diags_.error(code::E0212, span, "`" + name + "` is not a shape variable of `" + fn.name + "`")
              .note("a refinement constrains the shape variables of the parameters' types");
          ok = false;
        }
      std::optional<Dim> l = ok ? toDim(*pr.lhs, true) : std::nullopt;
      std::optional<Dim> r = ok && l ? toDim(*pr.rhs, true) : std::nullopt;
      if (!l || !r)
        continue;
      Rel rel = pr.op == Tok::EqEq ? Rel::Eq : pr.op == Tok::NotEq ? Rel::Ne : pr.op == Tok::Less ? Rel::Lt
              : pr.op == Tok::LessEq ? Rel::Le : pr.op == Tok::Greater ? Rel::Gt : Rel::Ge;
      sig.refinements.push_back({*l, rel, *r});
      sig.refinementSpans.push_back(pr.span);
      bool loneVariable = l->terms().size() == 1 && l->constantTerm() == 0 && l->terms()[0].second == 1 &&
                          l->terms()[0].first.kind == DimAtom::Kind::Var;
      std::optional<int64_t> bound = r->asConstant();
      if (loneVariable && bound && ((rel == Rel::Ge && *bound < 1) || (rel == Rel::Gt && *bound < 0)))
        sig.noDefaultLowerBound.insert(l->terms()[0].first.name);
    }
  }

  /// Resolves a written type. `allowVoid` for return types.
  Type resolveType(const TypeExpr &t, bool allowVoid) {
    if (t.kind == TypeExpr::Kind::Tensor) {
      std::optional<Scalar> dtype = resolveScalarName(t.name, t.nameSpan, /*dtype=*/true);
      if (!dtype)
        return Type::error();
      std::vector<Dim> dims;
      for (const auto &d : t.dims) {
        std::optional<Dim> dim = toDim(*d, /*allowProducts=*/false);
        if (!dim)
          return Type::error();
        dims.push_back(*dim);
      }
      return Type::tensor(*dtype, std::move(dims));
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

  //===-- Shapes -----------------------------------------------------------===//

  /// A written dimension in normal form. Products of variables only where
  /// Phase 0 allows them (`allowProducts`: reshape targets, requires).
  std::optional<Dim> toDim(const syntax::Dim &d, bool allowProducts) {
    using K = syntax::Dim::Kind;
    std::optional<Dim> out;
    switch (d.kind) {
    case K::Int: return Dim::constant(d.value);
    case K::Name: return Dim::variable(d.name);
    case K::Add:
    case K::Sub:
    case K::Mul: {
      std::optional<Dim> l = toDim(*d.lhs, allowProducts), r = toDim(*d.rhs, allowProducts);
      if (!l || !r)
        return std::nullopt;
      out = d.kind == K::Add ? Dim::add(*l, *r) : d.kind == K::Sub ? Dim::sub(*l, *r) : Dim::mul(*l, *r);
      break;
    }
    case K::Div:
    case K::Mod: {
      std::optional<Dim> l = toDim(*d.lhs, allowProducts), r = toDim(*d.rhs, allowProducts);
      if (!l || !r)
        return std::nullopt;
      std::optional<int64_t> q = r->asConstant();
      if (!q && allowProducts) { // `D % H` in a requires clause
        out = d.kind == K::Div ? Dim::divBy(*l, *r) : Dim::modBy(*l, *r);
        break;
      }
      if (!q || *q < 1) {
        diags_.error(code::E0212, d.rhs->span, "a dimension can only be divided by a positive constant");
        return std::nullopt;
      }
      out = d.kind == K::Div ? Dim::div(*l, *q) : Dim::mod(*l, *q);
      break;
    }
    }
    return checkedDim(out, d.span, allowProducts);
  }

  std::optional<Dim> checkedDim(std::optional<Dim> d, Span at, bool allowProducts) {
    if (!d) {
      diags_.error(code::E0212, at, "`" + std::string(src_.slice(at)) + "` is not a dimension")
          .note("dimensions are linear: constants, shape variables, `+`, `-`, constant `*`, and `/` "
                "or `%` by a constant (products of variables only in reshape targets and `requires`)");
      return std::nullopt;
    }
    if (!allowProducts && !d->isLinear()) {
      diags_.error(code::E0212, at, "`" + std::string(src_.slice(at)) + "` multiplies shape variables")
          .note("a product of variables is allowed only in a reshape target or a `requires` clause");
      return std::nullopt;
    }
    return d;
  }

  /// A dimension written as an expression (reshape targets, slice bounds):
  /// integer literals, shape variables, + - * / % and parentheses.
  std::optional<Dim> exprToDim(const Expr &e, bool allowProducts) {
    record(e, Type::scalarType(Scalar::I64));
    std::optional<Dim> out;
    if (auto *i = e.as<IntExpr>()) {
      int64_t v = 0;
      auto [p, ec] = std::from_chars(i->text.data(), i->text.data() + i->text.size(), v);
      if (ec == std::errc() && p == i->text.data() + i->text.size())
        return Dim::constant(v);
    } else if (auto *n = e.as<NameExpr>()) {
      if (shapeVars_.count(n->name))
        return Dim::variable(n->name);
      diags_.error(code::E0212, e.span, "`" + n->name + "` is not a shape variable of this function")
          .note("a dimension is built from constants and the shape variables of the parameters' types");
      return std::nullopt;
    } else if (auto *u = e.as<UnaryExpr>(); u && u->op == Tok::Minus) {
      std::optional<Dim> inner = exprToDim(*u->operand, allowProducts);
      return inner ? checkedDim(Dim::sub(Dim::constant(0), *inner), e.span, allowProducts) : std::nullopt;
    } else if (auto *b = e.as<BinaryExpr>()) {
      std::optional<Dim> l = exprToDim(*b->lhs, allowProducts), r = exprToDim(*b->rhs, allowProducts);
      if (!l || !r)
        return std::nullopt;
      switch (b->op) {
      case Tok::Plus: out = Dim::add(*l, *r); break;
      case Tok::Minus: out = Dim::sub(*l, *r); break;
      case Tok::Star: out = Dim::mul(*l, *r); break;
      case Tok::Slash:
      case Tok::Percent: {
        std::optional<int64_t> q = r->asConstant();
        if (!q || *q < 1) {
          diags_.error(code::E0212, b->rhs->span, "a dimension can only be divided by a positive constant");
          return std::nullopt;
        }
        out = b->op == Tok::Slash ? Dim::div(*l, *q) : Dim::mod(*l, *q);
        break;
      }
      default: break;
      }
      return checkedDim(out, e.span, allowProducts);
    }
    diags_.error(code::E0212, e.span, "`" + std::string(src_.slice(e.span)) + "` is not a dimension");
    return std::nullopt;
  }

  /// A compile-time integer argument (`axis: 1`, `axis: -1` is not allowed).
  std::optional<int64_t> constantInt(const Expr &e) {
    record(e, Type::scalarType(Scalar::I64));
    if (auto *i = e.as<IntExpr>()) {
      int64_t v = 0;
      auto [p, ec] = std::from_chars(i->text.data(), i->text.data() + i->text.size(), v);
      if (ec == std::errc() && p == i->text.data() + i->text.size())
        return v;
    }
    diags_.error(code::E0203, e.span, "`" + std::string(src_.slice(e.span)) + "` must be a constant axis number");
    return std::nullopt;
  }

  std::optional<size_t> axisArgument(const CallExpr &c, size_t rank, bool required = true) {
    for (const Arg &a : c.args) {
      if (a.name != "axis")
        continue;
      std::optional<int64_t> v = constantInt(*a.value);
      if (!v)
        return std::nullopt;
      if (*v < 0 || static_cast<size_t>(*v) >= rank) {
        diags_.error(code::E0203, a.value->span, "axis " + std::to_string(*v) + " is out of range for a tensor of rank " +
                                                     std::to_string(rank))
            .note("axes count from 0");
        return std::nullopt;
      }
      return static_cast<size_t>(*v);
    }
    if (required)
      diags_.error(code::E0203, c.span, "`" + c.callee + "` needs `axis:`");
    return std::nullopt;
  }

  /// `axis: 1` or, for the accumulating reductions, `axis: [0, 2]`
  /// (distinct axes; Phase 0 §8).
  std::optional<std::vector<size_t>> reductionAxes(const CallExpr &c, size_t rank, bool listAllowed) {
    const Arg *axisArg = nullptr;
    for (const Arg &a : c.args)
      if (a.name == "axis")
        axisArg = &a;
    auto *list = axisArg ? axisArg->value->as<ArrayExpr>() : nullptr;
    if (!list) {
      std::optional<size_t> axis = axisArgument(c, rank);
      return axis ? std::optional(std::vector<size_t>{*axis}) : std::nullopt;
    }
    if (!listAllowed || list->elements.empty()) {
      diags_.error(code::E0203, list->span, listAllowed ? "`axis:` needs at least one axis"
                                                        : "`" + c.callee + "` reduces one axis at a time");
      return std::nullopt;
    }
    std::vector<size_t> axes;
    for (const ExprPtr &e : list->elements) {
      std::optional<int64_t> v = constantInt(*e);
      if (!v)
        return std::nullopt;
      if (*v < 0 || static_cast<size_t>(*v) >= rank ||
          std::find(axes.begin(), axes.end(), static_cast<size_t>(*v)) != axes.end()) {
        diags_.error(code::E0203, e->span, "axis " + std::to_string(*v) + " is out of range for a tensor of rank " +
                                               std::to_string(rank) + ", or given twice");
        return std::nullopt;
      }
      axes.push_back(static_cast<size_t>(*v));
    }
    return axes;
  }

  /// "K = 3, N = 4 (M = 1)": the goal's variables in the order the goal
  /// mentions them, then the others.
  static std::string counterexampleText(const ProofResult &r, const std::vector<std::string> &goalOrder) {
    std::string main, rest;
    for (const std::string &name : goalOrder)
      if (auto it = r.counterexample.find(name); it != r.counterexample.end())
        main += (main.empty() ? "" : ", ") + name + " = " + std::to_string(it->second);
    for (const auto &[name, value] : r.counterexample)
      if (std::find(goalOrder.begin(), goalOrder.end(), name) == goalOrder.end())
        rest += (rest.empty() ? "" : ", ") + name + " = " + std::to_string(value);
    if (main.empty())
      return rest;
    return rest.empty() ? main : main + " (" + rest + ")";
  }

  /// Proves `goal` in the function's context. On failure reports `code` at
  /// `at` with the counterexample, and notes where the clashing shape
  /// variables were introduced; a timeout or unknown is E0211.
  bool prove(const Goal &goal, Span at, const char *errorCode, const std::string &message,
             const std::vector<DiagNote> &extraNotes = {}) {
    if (goal.empty())
      return true;
    ProofResult r = solver_.prove(shapes_, goal);
    if (r.status == ProofResult::Status::Proved)
      return true;
    std::set<std::string> goalVars;
    std::vector<std::string> goalOrder;
    std::string goalText;
    for (const auto &clause : goal) {
      // Clauses true for every value (0 <= 2) say nothing: leave them out.
      bool trivial = std::any_of(clause.begin(), clause.end(), [](const Comparison &c) {
        std::optional<Dim> diff = Dim::sub(c.lhs, c.rhs);
        std::optional<int64_t> k = diff ? diff->asConstant() : std::nullopt;
        if (!k)
          return false;
        switch (c.rel) {
        case Rel::Eq: return *k == 0;
        case Rel::Ne: return *k != 0;
        case Rel::Lt: return *k < 0;
        case Rel::Le: return *k <= 0;
        case Rel::Gt: return *k > 0;
        case Rel::Ge: return *k >= 0;
        }
        return false;
      });
      if (trivial)
        continue;
      std::string clauseText;
      for (const Comparison &c : clause) {
        for (const Dim *side : {&c.lhs, &c.rhs})
          for (const std::string &v : side->variables())
            if (goalVars.insert(v).second)
              goalOrder.push_back(v);
        clauseText += (clauseText.empty() ? "" : " or ") + c.str();
      }
      goalText += (goalText.empty() ? "" : ", ") + clauseText;
    }
    Diagnostic &d = r.status == ProofResult::Status::Refuted
                        ? diags_.error(errorCode, at, message)
                        : diags_.error(code::E0211, at, "could not prove " + goalText);
    if (r.status == ProofResult::Status::Refuted) {
      d.note("needs " + goalText + ", which fails for " + counterexampleText(r, goalOrder));
    } else {
      d.note("the solver answered \"unknown\" (" + r.reason + "); an unproved shape fact is an error, never "
             "an assumption")
          .help("state what the code relies on in a `requires` clause, or raise --smt-timeout");
    }
    for (const std::string &v : goalOrder)
      if (auto it = shapeVars_.find(v); it != shapeVars_.end())
        d.note(it->second, "`" + v + "` is introduced here");
    for (const DiagNote &n : extraNotes)
      d.note(n.span, n.message);
    return false;
  }

  /// Each dimension of `a` equal to that of `b`, with the same rank.
  bool sameShape(const Type &a, const Type &b, Span at, const char *errorCode, const std::string &what) {
    if (a.dims.size() != b.dims.size()) {
      diags_.error(errorCode, at, what + ": `" + typeName(a) + "` and `" + typeName(b) + "` have different ranks");
      return false;
    }
    Goal goal;
    // Equal normal forms are settled by the solver's fast path (and counted).
    for (size_t i = 0; i < a.dims.size(); ++i)
      goal.push_back({{a.dims[i], Rel::Eq, b.dims[i]}});
    return prove(goal, at, errorCode, what + ": `" + typeName(a) + "` and `" + typeName(b) + "` differ");
  }

  /// NumPy-style broadcasting of two shapes for a binary operator: ranks
  /// aligned on the right, each pair provably equal or one side literally 1.
  std::optional<std::vector<Dim>> broadcastShapes(const Type &l, const Type &r, Span at, const std::string &op) {
    size_t rank = std::max(l.dims.size(), r.dims.size());
    std::vector<Dim> out(rank);
    Goal goal;
    for (size_t i = 0; i < rank; ++i) {
      const Dim *a = i + l.dims.size() >= rank ? &l.dims[i + l.dims.size() - rank] : nullptr;
      const Dim *b = i + r.dims.size() >= rank ? &r.dims[i + r.dims.size() - rank] : nullptr;
      if (!a || a->asConstant() == std::optional<int64_t>(1)) {
        out[i] = b ? *b : *a;
      } else if (!b || b->asConstant() == std::optional<int64_t>(1)) {
        out[i] = *a;
      } else {
        out[i] = *a;
        goal.push_back({{*a, Rel::Eq, *b}});
      }
    }
    if (!prove(goal, at, code::E0200, "shapes do not match in `" + op + "`: `" + typeName(l) + "` and `" +
                                          typeName(r) + "`"))
      return std::nullopt;
    return out;
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
    shapeVars_.clear();
    shapes_ = ShapeContext{};
    shapes_.facts = sig.refinements;
    shapes_.noDefaultLowerBound = sig.noDefaultLowerBound;
    for (const Param &p : fn.params) {
      std::vector<std::pair<std::string, Span>> names;
      for (const auto &d : p.type.dims)
        collectDimNames(*d, names);
      for (auto &[name, span] : names)
        shapeVars_.emplace(name, span);
    }
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
    shapeVars_.clear();
    shapes_ = ShapeContext{};
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
    case StmtKind::Let: case StmtKind::Assign: case StmtKind::For: case StmtKind::While: case StmtKind::Break:
    case StmtKind::Continue: case StmtKind::Assert: case StmtKind::Expr:
      return false;
    }
    return false;
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
    case StmtKind::For: case StmtKind::While: case StmtKind::Loop: // nested loops own their breaks
    case StmtKind::Let: case StmtKind::Assign: case StmtKind::Return: case StmtKind::Continue: case StmtKind::Assert:
    case StmtKind::Expr:
      return false;
    }
    return false;
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
    if (from.is(Kind::Tensor) && to.is(Kind::Tensor) && from.scalar == to.scalar) {
      sameShape(from, to, e.span, code::E0210, "the shape of " + what + " is not the declared one");
      return;
    }
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
    case ExprKind::Call: return call(*e.as<CallExpr>(), expected);
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
    fp::Format f = *formatOf(target);
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
    if (isLiteralTree(*b.lhs, literalTrees_) && isLiteralTree(*b.rhs, literalTrees_)) {
      l = expr(*b.lhs, hint); // two literals: each from the context alone
      r = expr(*b.rhs, hint);
    } else if (isLiteralTree(*b.lhs, literalTrees_)) {
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
      return elementwise(l, r, b.span, std::string(tokenSpelling(b.op)));
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
  /// The result of an elementwise operation: tensor op tensor (NumPy-style
  /// broadcasting sugar where provable), tensor op scalar (the scalar is
  /// broadcast), scalar op scalar. The element type is the operands'.
  Type elementwise(const Type &l, const Type &r, Span at, const std::string &op) {
    if (l.is(Kind::Tensor) && r.is(Kind::Tensor)) {
      std::optional<std::vector<Dim>> dims = broadcastShapes(l, r, at, op);
      return dims ? Type::tensor(l.scalar, *dims) : Type::error();
    }
    return l.is(Kind::Tensor) ? l : r;
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
    return elementwise(l, r, at, std::string(tokenSpelling(op)));
  }

  Type comparison(const BinaryExpr &b, const Type &l, const Type &r) {
    if (!sameValueType(l, r))
      return mismatch(b.op, b.span, l, r, std::string(src_.slice(b.lhs->span)), std::string(src_.slice(b.rhs->span)));
    bool ordered = b.op != Tok::EqEq && b.op != Tok::NotEq;
    if (ordered && l.scalar == Scalar::Bool)
      diags_.error(code::E0110, b.opSpan, "`" + std::string(tokenSpelling(b.op)) + "` is not defined for `bool`");
    if (l.is(Kind::Tensor) || r.is(Kind::Tensor)) {
      Type t = elementwise(l, r, b.span, std::string(tokenSpelling(b.op)));
      t.scalar = Scalar::Bool;
      return t;
    }
    return Type::scalarType(Scalar::Bool);
  }

  Type cast(const CastExpr &c) {
    Type to = resolveType(c.type, false);
    const Expr &operand = *c.operand;
    // A literal cast to a type is that literal in that type (`0.125 as bf16`).
    Type from = isLiteralTree(operand, literalTrees_) && to.is(Kind::Scalar) && isFloat(to.scalar) &&
                        operand.as<IntExpr>() == nullptr
                    ? expr(operand, &to)
                    : expr(operand, nullptr);
    if (from.is(Kind::Error) || to.is(Kind::Error))
      return to;
    if (from.is(Kind::Tensor) && to.is(Kind::Scalar))
      return Type::tensor(to.scalar, from.dims); // elementwise cast
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
    if (base.dims.size() != ix.indices.size())
      diags_.error(code::E0203, ix.span, "`" + typeName(base) + "` has " + std::to_string(base.dims.size()) +
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

  Type call(const CallExpr &c, const Type *expected) {
    if (auto it = out_.functions.find(c.callee); it != out_.functions.end())
      return userCall(c, it->second);
    bool reductionForm = std::any_of(c.args.begin(), c.args.end(), [](const Arg &a) { return !a.name.empty(); }) ||
                         c.args.size() == 1;
    const BuiltinInfo *b = findBuiltin(c.callee, reductionForm);
    if (!b) {
      for (const Arg &a : c.args)
        expr(*a.value, nullptr);
      if (lookup(c.callee))
        diags_.error(code::E0104, c.calleeSpan, "`" + c.callee + "` is a variable, not a function");
      else
        diags_.error(code::E0104, c.calleeSpan, "there is no function `" + c.callee + "`");
      return Type::error();
    }
    out_.builtinCalls[&c] = b->id;
    return builtinCall(c, *b, expected);
  }

  Type userCall(const CallExpr &c, const FunctionSig &sig) {
    requireEffects(c, sig.effects);
    size_t positional = 0;
    std::vector<std::pair<size_t, Type>> tensorArgs; // parameter index, argument type
    std::vector<const Expr *> argExprs;
    for (const Arg &a : c.args) {
      if (!a.name.empty()) {
        diags_.error(code::E0113, a.nameSpan, "`" + c.callee + "` takes no named arguments");
        expr(*a.value, nullptr);
        continue;
      }
      const Type *want = positional < sig.params.size() ? &sig.params[positional] : nullptr;
      Type t = expr(*a.value, want);
      argExprs.push_back(a.value.get());
      if (want && want->is(Kind::Tensor) && t.is(Kind::Tensor) && t.scalar == want->scalar)
        tensorArgs.push_back({positional, t}); // shapes: bound below
      else if (want)
        requireAssignable(*a.value, t, *want, "argument " + std::to_string(positional + 1) + " of `" + c.callee + "`");
      ++positional;
    }
    if (positional != sig.params.size()) {
      diags_.error(code::E0103, c.span, "`" + c.callee + "` takes " + std::to_string(sig.params.size()) +
                                            " argument" + (sig.params.size() == 1 ? "" : "s") + " but " +
                                            std::to_string(positional) + (positional == 1 ? " was" : " were") + " given")
          .note(sig.decl->nameSpan, "`" + c.callee + "` is defined here");
      return sig.result;
    }
    std::optional<std::map<std::string, Dim>> bindings = bindShapes(c, sig, tensorArgs, argExprs);
    if (!bindings)
      return Type::error();
    if (!sig.result.is(Kind::Tensor))
      return sig.result;
    std::vector<Dim> dims;
    for (const Dim &d : sig.result.dims) {
      std::optional<Dim> bound = d.substitute(*bindings);
      if (!bound)
        return Type::error();
      dims.push_back(*bound);
    }
    return Type::tensor(sig.result.scalar, dims);
  }

  /// Binds the callee's shape variables from the arguments' shapes, proves
  /// the remaining parameter dimensions and the callee's `requires` in the
  /// caller's context. nullopt after reporting a failure.
  std::optional<std::map<std::string, Dim>> bindShapes(const CallExpr &c, const FunctionSig &sig,
                                                       const std::vector<std::pair<size_t, Type>> &args,
                                                       const std::vector<const Expr *> &argExprs) {
    std::map<std::string, Dim> bindings;
    for (const auto &[index, arg] : args) {
      const Type &param = sig.params[index];
      if (param.dims.size() != arg.dims.size()) {
        diags_.error(code::E0209, argExprs[index]->span, "argument " + std::to_string(index + 1) + " of `" + c.callee +
                                                             "` has rank " + std::to_string(arg.dims.size()) +
                                                             " but the parameter `" + typeName(param) + "` has rank " +
                                                             std::to_string(param.dims.size()))
            .note(sig.decl->params[index].nameSpan, "the parameter is declared here");
        return std::nullopt;
      }
      for (size_t d = 0; d < param.dims.size(); ++d) {
        const Dim &p = param.dims[d];
        bool lone = p.terms().size() == 1 && p.constantTerm() == 0 && p.terms()[0].second == 1 &&
                    p.terms()[0].first.kind == DimAtom::Kind::Var;
        if (lone)
          bindings.emplace(p.terms()[0].first.name, arg.dims[d]);
      }
    }
    Goal goal;
    for (const auto &[index, arg] : args) {
      for (size_t d = 0; d < arg.dims.size(); ++d) {
        const Dim &p = sig.params[index].dims[d];
        for (const std::string &v : p.variables())
          if (!bindings.count(v)) {
            diags_.error(code::E0209, argExprs[index]->span, "cannot tell `" + v + "` of `" + c.callee +
                                                                 "` from the arguments")
                .note(sig.decl->params[index].nameSpan, "`" + v + "` appears only inside `" + p.str() + "` here")
                .help("give `" + v + "` a dimension of its own in some parameter");
            return std::nullopt;
          }
        std::optional<Dim> expected = p.substitute(bindings);
        if (!expected)
          return std::nullopt;
        goal.push_back({{arg.dims[d], Rel::Eq, *expected}});
      }
    }
    if (!prove(goal, c.span, code::E0209, "the arguments of `" + c.callee + "` do not have the shapes it declares"))
      return std::nullopt;
    // The callee's requires, in the caller's context.
    for (size_t i = 0; i < sig.refinements.size(); ++i) {
      const Comparison &r = sig.refinements[i];
      std::optional<Dim> l = r.lhs.substitute(bindings), rr = r.rhs.substitute(bindings);
      if (!l || !rr)
        return std::nullopt;
      if (!prove({{{*l, r.rel, *rr}}}, c.span, code::E0208,
                 "`" + c.callee + "` requires " + r.str() + ", which may not hold here",
                 {{sig.refinementSpans[i], "required here"}}))
        return std::nullopt;
    }
    return bindings;
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

  /// A call of a built-in (`info`, resolved from the table). `expected`:
  /// the type its context wants, which constructors take their element type
  /// from when they have no `dtype:` (as literals do, SFEP-0054 §3.3).
  Type builtinCall(const CallExpr &c, const BuiltinInfo &info, const Type *expected) {
    using F = BuiltinFamily;
    const F b = info.family;
    std::vector<Type> positional;
    std::vector<const Expr *> positionalExprs;
    std::optional<Scalar> dtype, acc;
    std::set<std::string> seen;
    std::vector<std::string_view> allowed = info.namedArguments();
    // `dtype:` first: it types the values before it (`full([8], 1.0, dtype: f16)`).
    const Arg *dtypeArg = nullptr;
    for (const Arg &a : c.args)
      if (a.name == "dtype" && std::find(allowed.begin(), allowed.end(), "dtype") != allowed.end() && !dtypeArg) {
        dtypeArg = &a;
        dtype = typeArgument(a);
      }
    // The element type a constructor makes without `dtype:`: its context's.
    std::optional<Scalar> context;
    if (expected && expected->is(Kind::Tensor))
      context = expected->scalar;
    for (const Arg &a : c.args) {
      if (a.name.empty()) {
        if (b == F::Print && a.value->as<StringExpr>()) {
          message(*a.value);
          positional.push_back(Type::of(Kind::String));
          positionalExprs.push_back(a.value.get());
          continue;
        }
        // Positional values: literals take the first tensor's dtype; the
        // value of `full`, the constructor's element type.
        const Type *hint = !positional.empty() && positional[0].is(Kind::Tensor) ? &positional[0] : nullptr;
        Type fill;
        if (b == F::Full && positional.size() == 1 && (dtype || context)) {
          fill = Type::scalarType(dtype ? *dtype : *context);
          hint = &fill;
        }
        positional.push_back(builtinArgument(*a.value, hint));
        positionalExprs.push_back(a.value.get());
        continue;
      }
      if (!seen.insert(a.name).second) {
        diags_.error(code::E0113, a.nameSpan, "`" + a.name + ":` is given twice");
        continue;
      }
      if (&a == dtypeArg)
        continue; // typed above
      if (std::find(allowed.begin(), allowed.end(), a.name) == allowed.end()) {
        std::string list;
        for (std::string_view s : allowed)
          list += (list.empty() ? "" : ", ") + std::string(s) + ":";
        diags_.error(code::E0113, a.nameSpan, "`" + c.callee + "` takes no argument `" + a.name + ":`")
            .note(list.empty() ? "it takes no named arguments" : "it takes " + list);
        expr(*a.value, nullptr);
        continue;
      }
      if (a.name == "acc")
        acc = typeArgument(a);
      else if (a.name == "keepdims") {
        Type t = expr(*a.value, nullptr);
        if (!a.value->as<BoolExpr>() && !t.is(Kind::Error))
          diags_.error(code::E0106, a.value->span, "`keepdims:` takes `true` or `false`");
      } else if (a.name == "seed") {
        Type i64 = Type::scalarType(Scalar::I64);
        requireAssignable(*a.value, expr(*a.value, &i64), i64, "`seed:`");
      }
      // axis, start and stop are read by the rules below.
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
      if (!positional[i].is(Kind::Tensor) && !(b == F::Unary && positional[i].is(Kind::Scalar)) &&
          !(b == F::Binary && positional[i].is(Kind::Scalar))) {
        diags_.error(code::E0106, positionalExprs[i]->span, "`" + c.callee + "` needs a tensor here, found `" +
                                                                typeName(positional[i]) + "`");
        return std::nullopt;
      }
      return positional[i];
    };
    auto named = [&](const char *name) -> const Expr * {
      for (const Arg &a : c.args)
        if (a.name == name)
          return a.value.get();
      return nullptr;
    };
    /// A `[d1, d2, ...]` argument as dimensions.
    auto dimList = [&](size_t i, bool allowProducts) -> std::optional<std::vector<Dim>> {
      auto *list = i < positionalExprs.size() ? positionalExprs[i]->as<ArrayExpr>() : nullptr;
      if (!list) {
        if (i < positionalExprs.size())
          diags_.error(code::E0212, positionalExprs[i]->span, "`" + c.callee + "` needs a shape here, e.g. `[B, D]`");
        return std::nullopt;
      }
      std::vector<Dim> dims;
      bool ok = true;
      for (const ExprPtr &e : list->elements) {
        std::optional<Dim> d = exprToDim(*e, allowProducts);
        ok &= d.has_value();
        if (d)
          dims.push_back(*d);
      }
      return ok ? std::optional(dims) : std::nullopt;
    };
    auto admitted = [&](Admits op, Scalar dt, size_t argIndex) {
      if (admits(op, dt))
        return true;
      diags_.error(code::E0213, positionalExprs[argIndex]->span, "`" + c.callee + "` is not defined for `" +
                                                                      std::string(scalarName(dt)) + "` elements")
          .note(std::string("`") + c.callee + "` takes " + std::string(admittedText(op)));
      return false;
    };
    switch (b) {
    case F::Print: {
      requireEffects(c, {"io"});
      if (arity(1, 1) && (positional[0].is(Kind::Void) || positional[0].is(Kind::Array) ||
                          positional[0].is(Kind::TypeName)))
        diags_.error(code::E0106, positionalExprs[0]->span, "`" + typeName(positional[0]) + "` cannot be printed");
      return Type::voidType();
    }
    case F::Unary: {
      if (!arity(1, 1)) return Type::error();
      auto t = tensorArg(0);
      if (!t) return Type::error();
      if (isFp8(t->scalar) && t->is(Kind::Scalar)) {
        fp8Arithmetic(c.span, c.callee, t->scalar, std::string(src_.slice(positionalExprs[0]->span)), "");
        return Type::error();
      }
      if (!admitted(info.admits, t->scalar, 0)) return Type::error();
      return *t;
    }
    case F::Binary: {
      if (!arity(2, 2)) return Type::error();
      auto l = tensorArg(0), r = tensorArg(1);
      if (!l || !r) return Type::error();
      std::string ls(src_.slice(positionalExprs[0]->span)), rs(src_.slice(positionalExprs[1]->span));
      if (!sameValueType(*l, *r))
        return mismatch(Tok::Comma, c.span, *l, *r, ls, rs);
      if (l->is(Kind::Scalar) && r->is(Kind::Scalar) && isFp8(l->scalar)) {
        fp8Arithmetic(c.span, c.callee, l->scalar, ls, rs);
        return Type::error();
      }
      if (!admitted(info.admits, l->scalar, 0)) return Type::error();
      return elementwise(*l, *r, c.span, c.callee);
    }
    case F::Matmul: {
      if (!arity(2, 2)) return Type::error();
      auto l = tensorArg(0), r = tensorArg(1);
      if (!l || !r) return Type::error();
      if (l->scalar != r->scalar)
        return mismatch(Tok::Comma, c.span, *l, *r, std::string(src_.slice(positionalExprs[0]->span)),
                        std::string(src_.slice(positionalExprs[1]->span)));
      if (!admitted(info.admits, l->scalar, 0)) return Type::error();
      Scalar result = accumulator(c, l->scalar, acc);
      size_t rank = l->dims.size();
      if ((rank != 2 && rank != 3) || r->dims.size() != rank) {
        diags_.error(code::E0202, c.span, "`matmul` takes [M, K] x [K, N] or [B, M, K] x [B, K, N], not `" +
                                              typeName(*l) + "` x `" + typeName(*r) + "`")
            .note("reshape leading dimensions into one batch dimension first");
        return Type::error();
      }
      const Dim &k1 = l->dims[rank - 1], &k2 = r->dims[rank - 2];
      Goal contraction = {{{k1, Rel::Eq, k2}}};
      if (!prove(contraction, c.span, code::E0201, "the contraction dimensions of `matmul` differ: `" +
                                                       k1.str() + "` in `" + typeName(*l) + "` and `" + k2.str() +
                                                       "` in `" + typeName(*r) + "`"))
        return Type::error();
      std::vector<Dim> dims;
      if (rank == 3) {
        Goal batch = {{{l->dims[0], Rel::Eq, r->dims[0]}}};
        if (!prove(batch, c.span, code::E0202, "the batch dimensions of `matmul` differ: `" + l->dims[0].str() +
                                                   "` and `" + r->dims[0].str() + "`"))
          return Type::error();
        dims.push_back(l->dims[0]);
      }
      dims.push_back(l->dims[rank - 2]);
      dims.push_back(r->dims[rank - 1]);
      return Type::tensor(result, dims);
    }
    case F::Reduce:
    case F::ReduceIndex:
    case F::ReduceBool: {
      if (!arity(1, 1)) return Type::error();
      auto t = tensorArg(0);
      if (!t) return Type::error();
      if (!admitted(info.admits, t->scalar, 0)) return Type::error();
      std::optional<std::vector<size_t>> axes = reductionAxes(c, t->dims.size(), b == F::Reduce);
      if (!axes) return Type::error();
      const Expr *keep = named("keepdims");
      bool keepdims = keep && keep->as<BoolExpr>() && keep->as<BoolExpr>()->value;
      // Several axes desugar to single-axis reductions, outside-in (the
      // largest axis first), so the result drops (or keeps as 1) each one.
      std::vector<Dim> dims;
      for (size_t i = 0; i < t->dims.size(); ++i) {
        if (std::find(axes->begin(), axes->end(), i) == axes->end())
          dims.push_back(t->dims[i]);
        else if (keepdims)
          dims.push_back(Dim::constant(1));
      }
      bool accumulates = std::find(allowed.begin(), allowed.end(), "acc") != allowed.end();
      if (!accumulates && acc)
        diags_.error(code::E0113, c.span, "`" + c.callee + "` does not accumulate: it takes no `acc:`");
      Scalar result = b == F::ReduceIndex ? Scalar::I64
                      : b == F::ReduceBool ? Scalar::Bool
                      : accumulates              ? accumulator(c, t->scalar, acc)
                                                 : t->scalar;
      return Type::tensor(result, dims);
    }
    case F::Transpose: {
      if (!arity(2, 2)) return Type::error();
      auto t = tensorArg(0);
      if (!t) return Type::error();
      auto *perm = positionalExprs[1]->as<ArrayExpr>();
      std::vector<int64_t> axes;
      bool ok = perm != nullptr;
      if (perm)
        for (const ExprPtr &e : perm->elements) {
          std::optional<int64_t> v = constantInt(*e);
          ok &= v.has_value();
          axes.push_back(v.value_or(-1));
        }
      if (!ok || !isPermutation(axes, t->dims.size())) {
        diags_.error(code::E0204, positionalExprs[1]->span, "`" + std::string(src_.slice(positionalExprs[1]->span)) +
                                                                "` is not a permutation of the " +
                                                                std::to_string(t->dims.size()) + " axes of `" +
                                                                typeName(*t) + "`");
        return Type::error();
      }
      std::vector<Dim> dims;
      for (int64_t a : axes)
        dims.push_back(t->dims[static_cast<size_t>(a)]);
      return Type::tensor(t->scalar, dims);
    }
    case F::Reshape: {
      if (!arity(2, 2)) return Type::error();
      auto t = tensorArg(0);
      auto target = dimList(1, /*allowProducts=*/true);
      if (!t || !target) return Type::error();
      // Phase 0 §10: the volume equality is asserted, not proved.
      shapes_.volumes.push_back({t->dims, *target});
      return Type::tensor(t->scalar, *target);
    }
    case F::Broadcast: {
      if (!arity(2, 2)) return Type::error();
      auto t = tensorArg(0);
      auto target = dimList(1, false);
      if (!t || !target) return Type::error();
      if (t->dims.size() > target->size()) {
        diags_.error(code::E0205, c.span, "cannot broadcast `" + typeName(*t) + "` to a shape of lower rank");
        return Type::error();
      }
      size_t pad = target->size() - t->dims.size();
      Goal goal;
      for (size_t i = 0; i < t->dims.size(); ++i) {
        const Dim &from = t->dims[i], &to = (*target)[pad + i];
        goal.push_back({{from, Rel::Eq, to}, {from, Rel::Eq, Dim::constant(1)}});
      }
      if (!prove(goal, c.span, code::E0205, "`" + typeName(*t) + "` does not broadcast to `[" +
                                                joinDims(*target) + "]`"))
        return Type::error();
      return Type::tensor(t->scalar, *target);
    }
    case F::Slice: {
      if (!arity(1, 1)) return Type::error();
      auto t = tensorArg(0);
      if (!t) return Type::error();
      std::optional<size_t> axis = axisArgument(c, t->dims.size());
      const Expr *startExpr = named("start"), *stopExpr = named("stop");
      if (!startExpr || !stopExpr) {
        diags_.error(code::E0203, c.span, "`slice` needs `axis:`, `start:` and `stop:`");
        return Type::error();
      }
      std::optional<Dim> start = exprToDim(*startExpr, false), stop = exprToDim(*stopExpr, false);
      if (!axis || !start || !stop) return Type::error();
      const Dim &extent = t->dims[*axis];
      Goal goal = {{{Dim::constant(0), Rel::Le, *start}}, {{*start, Rel::Le, *stop}}, {{*stop, Rel::Le, extent}}};
      if (!prove(goal, c.span, code::E0206, "the slice [" + start->str() + ", " + stop->str() + ") may not lie within "
                                                "axis " + std::to_string(*axis) + " of `" + typeName(*t) + "`"))
        return Type::error();
      std::vector<Dim> dims = t->dims;
      std::optional<Dim> length = Dim::sub(*stop, *start);
      if (!length) return Type::error();
      dims[*axis] = *length;
      return Type::tensor(t->scalar, dims);
    }
    case F::Concat: {
      if (!arity(1, ~size_t{0})) return Type::error();
      std::optional<Type> acc0;
      for (size_t i = 0; i < positional.size(); ++i) {
        auto t = tensorArg(i);
        if (!t) return Type::error();
        if (!acc0) {
          acc0 = t;
          continue;
        }
        if (acc0->scalar != t->scalar)
          return mismatch(Tok::Comma, positionalExprs[i]->span, *acc0, *t,
                          std::string(src_.slice(positionalExprs[0]->span)),
                          std::string(src_.slice(positionalExprs[i]->span)));
        if (acc0->dims.size() != t->dims.size()) {
          diags_.error(code::E0207, positionalExprs[i]->span, "`concat` of tensors of different ranks: `" +
                                                                  typeName(*acc0) + "` and `" + typeName(*t) + "`");
          return Type::error();
        }
      }
      std::optional<size_t> axis = axisArgument(c, acc0->dims.size());
      if (!axis) return Type::error();
      // Left-associated: concat(x, y, z) = concat(concat(x, y), z).
      std::vector<Dim> dims = acc0->dims;
      for (size_t i = 1; i < positional.size(); ++i) {
        Goal goal;
        for (size_t d = 0; d < dims.size(); ++d)
          if (d != *axis)
            goal.push_back({{dims[d], Rel::Eq, positional[i].dims[d]}});
        if (!prove(goal, positionalExprs[i]->span, code::E0207,
                   "`concat` along axis " + std::to_string(*axis) + " needs the other dimensions equal: `" +
                       typeName(Type::tensor(acc0->scalar, dims)) + "` and `" + typeName(positional[i]) + "`"))
          return Type::error();
        std::optional<Dim> sum = Dim::add(dims[*axis], positional[i].dims[*axis]);
        if (!sum) return Type::error();
        dims[*axis] = *sum;
      }
      return Type::tensor(acc0->scalar, dims);
    }
    case F::Full: {
      if (!arity(2, 2)) return Type::error();
      auto dims = dimList(0, false);
      if (positional[1].is(Kind::Error) || !dims) return Type::error();
      if (!positional[1].is(Kind::Scalar)) {
        diags_.error(code::E0106, positionalExprs[1]->span, "`full` fills with a scalar, found `" + typeName(positional[1]) + "`");
        return Type::error();
      }
      if (dtype) { // the value must be of that type (no implicit conversion)
        Type want = Type::scalarType(*dtype);
        requireAssignable(*positionalExprs[1], positional[1], want, "the value of `full`");
        if (!(positional[1] == want))
          return Type::error();
      }
      return Type::tensor(dtype.value_or(positional[1].scalar), *dims);
    }
    case F::Zeros:
    case F::Random: {
      if (!arity(1, 1)) return Type::error();
      auto dims = dimList(0, false);
      if (!dims) return Type::error();
      return Type::tensor(dtype.value_or(context.value_or(Scalar::F32)), *dims);
    }
    case F::Iota: {
      if (!arity(1, 1)) return Type::error();
      auto dims = dimList(0, false);
      if (!dims) return Type::error();
      if (!axisArgument(c, dims->size())) return Type::error();
      Scalar t = dtype.value_or(context.value_or(Scalar::I64));
      if (t == Scalar::Bool) {
        diags_.error(code::E0213, c.span, "`iota` counts in numeric elements, not `bool`");
        return Type::error();
      }
      return Type::tensor(t, *dims);
    }
    case F::TensorLit: {
      if (!arity(1, 1)) return Type::error();
      std::vector<Dim> dims;
      if (!nestedShape(*positionalExprs[0], dims, 0)) return Type::error();
      return Type::tensor(dtype.value_or(context.value_or(Scalar::F64)), dims);
    }
    }
    return Type::error();
  }

  /// The shape of nested `[...]` data: every row of a level the same length.
  bool nestedShape(const Expr &e, std::vector<Dim> &dims, size_t) {
    std::vector<size_t> lengths; // along the first elements
    for (const Expr *cur = &e; auto *list = cur->as<ArrayExpr>(); cur = list->elements[0].get()) {
      if (list->elements.empty()) {
        diags_.error(code::E0212, cur->span, "`tensor` data cannot be empty: dimensions are at least 1");
        return false;
      }
      lengths.push_back(list->elements.size());
    }
    if (lengths.empty()) {
      diags_.error(code::E0212, e.span, "`tensor` takes nested `[...]` data");
      return false;
    }
    std::function<bool(const Expr &, size_t)> regular = [&](const Expr &x, size_t depth) {
      auto *list = x.as<ArrayExpr>();
      bool ok = depth == lengths.size() ? list == nullptr : list && list->elements.size() == lengths[depth];
      if (!ok) {
        diags_.error(code::E0212, x.span, "ragged `tensor` data: every row of a level needs " +
                                              (depth < lengths.size() ? std::to_string(lengths[depth]) + " elements"
                                                                      : std::string("to hold values, not rows")));
        return false;
      }
      if (list)
        for (const ExprPtr &y : list->elements)
          if (!regular(*y, depth + 1))
            return false;
      return true;
    };
    if (!regular(e, 0))
      return false;
    for (size_t n : lengths)
      dims.push_back(Dim::constant(static_cast<int64_t>(n)));
    return true;
  }

  static std::string joinDims(const std::vector<Dim> &dims) {
    std::string s;
    for (size_t i = 0; i < dims.size(); ++i)
      s += (i ? ", " : "") + dims[i].str();
    return s;
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
    if (isLowPrecision(input) && !accumulatorAllowed(input, *acc)) {
      diags_.error(code::E0913, at, "invalid accumulator `" + ac + "` for `" + in + "` input")
          .note("reductions and contractions over low-precision inputs accumulate in f32 or f64 "
                "(SFEP-0054 §3.6)")
          .help("use `acc: f32` (the default) or `acc: f64`");
      return fallback;
    }
    // (Source has no accumulating reduction over bool: `any` and `all` take no `acc:`.)
    if (input == Scalar::Bool || !accumulatorAllowed(input, *acc)) {
      bool otherKind = isFloat(input) != isFloat(*acc) || isInteger(input) != isInteger(*acc) ||
                       input == Scalar::Bool || *acc == Scalar::Bool;
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
  ShapeSolver &solver_;
  CheckedProgram out_;
  ShapeContext shapes_;                 ///< the current function's shape facts
  std::map<std::string, Span> shapeVars_; ///< shape variable -> where introduced
  std::unordered_map<const Expr *, bool> literalTrees_; ///< isLiteralTree's memo
  std::vector<std::unordered_map<std::string, Var>> scopes_;
  Type returnType_;
  std::set<std::string> effects_;
  bool allEffects_ = false;
  int loopDepth_ = 0;
};

} // namespace

CheckedProgram check(const SourceManager &sources, const Program &program, DiagnosticEngine &diags,
                     ShapeSolver &solver) {
  return Checker(sources, diags, solver).run(program);
}

CheckedProgram check(const SourceManager &sources, const Program &program, DiagnosticEngine &diags) {
  ShapeSolver solver;
  return check(sources, program, diags, solver);
}

} // namespace keel::sema
