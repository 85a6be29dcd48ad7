//===- Checker.cpp - Names, scalar types, low precision, effects ---------===//
//
// The checker's entry points and declarations: signatures, effects,
// `requires` clauses and written types. The other seams of the one Checker
// class are in CheckStatements.cpp, CheckExpressions.cpp, CheckBuiltins.cpp
// and CheckShapes.cpp (CheckerImpl.h says which holds what).
//
//===----------------------------------------------------------------------===//
#include "CheckerImpl.h"

#include <algorithm>

namespace keel::sema {

namespace detail {

/// Spellings that people try for the low-precision types (E0910).
std::optional<std::string> lowPrecisionHint(std::string_view name) {
  struct Row {
    std::initializer_list<std::string_view> spellings;
    const char *hint;
  };
  static const Row rows[] = {
      {{"fp8", "float8", "f8", "fp8e4", "fp8_e4", "float8e4"},
       "`fp8` does not say which encoding: use `fp8e4m3fn` or `fp8e5m2`"},
      {{"fp8e4m3", "e4m3", "e4m3fn", "float8_e4m3fn", "float8e4m3fn", "float8_e4m3"},
       "did you mean `fp8e4m3fn`? (the `fn` is part of the name: finite, no infinity)"},
      {{"fp8e5", "e5m2", "float8_e5m2", "float8e5m2", "fp8_e5m2"}, "did you mean `fp8e5m2`?"},
      // Other formats of the same widths (other exponent bias, one NaN, no
      // -0): not misspellings of Keel's.
      {{"fp8e4m3fnuz", "float8_e4m3fnuz", "e4m3fnuz", "fp8e5m2fnuz", "float8_e5m2fnuz", "e5m2fnuz", "fp8e4m3b11fnuz",
        "float8_e4m3b11fnuz"},
       "the `fnuz` formats are other encodings (another exponent bias, a single NaN, no -0) that Keel does not "
       "support; its 8-bit formats are `fp8e4m3fn` and `fp8e5m2` (OCP FP8)"},
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

void Checker::collectSignatures(const Program &program) {
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
    for (const DimParam &d : fn.dimParams) {
      if (std::find(sig.dimParams.begin(), sig.dimParams.end(), d.name) != sig.dimParams.end()) {
        diags_.error(code::E0101, d.span, "dimension parameter `" + d.name + "` of `" + fn.name + "` is declared twice");
        continue;
      }
      sig.dimParams.push_back(d.name);
    }
    quotientSink_ = &sig.quotients;
    for (const Param &p : fn.params)
      sig.params.push_back(resolveType(p.type, false));
    sig.result = fn.returnType ? resolveType(*fn.returnType, true) : Type::voidType();
    for (const syntax::Effect &e : fn.effects) {
      if (std::optional<keel::Effect> effect = parseEffect(e.name))
        sig.effects.insert(*effect);
      else
        diags_.error(code::E0121, e.span, "unknown effect `" + e.name + "`")
            .note("the effects are clock, gpu, io, model, net and rand");
    }
    readRefinements(fn, sig);
    quotientSink_ = nullptr;
    bool tensors = sig.result.is(Kind::Tensor) ||
                   std::any_of(sig.params.begin(), sig.params.end(), [](const Type &t) { return t.is(Kind::Tensor); });
    if (!fn.dimParams.empty() && !tensors)
      diags_.error(code::E0212, fn.dimParams[0].span, "`" + fn.name + "` has dimension parameters but takes and "
                                                          "returns no tensor")
          .note("dimension parameters size tensors; a scalar function takes an `int` parameter instead");
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

void Checker::readRefinements(const FunctionDecl &fn, FunctionSig &sig) {
  std::set<std::string> declared(sig.dimParams.begin(), sig.dimParams.end());
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
            .note("a refinement constrains the shape variables of the parameters' types and the dimension "
                  "parameters (`fn " + fn.name + "<" + name + ">(...)`)");
        ok = false;
      }
    quotientFacts_ = sig.refinements.size();
    std::optional<Dim> l = ok ? toDim(*pr.lhs, /*inRequires=*/true) : std::nullopt;
    std::optional<Dim> r = ok && l ? toDim(*pr.rhs, /*inRequires=*/true) : std::nullopt;
    quotientFacts_ = SIZE_MAX;
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

Type Checker::resolveType(const TypeExpr &t, bool allowVoid) {
  if (t.kind == TypeExpr::Kind::Tensor) {
    std::optional<Scalar> dtype = resolveScalarName(t.name, t.nameSpan, /*dtype=*/true);
    if (!dtype)
      return Type::error();
    std::vector<Dim> dims;
    for (const auto &d : t.dims) {
      std::optional<Dim> dim = toDim(*d, /*inRequires=*/false);
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

std::optional<Scalar> Checker::resolveScalarName(const std::string &name, Span at, bool dtype) {
  std::optional<Scalar> s = parseScalarName(name);
  if (s && *s == Scalar::I4 && !dtype) {
    diags_.error(code::E0102, at, "`i4` is only a tensor element type")
        .help("use `i8` for a scalar, or `Tensor<i4, [...]>`");
    return std::nullopt;
  }
  if (s)
    return s;
  if (std::optional<std::string> hint = lowPrecisionHint(name)) {
    bool otherFormat = name.find("fnuz") != std::string::npos;
    diags_.error(code::E0910, at, (otherFormat ? "unsupported low-precision format `" : "unknown low-precision type `") +
                                      name + "`")
        .help(*hint);
    return std::nullopt;
  }
  diags_.error(code::E0102, at, "unknown type `" + name + "`")
      .note("the scalar types are bool, int, float, i8-i64, u8-u64, f16, bf16, tf32, "
            "fp8e4m3fn, fp8e5m2, f32, f64");
  return std::nullopt;
}

} // namespace detail

void bindParameterVariables(const FunctionSig &sig, const std::vector<std::pair<size_t, std::vector<Dim>>> &args,
                            std::map<std::string, Dim> &bindings) {
  auto lone = [](const Dim &d) -> const DimAtom * {
    return d.terms().size() == 1 && d.constantTerm() == 0 && d.terms()[0].second == 1 ? &d.terms()[0].first
                                                                                        : nullptr;
  };
  for (const auto &[index, shape] : args)
    for (size_t d = 0; d < shape.size() && d < sig.params[index].dims.size(); ++d)
      if (const DimAtom *a = lone(sig.params[index].dims[d]); a && a->kind == DimAtom::Kind::Var)
        bindings.emplace(a->name, shape[d]);
  for (bool more = true; more;) {
    more = false;
    for (const auto &[index, shape] : args)
      for (size_t d = 0; d < shape.size() && d < sig.params[index].dims.size(); ++d) {
        const DimAtom *q = lone(sig.params[index].dims[d]);
        const DimAtom *dividend = q && q->kind == DimAtom::Kind::Div && q->symbolicDivisor ? lone(*q->operand) : nullptr;
        if (!dividend || dividend->kind != DimAtom::Kind::Var || bindings.count(dividend->name))
          continue;
        std::set<std::string> free = q->symbolicDivisor->variables();
        if (!std::all_of(free.begin(), free.end(), [&](const std::string &v) { return bindings.count(v) > 0; }))
          continue;
        std::optional<Dim> divisor = q->symbolicDivisor->substitute(bindings);
        if (std::optional<Dim> value = divisor ? Dim::mul(*divisor, shape[d]) : std::nullopt) {
          bindings.emplace(dividend->name, *value);
          more = true;
        }
      }
  }
}

CheckedProgram check(const SourceManager &sources, const syntax::Program &program, DiagnosticEngine &diags,
                     ShapeSolver &solver) {
  return detail::Checker(sources, diags, solver).run(program);
}

CheckedProgram check(const SourceManager &sources, const syntax::Program &program, DiagnosticEngine &diags) {
  ShapeSolver solver;
  return check(sources, program, diags, solver);
}

} // namespace keel::sema
