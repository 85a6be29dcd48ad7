//===- CheckStatements.cpp - Function bodies and statements ----------------===//
#include "CheckerImpl.h"

#include <algorithm>

namespace keel::sema::detail {

void Checker::declare(const std::string &name, Type type, bool isMutable, Span decl) {
  scopes_.back()[name] = Var{std::move(type), isMutable, decl};
}

Checker::Var *Checker::lookup(const std::string &name) {
  for (auto it = scopes_.rbegin(); it != scopes_.rend(); ++it)
    if (auto found = it->find(name); found != it->end())
      return &found->second;
  return nullptr;
}

void Checker::checkFunction(const FunctionDecl &fn, const FunctionSig &sig) {
  scopes_.clear();
  pushScope();
  shapeVars_.clear();
  shapes_ = ShapeContext{};
  shapes_.facts = sig.refinements;
  shapes_.noDefaultLowerBound = sig.noDefaultLowerBound;
  for (const DimParam &d : fn.dimParams)
    shapeVars_.emplace(d.name, d.span);
  for (const Param &p : fn.params) {
    std::vector<std::pair<std::string, Span>> names;
    for (const auto &d : p.type.dims)
      collectDimNames(*d, names);
    for (auto &[name, span] : names)
      shapeVars_.emplace(name, span);
  }
  // Shape variables are readable as `int` values in the body.
  for (const DimParam &d : fn.dimParams)
    if (!lookup(d.name))
      declare(d.name, Type::scalarType(Scalar::I64), false, d.span);
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
  failedQuotients_.clear();
  for (const QuotientObligation &q : sig.quotients)
    proveQuotient(q);
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

bool Checker::isShapeVariable(const FunctionDecl &fn, const std::string &name) {
  for (const DimParam &d : fn.dimParams)
    if (d.name == name)
      return true;
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

void Checker::checkTest(const TestDecl &t) {
  scopes_.clear();
  pushScope();
  shapeVars_.clear();
  shapes_ = ShapeContext{};
  returnType_ = Type::voidType();
  effects_ = {};
  allEffects_ = true; // a test is the harness: it may use every effect
  loopDepth_ = 0;
  block(t.body);
}

bool Checker::alwaysReturns(const Block &b) {
  return !b.stmts.empty() && alwaysReturns(*b.stmts.back());
}

bool Checker::alwaysReturns(const Stmt &s) {
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

bool Checker::containsBreak(const Block &b) {
  for (const StmtPtr &s : b.stmts)
    if (containsBreak(*s))
      return true;
  return false;
}

bool Checker::containsBreak(const Stmt &s) {
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

void Checker::block(const Block &b) {
  pushScope();
  for (const StmtPtr &s : b.stmts)
    stmt(*s);
  popScope();
}

void Checker::gradientLet(const LetStmt &l) {
  Type value = expr(*l.init, nullptr); // f(args...)
  const CallExpr &c = *l.init->as<CallExpr>();
  auto fn = out_.functions.find(c.callee);
  auto fail = [&](Span at, const std::string &message) {
    diags_.error(code::E0600, at, message);
    for (size_t i = 0; i < l.names.size(); ++i)
      declare(l.names[i], Type::error(), l.isMutable, l.nameSpans[i]);
  };
  if (fn == out_.functions.end())
    return fail(c.calleeSpan, "`value_and_grad` differentiates a tensor function; `" + c.callee + "` is none");
  if (!value.is(Kind::Error) &&
      !(value.is(Kind::Tensor) && value.dims.empty() && (value.scalar == Scalar::F32 || value.scalar == Scalar::F64)))
    return fail(c.calleeSpan, "`" + c.callee + "` returns `" + typeName(value) + "`: a gradient is of a function "
                              "whose result is one f32 or f64 scalar (a `Tensor<f32, []>`, such as a loss)");
  if (l.names.size() != l.wrt.size() + 1)
    return fail(l.nameSpans.front(), "`let (...)` binds the value and one gradient per `wrt:` parameter: " +
                                         std::to_string(l.wrt.size() + 1) + " names, not " +
                                         std::to_string(l.names.size()));
  const syntax::FunctionDecl &decl = *fn->second.decl;
  std::vector<const Expr *> positional;
  for (const Arg &a : c.args)
    if (a.name.empty())
      positional.push_back(a.value.get());
  std::vector<Type> types{value};
  for (size_t j = 0; j < l.wrt.size(); ++j) {
    auto p = std::find_if(decl.params.begin(), decl.params.end(),
                          [&](const syntax::Param &q) { return q.name == l.wrt[j]; });
    if (p == decl.params.end())
      return fail(l.wrtSpans[j], "`" + c.callee + "` has no parameter `" + l.wrt[j] + "`");
    size_t i = static_cast<size_t>(p - decl.params.begin());
    if (i >= positional.size())
      return fail(l.wrtSpans[j], "no argument for `" + l.wrt[j] + "`");
    if (!positional[i]->as<NameExpr>())
      return fail(positional[i]->span, "the argument for `" + l.wrt[j] + "`, a parameter differentiated with " +
                                           "respect to, is a variable (bind the expression with `let` first)");
    auto t = out_.exprTypes.find(positional[i]);
    Type at = t == out_.exprTypes.end() ? Type::error() : t->second;
    if (!at.is(Kind::Error) && !(at.is(Kind::Tensor) && (at.scalar == Scalar::F32 || at.scalar == Scalar::F64)))
      return fail(positional[i]->span, "`" + l.wrt[j] + "` is `" + typeName(at) + "`: gradients are of f32 or f64 "
                                       "tensors");
    for (size_t k = 0; k < j; ++k)
      if (l.wrt[k] == l.wrt[j])
        return fail(l.wrtSpans[j], "`wrt:` names `" + l.wrt[j] + "` twice");
    types.push_back(at);
  }
  for (size_t i = 0; i < l.names.size(); ++i)
    declare(l.names[i], types[i], l.isMutable, l.nameSpans[i]);
}

void Checker::letStmt(const LetStmt &l) {
  if (!l.names.empty())
    return gradientLet(l);
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
  if (!l.type && varType.is(Kind::Scalar) && isLiteralTree(*l.init, literalTrees_))
    scopes_.back()[l.name].literalDefault = true;
}

void Checker::assignStmt(const AssignStmt &a) {
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
    out_.compoundAssignments[&a] = sourceOperator(tokenSpelling(op))->binary;
  }
}

void Checker::forStmt(const ForStmt &f) {
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
}

void Checker::returnStmt(const ReturnStmt &r) {
  if (!r.value) {
    if (!returnType_.is(Kind::Void) && !returnType_.is(Kind::Error))
      diags_.error(code::E0106, r.span, "`return;` without a value in a function that returns `" +
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
}

void Checker::stmt(const Stmt &s) {
  switch (s.kind) {
  case StmtKind::Let: letStmt(*s.as<LetStmt>()); return;
  case StmtKind::Assign: assignStmt(*s.as<AssignStmt>()); return;
  case StmtKind::If: {
    auto &i = *s.as<IfStmt>();
    condition(*i.cond, "`if`");
    block(i.thenBlock);
    if (i.elseStmt)
      stmt(*i.elseStmt);
    return;
  }
  case StmtKind::For: forStmt(*s.as<ForStmt>()); return;
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
  case StmtKind::Return: returnStmt(*s.as<ReturnStmt>()); return;
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

void Checker::condition(const Expr &e, const char *what) {
  Type t = expr(e, nullptr);
  if (!t.is(Kind::Error) && !t.isScalar(Scalar::Bool))
    diags_.error(code::E0109, e.span, std::string("the condition of ") + what + " must be `bool`, found `" +
                                          typeName(t) + "`")
        .help(t.isNumericScalar() ? "compare it, e.g. `x != 0`" : "use a comparison");
}

void Checker::message(const Expr &e) {
  record(e, Type::of(Kind::String));
  for (const StringPart &part : e.as<StringExpr>()->parts) {
    if (!part.expr)
      continue;
    Type t = expr(*part.expr, nullptr);
    if (t.is(Kind::Void) || t.is(Kind::Array) || t.is(Kind::TypeName))
      diags_.error(code::E0106, part.expr->span, "`" + typeName(t) + "` cannot be printed");
  }
}

void Checker::stringValue(const StringExpr &s) {
  diags_.error(code::E0011, s.span, "string values are not supported in Keel")
      .note("strings may only be `print` and `assert` messages");
  record(s, Type::error());
}

} // namespace keel::sema::detail
