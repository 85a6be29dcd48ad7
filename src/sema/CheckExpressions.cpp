//===- CheckExpressions.cpp - Expressions, operators, conversions, calls ---===//
#include "CheckerImpl.h"

#include "keel/numerics/Format.h"
#include <algorithm>
#include <charconv>
#include <tuple>

namespace keel::sema::detail {

void Checker::requireAssignable(const Expr &e, const Type &from, const Type &to, const std::string &what) {
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
        .note("an existing value changes format only through an explicit `as`")
        .help("convert explicitly: `" + source + " as " + std::string(scalarName(to.scalar)) + "`");
    return;
  }
  Diagnostic &d = diags_.error(code::E0106, e.span, "mismatched types in " + what + ": expected `" +
                                                        typeName(to) + "`, found `" + typeName(from) + "`");
  if (castable && to.is(Kind::Scalar))
    d.help("convert explicitly: `" + source + " as " + std::string(scalarName(to.scalar)) + "`");
}

Type Checker::record(const Expr &e, Type t) {
  out_.exprTypes[&e] = t;
  return t;
}

Type Checker::exprUncached(const Expr &e, const Type *expected) {
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

Type Checker::intLiteral(const IntExpr &e, const Type *expected, bool negative, Span at) {
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

Type Checker::floatLiteral(const FloatExpr &e, const Type *expected, bool negative, Span at) {
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

Type Checker::unary(const UnaryExpr &u, const Type *expected) {
  if (std::optional<ElementOperator> op = prefixOperator(tokenSpelling(u.op)))
    out_.operators[&u] = *op;
  else
    diags_.internalError(u.span, "prefix `" + std::string(tokenSpelling(u.op)) + "` has no meaning in keel/support/Operators.h");
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
  // The parser makes `-`, `!` and `~` prefix operators; each is defined on
  // some element types, every other case is the error below.
  if (u.op == Tok::Minus && value && t.is(Kind::Scalar) && isFp8(s)) {
    fp8Arithmetic(u.span, "-", s, std::string(src_.slice(u.operand->span)), "");
    return Type::error();
  }
  if ((u.op == Tok::Minus && value && s != Scalar::Bool) || (u.op == Tok::Bang && value && s == Scalar::Bool) ||
      (u.op == Tok::Tilde && value && isInteger(s)))
    return t;
  diags_.error(code::E0110, u.span, "`" + std::string(tokenSpelling(u.op)) + "` is not defined for `" +
                                        typeName(t) + "`");
  return Type::error();
}

Type Checker::binary(const BinaryExpr &b, const Type *expected) {
  if (std::optional<ElementOperator> op = sourceOperator(tokenSpelling(b.op)))
    out_.operators[&b] = *op;
  else
    diags_.internalError(b.opSpan, "`" + std::string(tokenSpelling(b.op)) + "` has no row in keel/support/Operators.def");
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

bool Checker::sameValueType(const Type &l, const Type &r) {
  return isValue(l) && isValue(r) && l.scalar == r.scalar;
}

Type Checker::elementwise(const Type &l, const Type &r, Span at, const std::string &op) {
  if (l.is(Kind::Tensor) && r.is(Kind::Tensor)) {
    std::optional<std::vector<Dim>> dims = broadcastShapes(l, r, at, op);
    return dims ? Type::tensor(l.scalar, *dims) : Type::error();
  }
  return l.is(Kind::Tensor) ? l : r;
}

Type Checker::mismatch(Tok op, Span at, const Type &l, const Type &r, const std::string &ls, const std::string &rs) {
  return mismatch(std::string(tokenSpelling(op)), false, at, l, r, ls, rs);
}

Type Checker::mismatch(const std::string &opText, bool call, Span at, const Type &l, const Type &r,
                       const std::string &ls, const std::string &rs) {
  // `a + b`, or for a built-in (`call`) `pow(a, b)` / `where(..., a, b)`.
  auto spelt = [&](const std::string &a, const std::string &b) {
    return call ? opText + "(" + (opText == "where" ? "..., " : "") + a + ", " + b + ")" : a + " " + opText + " " + b;
  };
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
        .note("there is no implicit promotion between numeric formats")
        .help("convert explicitly, e.g. `" + spelt(lc, rc) + "`");
    return Type::error();
  }
  Diagnostic &d = diags_.error(code::E0106, at, "mismatched types `" + typeName(l) + "` and `" + typeName(r) +
                                                    "` in `" + opText + "`");
  // `let scale = 0.5;` met an f32 tensor: the let took the literal's default type.
  for (const auto &[name, mine, other] : {std::tuple{&ls, &l, &r}, std::tuple{&rs, &r, &l}}) {
    const Var *v = numeric ? lookup(*name) : nullptr;
    if (!v || !v->literalDefault || !mine->is(Kind::Scalar) || mine->scalar == other->scalar)
      continue;
    std::string want(scalarName(other->scalar));
    d.note(v->decl, "`" + *name + "` is `" + std::string(scalarName(mine->scalar)) +
                        "` because an unannotated literal defaults to it")
        .help("give it the type it is used at, `let " + *name + ": " + want + " = ...;`, or convert it here: `" +
              (mine == &l ? spelt("(" + ls + " as " + want + ")", rs) : spelt(ls, "(" + rs + " as " + want + ")")) +
              "`");
    return Type::error();
  }
  if (numeric && l.is(Kind::Scalar) && r.is(Kind::Scalar))
    d.help("convert one side explicitly, e.g. `" + spelt(ls, "(" + rs + " as " + std::string(scalarName(l.scalar)) + ")") +
           "`");
  return Type::error();
}

Type Checker::arithmeticResult(Tok op, Span at, const Type &l, const Type &r, const std::string &ls, const Expr &rhs) {
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
        .note("f16, bf16 and tf32 have + - * /");
    return Type::error();
  }
  return elementwise(l, r, at, std::string(tokenSpelling(op)));
}

Type Checker::comparison(const BinaryExpr &b, const Type &l, const Type &r) {
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

Type Checker::cast(const CastExpr &c) {
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

Type Checker::index(const IndexExpr &ix) {
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

void Checker::requireEffects(const CallExpr &c, EffectSet needed) {
  if (allEffects_)
    return;
  EffectSet missing = needed.without(effects_);
  if (missing.empty())
    return;
  diags_.error(code::E0120, c.span, "`" + c.callee + "` needs the effect" + (missing.size() > 1 ? "s " : " ") +
                                        missing.text() + ", which this function does not declare")
      .help("declare it in the signature: `![" + (effects_ | missing).text() + "]`");
}

Type Checker::call(const CallExpr &c, const Type *expected) {
  if (auto it = out_.functions.find(c.callee); it != out_.functions.end())
    return userCall(c, it->second);
  bool reductionForm = std::any_of(c.args.begin(), c.args.end(), [](const Arg &a) { return !a.name.empty(); }) ||
                       c.args.size() == 1;
  const BuiltinInfo *b = findBuiltin(c.callee, reductionForm);
  if (!b) {
    for (const Arg &a : c.args)
      if (c.callee != "value_and_grad") // its first argument names a function
        expr(*a.value, nullptr);
    if (c.callee == "value_and_grad")
      diags_.error(code::E0600, c.calleeSpan, "`value_and_grad` gives a value and gradients: bind them with "
                                              "`let (value, d1, ...) = value_and_grad(f, ..., wrt: [p1, ...]);`");
    else if (lookup(c.callee))
      diags_.error(code::E0104, c.calleeSpan, "`" + c.callee + "` is a variable, not a function");
    else
      diags_.error(code::E0104, c.calleeSpan, "there is no function `" + c.callee + "`");
    return Type::error();
  }
  out_.builtinCalls[&c] = b->id;
  return builtinCall(c, *b, expected);
}

Type Checker::userCall(const CallExpr &c, const FunctionSig &sig) {
  requireEffects(c, sig.effects);
  size_t positional = 0;
  std::vector<std::pair<size_t, Type>> tensorArgs; // parameter index, argument type
  std::vector<const Expr *> argExprs;
  // Dimension arguments (`H: 12`): dimensions of the caller's shape variables.
  std::map<std::string, Dim> dimArgs;
  bool dimsOk = true;
  for (const Arg &a : c.args) {
    if (a.name.empty())
      continue;
    if (std::find(sig.dimParams.begin(), sig.dimParams.end(), a.name) == sig.dimParams.end()) {
      std::string list;
      for (const std::string &d : sig.dimParams)
        list += (list.empty() ? "" : ", ") + d;
      diags_.error(code::E0113, a.nameSpan, "`" + c.callee + "` has no dimension parameter `" + a.name + "`")
          .note(sig.decl->nameSpan, list.empty() ? "`" + c.callee + "` takes no named arguments"
                                                 : "its dimension parameters are " + list);
      expr(*a.value, nullptr);
      dimsOk = false;
      continue;
    }
    if (dimArgs.count(a.name)) {
      diags_.error(code::E0113, a.nameSpan, "`" + a.name + ":` is given twice");
      dimsOk = false;
      continue;
    }
    std::optional<Dim> d = exprToDim(*a.value);
    if (!d) {
      dimsOk = false;
      continue;
    }
    dimArgs.emplace(a.name, *d);
  }
  for (const std::string &d : sig.dimParams)
    if (!dimArgs.count(d) && dimsOk) {
      diags_.error(code::E0209, c.span, "`" + c.callee + "` needs its dimension parameter `" + d + "`")
          .note(sig.decl->nameSpan, "`" + c.callee + "` is declared here")
          .help("give it as a named argument, e.g. `" + c.callee + "(..., " + d + ": 8)`");
      dimsOk = false;
    }
  for (const Arg &a : c.args) {
    if (!a.name.empty())
      continue;
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
  if (!dimsOk)
    return Type::error();
  if (!dimArgs.empty())
    out_.dimArguments[&c] = dimArgs;
  std::optional<std::map<std::string, Dim>> bindings = bindShapes(c, sig, tensorArgs, argExprs, dimArgs);
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

std::optional<std::map<std::string, Dim>> Checker::bindShapes(const CallExpr &c, const FunctionSig &sig,
                                                              const std::vector<std::pair<size_t, Type>> &args,
                                                              const std::vector<const Expr *> &argExprs,
                                                              const std::map<std::string, Dim> &dimArguments) {
  std::map<std::string, Dim> bindings = dimArguments; // then the lone variables of the parameters' types
  // A dimension argument must be a size the callee assumes: >= 1, unless its
  // `requires` lowers the bound (then the clause itself is proved below).
  for (const auto &[name, dim] : dimArguments)
    if (!sig.noDefaultLowerBound.count(name) &&
        !prove({{{dim, Rel::Ge, Dim::constant(1)}}}, c.span, code::E0208,
               "the dimension argument `" + name + ": " + dim.str() + "` of `" + c.callee + "` may be below 1",
               {{sig.decl->nameSpan, "`" + c.callee + "` assumes " + name + " >= 1 (write `requires " + name +
                                         " >= 0` to allow 0)"}}))
      return std::nullopt;
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
  }
  std::vector<std::pair<size_t, std::vector<Dim>>> shapes;
  for (const auto &[index, arg] : args)
    shapes.push_back({index, arg.dims});
  bindParameterVariables(sig, shapes, bindings);
  for (const auto &[index, arg] : args) {
    Goal goal;
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
    std::vector<Dim> expected;
    for (const Dim &p : sig.params[index].dims)
      expected.push_back(*p.substitute(bindings));
    const syntax::Param &param = sig.decl->params[index];
    if (!prove(goal, argExprs[index]->span, code::E0209,
               "argument " + std::to_string(index + 1) + " of `" + c.callee + "` has the shape `" +
                   typeName(arg) + "`, but the parameter `" + param.name + "` needs `" +
                   typeName(Type::tensor(arg.scalar, expected)) + "` here",
               {{param.nameSpan, "`" + param.name + ": " + typeName(sig.params[index]) + "` is declared here"}}))
      return std::nullopt;
  }
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

} // namespace keel::sema::detail
