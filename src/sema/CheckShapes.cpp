//===- CheckShapes.cpp - Dimensions, and proofs through the shape solver ---===//
#include "CheckerImpl.h"

#include <algorithm>
#include <charconv>

namespace keel::sema::detail {

std::optional<Dim> Checker::toDim(const syntax::Dim &d, bool inRequires) {
  using K = syntax::Dim::Kind;
  std::optional<Dim> out;
  switch (d.kind) {
  case K::Int: return Dim::constant(d.value);
  case K::Name: return Dim::variable(d.name);
  case K::Add:
  case K::Sub:
  case K::Mul: {
    std::optional<Dim> l = toDim(*d.lhs, inRequires), r = toDim(*d.rhs, inRequires);
    if (!l || !r)
      return std::nullopt;
    out = d.kind == K::Add ? Dim::add(*l, *r) : d.kind == K::Sub ? Dim::sub(*l, *r) : Dim::mul(*l, *r);
    break;
  }
  case K::Div:
  case K::Mod: {
    std::optional<Dim> l = toDim(*d.lhs, inRequires), r = toDim(*d.rhs, inRequires);
    if (!l || !r)
      return std::nullopt;
    std::optional<int64_t> q = r->asConstant();
    if (!q && d.kind == K::Div)
      return quotient(*l, *r, d.span);
    if (!q && inRequires) { // `D % H` in a requires clause
      out = Dim::modBy(*l, *r);
      break;
    }
    if (!q) {
      diags_.error(code::E0212, d.rhs->span, "`%` by a shape variable is only allowed in `requires`");
      return std::nullopt;
    }
    if (*q < 1) {
      diags_.error(code::E0212, d.rhs->span, "a dimension can only be divided by a positive constant or a dimension");
      return std::nullopt;
    }
    out = d.kind == K::Div ? Dim::div(*l, *q) : Dim::mod(*l, *q);
    break;
  }
  }
  return checkedDim(out, d.span);
}

std::optional<Dim> Checker::quotient(const Dim &a, const Dim &q, Span at) {
  std::optional<Dim> out = checkedDim(Dim::divBy(a, q), at);
  if (!out)
    return std::nullopt;
  QuotientObligation o{a, q, at, quotientFacts_};
  if (quotientSink_) {
    quotientSink_->push_back(std::move(o));
    return out;
  }
  return proveQuotient(o) ? out : std::nullopt;
}

bool Checker::proveQuotient(const QuotientObligation &o) {
  std::optional<Dim> remainder = Dim::modBy(o.dividend, o.divisor);
  if (!remainder)
    return false;
  auto wrap = [](const Dim &d) { return d.terms().size() + (d.constantTerm() != 0) > 1 ? "(" + d.str() + ")" : d.str(); };
  std::string division = wrap(o.dividend) + " / " + wrap(o.divisor);
  std::string fact = wrap(o.dividend) + " % " + wrap(o.divisor) + " == 0";
  // One missing fact, one error: the same quotient written again is not reported again.
  if (!failedQuotients_.insert(division).second)
    return false;
  Goal goal{{{*remainder, Rel::Eq, Dim::constant(0)}}};
  // A product of shape variables is >= 1 unless a variable may be 0.
  std::set<std::string> vars = o.divisor.variables();
  bool positive = o.divisor.terms().size() == 1 && o.divisor.constantTerm() == 0 && o.divisor.terms()[0].second > 0 &&
                  o.divisor.terms()[0].first.kind != DimAtom::Kind::Div &&
                  std::none_of(vars.begin(), vars.end(), [&](const std::string &v) {
                    return shapes_.noDefaultLowerBound.count(v) > 0;
                  });
  if (!positive)
    goal.insert(goal.begin(), {{o.divisor, Rel::Ge, Dim::constant(1)}});
  // A requires predicate's quotient may use the predicates before it only.
  std::vector<Comparison> facts = shapes_.facts;
  if (o.factsBefore < shapes_.facts.size())
    shapes_.facts.resize(o.factsBefore);
  bool ok = prove(goal, o.at, code::E0214, "`" + division + "` may not divide exactly", {},
                  "a dimension divided by a dimension must be a whole number at every size: " +
                      std::string(facts.empty() ? "add `requires " + fact + "`"
                                                : "add `" + fact + "` to the `requires` clause") +
                      (o.factsBefore != SIZE_MAX ? ", before this predicate" : ""));
  shapes_.facts = std::move(facts);
  if (ok)
    failedQuotients_.erase(division);
  return ok;
}

std::optional<Dim> Checker::checkedDim(std::optional<Dim> d, Span at) {
  if (!d)
    diags_.error(code::E0212, at, "`" + std::string(src_.slice(at)) + "` is not a dimension")
        .note("dimensions are constants, shape variables, `+`, `-`, `*`, `/` and `%` by a constant, and `/` "
              "by a dimension that divides exactly (`%` by a variable only in `requires`); a coefficient must "
              "fit in 64 bits, and a product of sums may expand to at most 1024 terms");
  return d;
}

std::optional<Dim> Checker::exprToDim(const Expr &e) {
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
    std::optional<Dim> inner = exprToDim(*u->operand);
    return inner ? checkedDim(Dim::sub(Dim::constant(0), *inner), e.span) : std::nullopt;
  } else if (auto *b = e.as<BinaryExpr>()) {
    std::optional<Dim> l = exprToDim(*b->lhs), r = exprToDim(*b->rhs);
    if (!l || !r)
      return std::nullopt;
    // + - * / % make dimensions; any other operator leaves `out` empty,
    // which checkedDim reports.
    if (b->op == Tok::Plus)
      out = Dim::add(*l, *r);
    else if (b->op == Tok::Minus)
      out = Dim::sub(*l, *r);
    else if (b->op == Tok::Star)
      out = Dim::mul(*l, *r);
    else if (b->op == Tok::Slash || b->op == Tok::Percent) {
      std::optional<int64_t> q = r->asConstant();
      if (!q && b->op == Tok::Slash)
        return quotient(*l, *r, e.span);
      if (!q) {
        diags_.error(code::E0212, b->rhs->span, "`%` by a shape variable is only allowed in `requires`");
        return std::nullopt;
      }
      if (*q < 1) {
        diags_.error(code::E0212, b->rhs->span, "a dimension can only be divided by a positive constant or a dimension");
        return std::nullopt;
      }
      out = b->op == Tok::Slash ? Dim::div(*l, *q) : Dim::mod(*l, *q);
    }
    return checkedDim(out, e.span);
  }
  diags_.error(code::E0212, e.span, "`" + std::string(src_.slice(e.span)) + "` is not a dimension");
  return std::nullopt;
}

std::optional<int64_t> Checker::constantInt(const Expr &e) {
  record(e, Type::scalarType(Scalar::I64));
  const Expr *literal = &e;
  auto *minus = e.as<UnaryExpr>();
  if (minus && minus->op == Tok::Minus) {
    literal = minus->operand.get();
    record(*literal, Type::scalarType(Scalar::I64));
  }
  if (auto *i = literal->as<IntExpr>()) {
    int64_t v = 0;
    auto [p, ec] = std::from_chars(i->text.data(), i->text.data() + i->text.size(), v);
    if (ec == std::errc() && p == i->text.data() + i->text.size())
      return minus ? -v : v;
  }
  diags_.error(code::E0203, e.span, "`" + std::string(src_.slice(e.span)) + "` must be a constant axis number");
  return std::nullopt;
}

std::string Checker::counterexampleText(const ProofResult &r, const std::vector<std::string> &goalOrder) {
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

bool Checker::prove(const Goal &goal, Span at, const char *errorCode, const std::string &message,
                    const std::vector<DiagNote> &extraNotes, const std::string &help) {
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
    // At constant sizes there is nothing to choose: the fact is false.
    std::string sizes = counterexampleText(r, goalOrder);
    d.note("needs " + goalText + (sizes.empty() ? ", which is false at these sizes" : ", which fails for " + sizes));
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
  if (!help.empty() && r.status == ProofResult::Status::Refuted)
    d.help(help);
  return false;
}

bool Checker::sameShape(const Type &a, const Type &b, Span at, const char *errorCode, const std::string &what) {
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

std::optional<std::vector<Dim>> Checker::broadcastShapes(const Type &l, const Type &r, Span at, const std::string &op) {
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

} // namespace keel::sema::detail
