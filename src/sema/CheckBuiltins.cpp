//===- CheckBuiltins.cpp - The built-in functions, from the table ----------===//
#include "CheckerImpl.h"

#include "keel/support/Permutation.h"
#include "keel/support/SumOrder.h"
#include <algorithm>
#include <functional>

namespace keel::sema::detail {

std::optional<size_t> Checker::axisValue(const Expr &e, size_t rank, const char *errorCode) {
  std::optional<int64_t> v = constantInt(e);
  if (!v)
    return std::nullopt;
  int64_t r = static_cast<int64_t>(rank);
  if (*v < -r || *v >= r) {
    diags_.error(errorCode, e.span, "axis " + std::to_string(*v) + " is out of range for a tensor of rank " +
                                        std::to_string(rank))
        .note(rank == 0 ? std::string("a tensor of rank 0 has no axes")
                        : "its axes are 0 to " + std::to_string(r - 1) + ", or -" + std::to_string(r) +
                              " to -1 counted from the end");
    return std::nullopt;
  }
  size_t axis = static_cast<size_t>(*v < 0 ? *v + r : *v);
  out_.axes[&e] = axis;
  return axis;
}

std::optional<size_t> Checker::axisArgument(const CallExpr &c, size_t rank, bool required) {
  for (const Arg &a : c.args)
    if (a.name == "axis")
      return axisValue(*a.value, rank);
  if (required)
    diags_.error(code::E0203, c.span, "`" + c.callee + "` needs `axis:`");
  return std::nullopt;
}

std::optional<std::vector<size_t>> Checker::reductionAxes(const CallExpr &c, size_t rank, bool listAllowed) {
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
    std::optional<size_t> v = axisValue(*e, rank);
    if (!v)
      return std::nullopt;
    if (auto twice = std::find(axes.begin(), axes.end(), *v); twice != axes.end()) {
      const Expr &first = *list->elements[static_cast<size_t>(twice - axes.begin())];
      std::string written(src_.slice(first.span)), axis = std::to_string(*v);
      diags_.error(code::E0203, e->span, "axis " + axis + " is given twice")
          .note(first.span, written == axis ? "first given here" : "`" + written + "` is axis " + axis + " too");
      return std::nullopt;
    }
    axes.push_back(*v);
  }
  return axes;
}

void Checker::fp8Arithmetic(Span at, std::string_view op, Scalar s, const std::string &lhs, const std::string &rhs,
                            bool call) {
  Diagnostic &d = diags_.error(code::E0914, at, "arithmetic on `" + std::string(scalarName(s)) +
                                                   "` values is not supported");
  d.note("fp8 formats are for storage, conversion, comparison and tensors; scalar fp8 arithmetic "
         "would hide expensive helpers");
  // The same expression with its operands converted: `exp(a as f32)`,
  // `max(a as f32, b as f32)`, `-(a as f32)`, `(a as f32) + (b as f32)`.
  std::string o(op), l = lhs + " as f32", r = rhs + " as f32";
  if (call)
    d.help("compute in f32: `" + o + "(" + l + (rhs.empty() ? "" : ", " + r) + ")`");
  else if (rhs.empty())
    d.help("compute in f32: `" + o + "(" + l + ")`");
  else
    d.help("compute in f32: `(" + l + ") " + o + " (" + r + ")`");
}

std::optional<Scalar> Checker::typeArgument(const Arg &a) {
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

Checker::BuiltinArgs Checker::builtinArguments(const CallExpr &c, const BuiltinInfo &info, const Type *expected) {
  using F = BuiltinFamily;
  const F b = info.family;
  BuiltinArgs out{c, info, {}, {}, {}, {}, {}, info.namedArguments()};
  std::vector<Type> &positional = out.positional;
  std::vector<const Expr *> &positionalExprs = out.positionalExprs;
  std::optional<Scalar> &dtype = out.dtype, &acc = out.acc;
  std::set<std::string> seen;
  const std::vector<std::string_view> &allowed = out.allowed;
  // `dtype:` first: it types the values before it (`full([8], 1.0, dtype: f16)`).
  const Arg *dtypeArg = nullptr;
  for (const Arg &a : c.args)
    if (a.name == "dtype" && std::find(allowed.begin(), allowed.end(), "dtype") != allowed.end() && !dtypeArg) {
      dtypeArg = &a;
      dtype = typeArgument(a);
    }
  // The element type a constructor makes without `dtype:`: its context's.
  if (expected && expected->is(Kind::Tensor))
    out.context = expected->scalar;
  // where(cond, a, b): a literal branch takes the other branch's type, so
  // that one is checked first (`where(mask, -inf, scores)`); both take the
  // context's without one.
  if (b == F::Select) {
    std::vector<const Expr *> values;
    for (const Arg &a : c.args)
      if (a.name.empty())
        values.push_back(a.value.get());
    if (values.size() == 3 && isLiteralTree(*values[1], literalTrees_) && !isLiteralTree(*values[2], literalTrees_)) {
      const Type *context = expected && isValue(*expected) ? expected : nullptr;
      Type cond = builtinArgument(*values[0], nullptr), other = builtinArgument(*values[2], context);
      Type first = builtinArgument(*values[1], isValue(other) ? &other : context);
      positional = {cond, first, other};
      positionalExprs = values;
    }
  }
  for (const Arg &a : c.args) {
    if (a.name.empty() && b == F::Select && positional.size() == 3 &&
        std::find(positionalExprs.begin(), positionalExprs.end(), a.value.get()) != positionalExprs.end())
      continue; // typed above
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
      if (b == F::Select) // the branches: the first's type, else the context's
        hint = positional.size() == 2 && isValue(positional[1]) ? &positional[1]
               : positional.size() >= 1 && expected && isValue(*expected) ? expected
                                                                          : nullptr;
      Type fill;
      if (b == F::Full && positional.size() == 1 && (dtype || out.context)) {
        fill = Type::scalarType(dtype ? *dtype : *out.context);
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
      if (a.name != "order") // `order: tree` names an order, not a value
        expr(*a.value, nullptr);
      continue;
    }
    if (a.name == "acc")
      acc = typeArgument(a);
    else if (a.name == "keepdims") {
      Type t = expr(*a.value, nullptr);
      if (!a.value->as<BoolExpr>() && !t.is(Kind::Error))
        diags_.error(code::E0106, a.value->span, "`keepdims:` takes `true` or `false`");
    } else if (a.name == "order") {
      // A summation order is a name, never a value: `tree` is not looked up.
      auto *n = a.value->as<NameExpr>();
      if (!n || !parseSumOrder(n->name))
        diags_.error(code::E0106, a.value->span, "`order:` takes `sequential` (the default) or `tree`")
            .note("`tree` sums in 16 lanes per 4096-element chunk, then a balanced tree: one fixed result on "
                  "every machine (docs/semantics.md)");
    } else if (a.name == "seed") {
      Type i64 = Type::scalarType(Scalar::I64);
      requireAssignable(*a.value, expr(*a.value, &i64), i64, "`seed:`");
    }
    // axis, start and stop are read by the rules below.
  }
  return out;
}

bool Checker::builtinArity(const BuiltinArgs &a, size_t lo, size_t hi) {
  if (a.positional.size() >= lo && a.positional.size() <= hi)
    return true;
  diags_.error(code::E0103, a.call.span, "`" + a.call.callee + "` takes " +
                                             (lo == hi ? std::to_string(lo) : std::to_string(lo) + " or more") +
                                             " positional argument" + (hi == 1 ? "" : "s") + " but " +
                                             std::to_string(a.positional.size()) + " given");
  return false;
}

std::optional<Type> Checker::builtinTensor(const BuiltinArgs &a, size_t i) {
  using F = BuiltinFamily;
  F b = a.info.family;
  if (i >= a.positional.size() || a.positional[i].is(Kind::Error))
    return std::nullopt;
  if (!a.positional[i].is(Kind::Tensor) &&
      !((b == F::Unary || b == F::Binary || b == F::Select) && a.positional[i].is(Kind::Scalar))) {
    diags_.error(code::E0106, a.positionalExprs[i]->span, "`" + a.call.callee + "` needs a tensor here, found `" +
                                                              typeName(a.positional[i]) + "`");
    return std::nullopt;
  }
  return a.positional[i];
}

const Expr *Checker::namedArgument(const CallExpr &c, const char *name) {
  for (const Arg &a : c.args)
    if (a.name == name)
      return a.value.get();
  return nullptr;
}

std::optional<std::vector<Dim>> Checker::builtinShape(const BuiltinArgs &a, size_t i) {
  auto *list = i < a.positionalExprs.size() ? a.positionalExprs[i]->as<ArrayExpr>() : nullptr;
  if (!list) {
    if (i < a.positionalExprs.size())
      diags_.error(code::E0212, a.positionalExprs[i]->span, "`" + a.call.callee + "` needs a shape here, e.g. `[B, D]`");
    return std::nullopt;
  }
  std::vector<Dim> dims;
  bool ok = true;
  for (const ExprPtr &e : list->elements) {
    std::optional<Dim> d = exprToDim(*e);
    ok &= d.has_value();
    if (d)
      dims.push_back(*d);
  }
  return ok ? std::optional(dims) : std::nullopt;
}

bool Checker::builtinAdmits(const BuiltinArgs &a, Admits op, Scalar dt, size_t argIndex) {
  if (admits(op, dt))
    return true;
  diags_.error(code::E0213, a.positionalExprs[argIndex]->span, "`" + a.call.callee + "` is not defined for `" +
                                                                    std::string(scalarName(dt)) + "` elements")
      .note(std::string("`") + a.call.callee + "` takes " + std::string(admittedText(op)));
  return false;
}

Type Checker::builtinCall(const CallExpr &c, const BuiltinInfo &info, const Type *expected) {
  using F = BuiltinFamily;
  BuiltinArgs a = builtinArguments(c, info, expected);
  switch (info.family) {
  case F::Print: return printBuiltin(a);
  case F::Unary: return unaryBuiltin(a);
  case F::Binary: return binaryBuiltin(a);
  case F::Select: return whereBuiltin(a);
  case F::Matmul: return matmulBuiltin(a);
  case F::Reduce: return reduceBuiltin(a);
  case F::ReduceIndex: return reduceBuiltin(a);
  case F::ReduceBool: return reduceBuiltin(a);
  case F::Transpose: return transposeBuiltin(a);
  case F::Reshape: return reshapeBuiltin(a);
  case F::Broadcast: return broadcastBuiltin(a);
  case F::Slice: return sliceBuiltin(a);
  case F::Concat: return concatBuiltin(a);
  case F::Full: return fullBuiltin(a);
  case F::Zeros: return shapedBuiltin(a);
  case F::Random: return shapedBuiltin(a);
  case F::Iota: return iotaBuiltin(a);
  case F::TensorLit: return tensorBuiltin(a);
  }
  return Type::error();
}

//===-- One rule per family -----------------------------------------------===//

Type Checker::printBuiltin(BuiltinArgs &a) {
  const CallExpr &c = a.call;
  requireEffects(c, {keel::Effect::Io});
  if (builtinArity(a, 1, 1) && (a.positional[0].is(Kind::Void) || a.positional[0].is(Kind::Array) ||
                      a.positional[0].is(Kind::TypeName)))
    diags_.error(code::E0106, a.positionalExprs[0]->span, "`" + typeName(a.positional[0]) + "` cannot be printed");
  return Type::voidType();
}

Type Checker::unaryBuiltin(BuiltinArgs &a) {
  const CallExpr &c = a.call;
  if (!builtinArity(a, 1, 1)) return Type::error();
  auto t = builtinTensor(a, 0);
  if (!t) return Type::error();
  if (isFp8(t->scalar) && t->is(Kind::Scalar)) {
    fp8Arithmetic(c.span, c.callee, t->scalar, std::string(src_.slice(a.positionalExprs[0]->span)), "", true);
    return Type::error();
  }
  if (!builtinAdmits(a, a.info.admits, t->scalar, 0)) return Type::error();
  return *t;
}

Type Checker::binaryBuiltin(BuiltinArgs &a) {
  const CallExpr &c = a.call;
  if (!builtinArity(a, 2, 2)) return Type::error();
  auto l = builtinTensor(a, 0), r = builtinTensor(a, 1);
  if (!l || !r) return Type::error();
  std::string ls(src_.slice(a.positionalExprs[0]->span)), rs(src_.slice(a.positionalExprs[1]->span));
  if (!sameValueType(*l, *r))
    return mismatch(c.callee, true, c.span, *l, *r, ls, rs);
  if (l->is(Kind::Scalar) && r->is(Kind::Scalar) && isFp8(l->scalar)) {
    fp8Arithmetic(c.span, c.callee, l->scalar, ls, rs, true);
    return Type::error();
  }
  if (!builtinAdmits(a, a.info.admits, l->scalar, 0)) return Type::error();
  return elementwise(*l, *r, c.span, c.callee);
}

Type Checker::whereBuiltin(BuiltinArgs &a) {
  const CallExpr &c = a.call;
  if (!builtinArity(a, 3, 3)) return Type::error();
  auto cond = builtinTensor(a, 0), x = builtinTensor(a, 1), y = builtinTensor(a, 2);
  if (!cond || !x || !y) return Type::error();
  if (cond->scalar != Scalar::Bool) {
    diags_.error(code::E0106, a.positionalExprs[0]->span, "`where` needs a `bool` condition, found `" +
                                                            typeName(*cond) + "`")
        .help("compare to make one, e.g. `where(" + std::string(src_.slice(a.positionalExprs[0]->span)) +
              " > 0, ...)`");
    return Type::error();
  }
  std::string xs(src_.slice(a.positionalExprs[1]->span)), ys(src_.slice(a.positionalExprs[2]->span));
  if (!sameValueType(*x, *y))
    return mismatch(c.callee, true, c.span, *x, *y, xs, ys);
  Type branches = elementwise(*x, *y, c.span, c.callee);
  if (branches.is(Kind::Error) || !cond->is(Kind::Tensor))
    return branches;
  // The condition's shape broadcasts with the branches'; the result has
  // their a.dtype.
  if (!branches.is(Kind::Tensor))
    return Type::tensor(branches.scalar, cond->dims);
  return elementwise(branches, *cond, c.span, c.callee);
}

Type Checker::matmulBuiltin(BuiltinArgs &a) {
  const CallExpr &c = a.call;
  if (!builtinArity(a, 2, 2)) return Type::error();
  auto l = builtinTensor(a, 0), r = builtinTensor(a, 1);
  if (!l || !r) return Type::error();
  if (l->scalar != r->scalar)
    return mismatch(c.callee, true, c.span, *l, *r, std::string(src_.slice(a.positionalExprs[0]->span)),
                    std::string(src_.slice(a.positionalExprs[1]->span)));
  if (!builtinAdmits(a, a.info.admits, l->scalar, 0)) return Type::error();
  std::optional<Scalar> result = accumulator(c, l->scalar, a.acc);
  // NumPy's matmul: a 1-D operand is a row (left) or a column (right)
  // vector whose axis the result drops; the dimensions before the last
  // two are batch dimensions, broadcast (right-aligned, a literal 1 or a
  // missing one stretches).
  if (l->dims.empty() || r->dims.empty()) {
    diags_.error(code::E0202, c.span, "`matmul` takes tensors of rank 1 or more, not `" + typeName(*l) + "` x `" +
                                          typeName(*r) + "`")
        .help("multiply by a scalar with `*`");
    return Type::error();
  }
  std::vector<Dim> lm = l->dims, rm = r->dims;
  if (lm.size() == 1)
    lm.insert(lm.begin(), Dim::constant(1));
  if (rm.size() == 1)
    rm.push_back(Dim::constant(1));
  const Dim &k1 = lm.back(), &k2 = rm[rm.size() - 2];
  Goal contraction = {{{k1, Rel::Eq, k2}}};
  if (!prove(contraction, c.span, code::E0201, "the contraction dimensions of `matmul` differ: `" +
                                                   k1.str() + "` in `" + typeName(*l) + "` and `" + k2.str() +
                                                   "` in `" + typeName(*r) + "`"))
    return Type::error();
  size_t lb = lm.size() - 2, rb = rm.size() - 2, batch = std::max(lb, rb);
  std::vector<Dim> dims;
  for (size_t i = 0; i < batch; ++i) {
    const Dim *x = i + lb >= batch ? &lm[i + lb - batch] : nullptr;
    const Dim *y = i + rb >= batch ? &rm[i + rb - batch] : nullptr;
    bool xOne = !x || x->asConstant() == std::optional<int64_t>(1);
    bool yOne = !y || y->asConstant() == std::optional<int64_t>(1);
    if (xOne || yOne) {
      dims.push_back(xOne ? (y ? *y : *x) : *x);
      continue;
    }
    if (!prove({{{*x, Rel::Eq, *y}}}, c.span, code::E0202,
               "batch dimension " + std::to_string(i) + " of `matmul` differs: `" + x->str() + "` in `" +
                   typeName(*l) + "` and `" + y->str() + "` in `" + typeName(*r) + "`",
               {}, "batch dimensions broadcast as NumPy's: equal, or a literal 1 that stretches"))
      return Type::error();
    dims.push_back(*x);
  }
  if (l->dims.size() >= 2)
    dims.push_back(lm[lm.size() - 2]);
  if (r->dims.size() >= 2)
    dims.push_back(rm.back());
  if (!result)
    return Type::error();
  return Type::tensor(*result, dims);
}

Type Checker::reduceBuiltin(BuiltinArgs &a) {
  using F = BuiltinFamily;
  const CallExpr &c = a.call;
  if (!builtinArity(a, 1, 1)) return Type::error();
  auto t = builtinTensor(a, 0);
  if (!t) return Type::error();
  if (!builtinAdmits(a, a.info.admits, t->scalar, 0)) return Type::error();
  std::optional<std::vector<size_t>> axes = reductionAxes(c, t->dims.size(), a.info.family == F::Reduce);
  if (!axes) return Type::error();
  const Expr *keep = namedArgument(c, "keepdims");
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
  bool accumulates = std::find(a.allowed.begin(), a.allowed.end(), "acc") != a.allowed.end();
  if (!accumulates && a.acc)
    diags_.error(code::E0113, c.span, "`" + c.callee + "` does not accumulate: it takes no `acc:`");
  std::optional<Scalar> result = a.info.family == F::ReduceIndex ? Scalar::I64
                                 : a.info.family == F::ReduceBool ? Scalar::Bool
                                 : accumulates ? accumulator(c, t->scalar, a.acc)
                                               : std::optional<Scalar>(t->scalar);
  if (!result)
    return Type::error();
  return Type::tensor(*result, dims);
}

Type Checker::transposeBuiltin(BuiltinArgs &a) {
  if (!builtinArity(a, 2, 2)) return Type::error();
  auto t = builtinTensor(a, 0);
  if (!t) return Type::error();
  auto *perm = a.positionalExprs[1]->as<ArrayExpr>();
  std::vector<int64_t> axes;
  bool ok = perm != nullptr;
  if (perm)
    for (const ExprPtr &e : perm->elements) {
      std::optional<size_t> v = axisValue(*e, t->dims.size(), code::E0204);
      ok &= v.has_value();
      axes.push_back(v ? static_cast<int64_t>(*v) : -1);
    }
  if (!ok)
    return Type::error();
  if (!isPermutation(axes, t->dims.size())) {
    diags_.error(code::E0204, a.positionalExprs[1]->span, "`" + std::string(src_.slice(a.positionalExprs[1]->span)) +
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

Type Checker::reshapeBuiltin(BuiltinArgs &a) {
  if (!builtinArity(a, 2, 2)) return Type::error();
  auto t = builtinTensor(a, 0);
  auto target = builtinShape(a, 1);
  if (!t || !target) return Type::error();
  // Phase 0 §10: the volume equality is asserted, not proved.
  shapes_.volumes.push_back({t->dims, *target});
  return Type::tensor(t->scalar, *target);
}

Type Checker::broadcastBuiltin(BuiltinArgs &a) {
  const CallExpr &c = a.call;
  if (!builtinArity(a, 2, 2)) return Type::error();
  auto t = builtinTensor(a, 0);
  auto target = builtinShape(a, 1);
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

Type Checker::sliceBuiltin(BuiltinArgs &a) {
  const CallExpr &c = a.call;
  if (!builtinArity(a, 1, 1)) return Type::error();
  auto t = builtinTensor(a, 0);
  if (!t) return Type::error();
  std::optional<size_t> axis = axisArgument(c, t->dims.size());
  const Expr *startExpr = namedArgument(c, "start"), *stopExpr = namedArgument(c, "stop");
  if (!startExpr || !stopExpr) {
    diags_.error(code::E0203, c.span, "`slice` needs `axis:`, `start:` and `stop:`");
    return Type::error();
  }
  std::optional<Dim> start = exprToDim(*startExpr), stop = exprToDim(*stopExpr);
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

Type Checker::concatBuiltin(BuiltinArgs &a) {
  const CallExpr &c = a.call;
  if (!builtinArity(a, 1, ~size_t{0})) return Type::error();
  std::optional<Type> acc0;
  for (size_t i = 0; i < a.positional.size(); ++i) {
    auto t = builtinTensor(a, i);
    if (!t) return Type::error();
    if (!acc0) {
      acc0 = t;
      continue;
    }
    if (acc0->scalar != t->scalar)
      return mismatch(Tok::Comma, a.positionalExprs[i]->span, *acc0, *t,
                      std::string(src_.slice(a.positionalExprs[0]->span)),
                      std::string(src_.slice(a.positionalExprs[i]->span)));
    if (acc0->dims.size() != t->dims.size()) {
      diags_.error(code::E0207, a.positionalExprs[i]->span, "`concat` of tensors of different ranks: `" +
                                                              typeName(*acc0) + "` and `" + typeName(*t) + "`");
      return Type::error();
    }
  }
  std::optional<size_t> axis = axisArgument(c, acc0->dims.size());
  if (!axis) return Type::error();
  // Left-associated: concat(x, y, z) = concat(concat(x, y), z).
  std::vector<Dim> dims = acc0->dims;
  for (size_t i = 1; i < a.positional.size(); ++i) {
    Goal goal;
    for (size_t d = 0; d < dims.size(); ++d)
      if (d != *axis)
        goal.push_back({{dims[d], Rel::Eq, a.positional[i].dims[d]}});
    if (!prove(goal, a.positionalExprs[i]->span, code::E0207,
               "`concat` along axis " + std::to_string(*axis) + " needs the other dimensions equal: `" +
                   typeName(Type::tensor(acc0->scalar, dims)) + "` and `" + typeName(a.positional[i]) + "`"))
      return Type::error();
    std::optional<Dim> sum = Dim::add(dims[*axis], a.positional[i].dims[*axis]);
    if (!sum) return Type::error();
    dims[*axis] = *sum;
  }
  return Type::tensor(acc0->scalar, dims);
}

Type Checker::fullBuiltin(BuiltinArgs &a) {
  if (!builtinArity(a, 2, 2)) return Type::error();
  auto dims = builtinShape(a, 0);
  if (a.positional[1].is(Kind::Error) || !dims) return Type::error();
  if (!a.positional[1].is(Kind::Scalar)) {
    diags_.error(code::E0106, a.positionalExprs[1]->span, "`full` fills with a scalar, found `" + typeName(a.positional[1]) + "`");
    return Type::error();
  }
  if (a.dtype) { // the value must be of that type (no implicit conversion)
    Type want = Type::scalarType(*a.dtype);
    requireAssignable(*a.positionalExprs[1], a.positional[1], want, "the value of `full`");
    if (!(a.positional[1] == want))
      return Type::error();
  }
  return Type::tensor(a.dtype.value_or(a.positional[1].scalar), *dims);
}

Type Checker::shapedBuiltin(BuiltinArgs &a) {
  if (!builtinArity(a, 1, 1)) return Type::error();
  auto dims = builtinShape(a, 0);
  if (!dims) return Type::error();
  return Type::tensor(a.dtype.value_or(a.context.value_or(Scalar::F32)), *dims);
}

Type Checker::iotaBuiltin(BuiltinArgs &a) {
  const CallExpr &c = a.call;
  if (!builtinArity(a, 1, 1)) return Type::error();
  auto dims = builtinShape(a, 0);
  if (!dims) return Type::error();
  if (!axisArgument(c, dims->size())) return Type::error();
  Scalar t = a.dtype.value_or(a.context.value_or(Scalar::I64));
  if (t == Scalar::Bool) {
    diags_.error(code::E0213, c.span, "`iota` counts in numeric elements, not `bool`");
    return Type::error();
  }
  return Type::tensor(t, *dims);
}

Type Checker::tensorBuiltin(BuiltinArgs &a) {
  if (!builtinArity(a, 1, 1)) return Type::error();
  std::vector<Dim> dims;
  if (!nestedShape(*a.positionalExprs[0], dims, 0)) return Type::error();
  return Type::tensor(a.dtype.value_or(a.context.value_or(Scalar::F64)), dims);
}

bool Checker::nestedShape(const Expr &e, std::vector<Dim> &dims, size_t) {
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

std::string Checker::joinDims(const std::vector<Dim> &dims) {
  std::string s;
  for (size_t i = 0; i < dims.size(); ++i)
    s += (i ? ", " : "") + dims[i].str();
  return s;
}

Type Checker::builtinArgument(const Expr &e, const Type *hint) {
  if (auto *a = e.as<ArrayExpr>()) {
    for (const ExprPtr &x : a->elements)
      builtinArgument(*x, nullptr);
    return record(e, Type::of(Kind::Array));
  }
  return expr(e, hint);
}

std::optional<Scalar> Checker::accumulator(const CallExpr &c, Scalar input, std::optional<Scalar> acc) {
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
        .note("reductions and contractions over low-precision inputs accumulate in f32 or f64")
        .help("use `acc: f32` (the default) or `acc: f64`");
    return std::nullopt; // the call has no type: nothing follows from the invalid accumulator
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
    return std::nullopt;
  }
  return *acc;
}

} // namespace keel::sema::detail
