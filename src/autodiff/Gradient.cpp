//===- Gradient.cpp - Reverse mode on the tensor IR -----------------------===//
//
// valueAndGradient (keel/autodiff/Gradient.h), in three steps:
//
//   inline    the function's calls, recursively, into one straight line
//             (the forward sweep, computed once);
//   depends   which values depend on a chosen parameter;
//   adjoints  the ops in reverse, each dependent operand's contribution
//             built by its rule (docs/autodiff.md) and added to what the
//             operand had: contributions arrive latest use first, and each
//             addition is one binary.add, so the order is fixed.
//
// Gradients are carried in f32 and f64 only: a contribution that would
// reach a low-precision value is a Problem at its operation; integer and
// pred values carry none (comparisons, argmax, integer arithmetic have a
// zero gradient, as docs/autodiff.md states).
//
//===----------------------------------------------------------------------===//
#include "keel/autodiff/Gradient.h"

#include "keel/ir/Infer.h"

#include <algorithm>
#include <unordered_map>

namespace keel::autodiff {

using namespace ir;

namespace {

constexpr ValueId kNone = ~ValueId{0};

bool carriesGradient(DType t) { return t == DType::F32 || t == DType::F64; }

/// A problem that stops the transformation (thrown inside, returned out).
struct Stop {
  Problem problem;
};

[[noreturn]] void stop(std::string message, const Location &loc) { throw Stop{{std::move(message), loc}}; }

/// Builds the value-and-gradient function: the forward ops inlined, then
/// the adjoints.
class Differentiator {
public:
  Differentiator(const Module &m, const Function &f) : m_(m), f_(f) {
    g_.name = f.name;
    g_.params = f.params;
    g_.effects = f.effects;
    g_.loc = f.loc;
    g_.names = f.names;
    g_.valueTypes = f.valueTypes;
  }

  Function run(const std::vector<size_t> &wrt) {
    if (f_.resultTypes.size() != 1 || f_.resultTypes[0].rank() != 0 || !carriesGradient(f_.resultTypes[0].dtype))
      stop("`" + f_.name + "` returns " + resultsText() + ": a gradient is of a function whose result is one f32 or " +
               "f64 scalar (a rank-0 tensor, such as a loss)",
           f_.loc);
    for (size_t i : wrt)
      if (!carriesGradient(f_.valueTypes[f_.params[i]].dtype))
        stop("parameter " + std::to_string(i) + " of `" + f_.name + "` is " + typeText(f_.valueTypes[f_.params[i]]) +
                 ": gradients are f32 or f64 tensors (convert the parameter inside the function)",
             f_.loc);
    // The forward sweep: every call inlined.
    std::vector<ValueId> identity(f_.valueTypes.size());
    for (size_t v = 0; v < identity.size(); ++v)
      identity[v] = static_cast<ValueId>(v);
    std::vector<ValueId> returned;
    inlineOps(f_.ops, identity, returned);
    size_t forward = ops_.size();

    // Which values depend on a chosen parameter.
    depends_.assign(g_.valueTypes.size(), false);
    for (size_t i : wrt)
      depends_[g_.params[i]] = true;
    for (size_t k = 0; k < forward; ++k) {
      const Op &o = ops_[k];
      bool any = std::any_of(o.operands.begin(), o.operands.end(), [&](ValueId v) { return depends_[v]; });
      for (ValueId r : o.results)
        depends_[r] = any;
    }

    // The adjoints, from the value's (1) back.
    ValueId value = returned[0];
    adjoint_.assign(g_.valueTypes.size(), kNone);
    if (depends_[value])
      adjoint_[value] = constant(g_.valueTypes[value], 1.0, f_.loc);
    for (size_t k = forward; k-- > 0;) {
      Op o = ops_[k]; // a copy: emitting appends to ops_
      if (o.results.size() == 1 && o.results[0] < adjoint_.size() && adjoint_[o.results[0]] != kNone)
        backward(o, adjoint_[o.results[0]]);
    }

    Op ret;
    ret.kind = OpKind::Return;
    ret.operands.push_back(value);
    g_.resultTypes = {g_.valueTypes[value]};
    for (size_t i : wrt) {
      ValueId p = g_.params[i];
      ValueId grad = p < adjoint_.size() && adjoint_[p] != kNone ? adjoint_[p] : constant(g_.valueTypes[p], 0.0, f_.loc);
      ret.operands.push_back(grad);
      g_.resultTypes.push_back(g_.valueTypes[grad]);
    }
    ret.loc = f_.loc;
    ops_.push_back(std::move(ret));
    g_.ops = std::move(ops_);
    return std::move(g_);
  }

private:
  std::string resultsText() const {
    std::string s;
    for (const TensorType &t : f_.resultTypes)
      s += (s.empty() ? "" : ", ") + typeText(t);
    return f_.resultTypes.size() == 1 ? s : "(" + s + ")";
  }

  //===-- The forward sweep ------------------------------------------------===//

  /// Appends `ops` (of a function whose values `map` takes to g's) to the
  /// forward sweep; the values its `return` gives go to `returned`.
  void inlineOps(const std::vector<Op> &ops, std::vector<ValueId> &map, std::vector<ValueId> &returned) {
    for (const Op &o : ops) {
      std::vector<ValueId> operands;
      for (ValueId v : o.operands)
        operands.push_back(map[v]);
      switch (o.kind) {
      case OpKind::Return: returned = operands; return;
      case OpKind::Call: {
        const Function *callee = m_.find(o.callee);
        if (!callee)
          stop("internal compiler error: `call @" + o.callee + "` names no function", o.loc);
        std::vector<ValueId> inner(callee->valueTypes.size(), kNone);
        for (size_t i = 0; i < callee->params.size(); ++i)
          inner[callee->params[i]] = operands[i];
        std::vector<ValueId> results;
        inlineOps(callee->ops, inner, results);
        for (size_t i = 0; i < o.results.size(); ++i)
          map[o.results[i]] = results[i];
        break;
      }
      case OpKind::Fusion:
        stop("internal compiler error: gradients are made before fusion, but `" + f_.name + "` has a fusion", o.loc);
      case OpKind::Unary: case OpKind::Binary: case OpKind::Compare: case OpKind::Select: case OpKind::Convert:
      case OpKind::Constant: case OpKind::Iota: case OpKind::BroadcastInDim: case OpKind::Reshape:
      case OpKind::Transpose: case OpKind::Slice: case OpKind::Concatenate: case OpKind::Reduce:
      case OpKind::DotGeneral: case OpKind::Copy: case OpKind::Relayout: {
        Op copy = o;
        copy.operands = operands;
        for (size_t i = 0; i < o.results.size(); ++i) {
          if (map[o.results[i]] == kNone) // a callee's value: a new one in g
            map[o.results[i]] = g_.newValue(o.resultTypes[i]);
          copy.results[i] = map[o.results[i]];
          producer_[copy.results[i]] = ops_.size();
        }
        ops_.push_back(std::move(copy));
        break;
      }
      }
    }
  }

  //===-- Building ops -----------------------------------------------------===//

  /// A copy: emitting adds values, which moves the types' storage.
  TensorType type(ValueId v) const { return g_.valueTypes[v]; }

  /// Appends `o` on `operands`, typed by its rule (a target supplies what
  /// the rule takes from it: a shape, an element type, the layout).
  ValueId emit(Op o, std::vector<ValueId> operands, const TensorType &target, const Location &loc) {
    std::vector<TensorType> types;
    for (ValueId v : operands)
      types.push_back(type(v));
    o.operands = std::move(operands);
    Inferred inferred = inferResultType(o, types, target);
    if (!inferred.type)
      stop("internal compiler error: a gradient rule made an invalid `" + opName(o) + "`: " + inferred.error, loc);
    ValueId r = g_.newValue(*inferred.type);
    o.results = {r};
    o.resultTypes = {*inferred.type};
    o.loc = loc;
    producer_[r] = ops_.size();
    ops_.push_back(std::move(o));
    if (adjoint_.size() < g_.valueTypes.size())
      adjoint_.resize(g_.valueTypes.size(), kNone);
    if (depends_.size() < g_.valueTypes.size())
      depends_.resize(g_.valueTypes.size(), false);
    return r;
  }

  static Op op(OpKind k) {
    Op o;
    o.kind = k;
    return o;
  }

  /// A splat of `v` of `like`'s type, layout included.
  ValueId constant(const TensorType &like, double v, const Location &loc) {
    Op o = op(OpKind::Constant);
    o.constant = {fp::fromF64(*formatOf(like.dtype), v)};
    return emit(std::move(o), {}, like, loc);
  }
  ValueId unary(UnaryCode c, ValueId x, const Location &loc) {
    Op o = op(OpKind::Unary);
    o.unary = c;
    return emit(std::move(o), {x}, type(x), loc);
  }
  ValueId binary(BinaryCode c, ValueId a, ValueId b, const Location &loc) {
    Op o = op(OpKind::Binary);
    o.binary = c;
    return emit(std::move(o), {a, b}, type(a), loc);
  }
  ValueId compare(CompareDir d, ValueId a, ValueId b, const Location &loc) {
    Op o = op(OpKind::Compare);
    o.compare = d;
    return emit(std::move(o), {a, b}, type(a), loc);
  }
  ValueId select(ValueId c, ValueId a, ValueId b, const Location &loc) {
    return emit(op(OpKind::Select), {c, a, b}, type(a), loc);
  }
  ValueId convert(ValueId x, DType to, const Location &loc) {
    if (type(x).dtype == to)
      return x;
    return emit(op(OpKind::Convert), {x}, TensorType::make(to, type(x).shape), loc);
  }
  ValueId broadcast(ValueId x, const std::vector<int64_t> &shape, std::vector<int64_t> dims, const Location &loc) {
    Op o = op(OpKind::BroadcastInDim);
    o.dims = std::move(dims);
    return emit(std::move(o), {x}, TensorType::make(type(x).dtype, shape), loc);
  }
  ValueId reshape(ValueId x, const std::vector<int64_t> &shape, const Location &loc) {
    if (type(x).shape == shape)
      return x;
    return emit(op(OpKind::Reshape), {x}, TensorType::make(type(x).dtype, shape), loc);
  }
  /// The transpose that made `v` (a forward or backward op), or null.
  const Op *transposeMaking(ValueId v) const {
    auto made = producer_.find(v);
    return made != producer_.end() && ops_[made->second].kind == OpKind::Transpose ? &ops_[made->second] : nullptr;
  }

  /// A transpose of a transpose is one transpose of the first's operand
  /// (none when they cancel): the adjoint of `x^T` in a contraction is
  /// made transposed, and transposed back by the transpose's own rule.
  ValueId transpose(ValueId x, std::vector<int64_t> perm, const Location &loc) {
    if (const Op *made = transposeMaking(x)) {
      const Op &inner = *made;
      std::vector<int64_t> composed;
      bool identity = true;
      for (size_t j = 0; j < perm.size(); ++j) {
        composed.push_back(inner.dims[static_cast<size_t>(perm[j])]);
        identity = identity && composed.back() == static_cast<int64_t>(j);
      }
      x = inner.operands[0];
      perm = std::move(composed);
      if (identity)
        return x;
    }
    std::vector<int64_t> shape;
    for (int64_t p : perm)
      shape.push_back(type(x).shape[static_cast<size_t>(p)]);
    Op o = op(OpKind::Transpose);
    o.dims = std::move(perm);
    return emit(std::move(o), {x}, TensorType::make(type(x).dtype, shape), loc);
  }
  /// A sequential sum over `axes` (increasing), in the value's own type.
  ValueId sum(ValueId x, const std::vector<int64_t> &axes, const Location &loc) {
    if (axes.empty())
      return x;
    std::vector<int64_t> shape;
    for (size_t d = 0; d < type(x).rank(); ++d)
      if (!std::binary_search(axes.begin(), axes.end(), static_cast<int64_t>(d)))
        shape.push_back(type(x).shape[d]);
    Op o = op(OpKind::Reduce);
    o.combiner = Combiner::Sum;
    o.dims = axes;
    o.acc = type(x).dtype;
    return emit(std::move(o), {x}, TensorType::make(type(x).dtype, shape), loc);
  }
  ValueId slice(ValueId x, std::vector<int64_t> start, std::vector<int64_t> limit, const Location &loc) {
    std::vector<int64_t> shape;
    for (size_t d = 0; d < start.size(); ++d)
      shape.push_back(limit[d] - start[d]);
    Op o = op(OpKind::Slice);
    o.dims = std::move(start);
    o.limits = std::move(limit);
    return emit(std::move(o), {x}, TensorType::make(type(x).dtype, shape), loc);
  }
  ValueId concatenate(const std::vector<ValueId> &parts, int64_t axis, const Location &loc) {
    if (parts.size() == 1)
      return parts[0];
    std::vector<int64_t> shape = type(parts[0]).shape;
    shape[static_cast<size_t>(axis)] = 0;
    for (ValueId p : parts)
      shape[static_cast<size_t>(axis)] += type(p).shape[static_cast<size_t>(axis)];
    Op o = op(OpKind::Concatenate);
    o.axis = axis;
    return emit(std::move(o), parts, TensorType::make(type(parts[0]).dtype, shape), loc);
  }
  ValueId zerosLike(ValueId x, const Location &loc) { return constant(type(x), 0.0, loc); }

  //===-- The adjoints -----------------------------------------------------===//

  /// `x` in `like`'s layout (a relayout when it differs).
  ValueId inLayoutOf(ValueId x, const TensorType &like, const Location &loc) {
    if (type(x).minorToMajor == like.minorToMajor)
      return x;
    TensorType t = type(x);
    t.minorToMajor = like.minorToMajor;
    return emit(op(OpKind::Relayout), {x}, t, loc);
  }

  /// Adds contribution `c` to operand `v`'s adjoint (moved into v's
  /// layout first, when a rule made it in another).
  void contribute(ValueId v, ValueId c, const Location &loc) {
    c = inLayoutOf(c, type(v), loc);
    if (adjoint_[v] == kNone)
      adjoint_[v] = c;
    else
      adjoint_[v] = binary(BinaryCode::Add, adjoint_[v], c, loc);
  }

  /// Whether operand `v` of `o` takes a contribution: it depends on a
  /// chosen parameter and carries gradients; a low-precision one on the
  /// path is the problem the docs state.
  bool takes(const Op &o, ValueId v) {
    if (!depends_[v])
      return false;
    DType t = type(v).dtype;
    if (carriesGradient(t))
      return true;
    if (isFloatType(t))
      stop("the gradient flows through a " + typeText(type(v)) + " value here (an operand of `" + opName(o) +
               "`): gradients are carried in f32 and f64 only; compute this part in f32 (`as f32`)",
           o.loc);
    return false; // integers and pred: a zero gradient
  }

  void backward(const Op &o, ValueId g) {
    const Location &at = o.loc;
    const std::vector<ValueId> &x = o.operands;
    ValueId y = o.results[0];
    switch (o.kind) {
    case OpKind::Unary: if (takes(o, x[0])) contribute(x[0], unaryAdjoint(o, g, x[0], y), at); return;
    case OpKind::Binary: binaryAdjoint(o, g, y); return;
    case OpKind::Compare: case OpKind::Constant: case OpKind::Iota: return; // no gradient reaches a pred
    case OpKind::Select: {
      ValueId zero = zerosLike(g, at);
      if (takes(o, x[1]))
        contribute(x[1], select(x[0], g, zero, at), at);
      if (takes(o, x[2]))
        contribute(x[2], select(x[0], zero, g, at), at);
      return;
    }
    case OpKind::Convert:
      if (takes(o, x[0]))
        contribute(x[0], convert(g, type(x[0]).dtype, at), at);
      return;
    case OpKind::BroadcastInDim: {
      if (!takes(o, x[0]))
        return;
      const TensorType &in = type(x[0]), &out = type(y);
      std::vector<int64_t> axes;
      for (size_t d = 0; d < out.rank(); ++d) {
        auto at_ = std::find(o.dims.begin(), o.dims.end(), static_cast<int64_t>(d));
        bool spread = at_ == o.dims.end() || in.shape[static_cast<size_t>(at_ - o.dims.begin())] == 1;
        if (spread && out.shape[d] != 1) // a dimension of 1 is summed by the reshape alone
          axes.push_back(static_cast<int64_t>(d));
      }
      contribute(x[0], reshape(sum(g, axes, at), in.shape, at), at);
      return;
    }
    case OpKind::Reshape:
      if (takes(o, x[0]))
        contribute(x[0], reshape(g, type(x[0]).shape, at), at);
      return;
    case OpKind::Transpose: {
      if (!takes(o, x[0]))
        return;
      std::vector<int64_t> inverse(o.dims.size());
      for (size_t i = 0; i < o.dims.size(); ++i)
        inverse[static_cast<size_t>(o.dims[i])] = static_cast<int64_t>(i);
      contribute(x[0], transpose(g, inverse, at), at);
      return;
    }
    case OpKind::Slice: if (takes(o, x[0])) contribute(x[0], padded(o, g), at); return;
    case OpKind::Concatenate: {
      int64_t offset = 0;
      for (ValueId part : x) {
        const TensorType &t = type(part);
        int64_t size = t.shape[static_cast<size_t>(o.axis)];
        if (takes(o, part)) {
          std::vector<int64_t> start(t.rank(), 0), limit = type(g).shape;
          start[static_cast<size_t>(o.axis)] = offset;
          limit[static_cast<size_t>(o.axis)] = offset + size;
          contribute(part, slice(g, start, limit, at), at);
        }
        offset += size;
      }
      return;
    }
    case OpKind::Reduce: if (takes(o, x[0])) contribute(x[0], reduceAdjoint(o, g, x[0], y), at); return;
    case OpKind::DotGeneral: dotAdjoint(o, g); return;
    case OpKind::Copy: if (takes(o, x[0])) contribute(x[0], g, at); return;
    case OpKind::Relayout: if (takes(o, x[0])) contribute(x[0], g, at); return; // relayout back, by contribute
    case OpKind::Call: case OpKind::Return: case OpKind::Fusion:
      stop("internal compiler error: `" + opName(o) + "` in the inlined forward sweep", at);
    }
  }

  ValueId unaryAdjoint(const Op &o, ValueId g, ValueId x, ValueId y) {
    const Location &at = o.loc;
    auto c = [&](double v) { return constant(type(x), v, at); };
    auto mul = [&](ValueId a, ValueId b) { return binary(BinaryCode::Mul, a, b, at); };
    auto div = [&](ValueId a, ValueId b) { return binary(BinaryCode::Div, a, b, at); };
    switch (o.unary) {
    case UnaryCode::Neg: return unary(UnaryCode::Neg, g, at);
    case UnaryCode::Abs: // the sign of x: 0 at 0 (and at NaN)
      return select(compare(CompareDir::Gt, x, c(0), at), g,
                    select(compare(CompareDir::Lt, x, c(0), at), unary(UnaryCode::Neg, g, at), c(0), at), at);
    case UnaryCode::Relu: return select(compare(CompareDir::Gt, x, c(0), at), g, c(0), at);
    case UnaryCode::Not: break; // pred: takes() gives it no gradient
    case UnaryCode::Exp: return mul(g, y);
    case UnaryCode::Log: return div(g, x);
    case UnaryCode::Tanh: case UnaryCode::Sigmoid: case UnaryCode::Gelu: case UnaryCode::Silu:
      return mul(g, smoothDerivative(o.unary, x, y, at));
    case UnaryCode::Sqrt: return div(g, mul(c(2), y));
    case UnaryCode::Rsqrt: return mul(g, mul(div(y, x), c(-0.5))); // d x^-1/2 = -1/2 x^-3/2 = -1/2 y / x
    case UnaryCode::Sin: return mul(g, unary(UnaryCode::Cos, x, at));
    case UnaryCode::Cos: return unary(UnaryCode::Neg, mul(g, unary(UnaryCode::Sin, x, at)), at);
    }
    stop("internal compiler error: no gradient rule for `" + opName(o) + "`", at);
  }

  /// f'(x) of tanh, sigmoid, gelu and silu, in forms without cancellation
  /// in their tails, evaluated in f64 (an f32 operand widened exactly) and
  /// rounded once to the operand's type: within about 1 ulp of f32, and a
  /// few ulps of f64 (docs/autodiff.md states the measured bounds).
  ValueId smoothDerivative(UnaryCode code, ValueId x, ValueId y, const Location &at) {
    DType t = type(x).dtype;
    ValueId w = convert(x, DType::F64, at), wy = convert(y, DType::F64, at);
    auto c = [&](double v) { return constant(type(w), v, at); };
    auto mul = [&](ValueId a, ValueId b) { return binary(BinaryCode::Mul, a, b, at); };
    auto add = [&](ValueId a, ValueId b) { return binary(BinaryCode::Add, a, b, at); };
    auto div = [&](ValueId a, ValueId b) { return binary(BinaryCode::Div, a, b, at); };
    auto expOf = [&](ValueId a) { return unary(UnaryCode::Exp, a, at); };
    ValueId d = w;
    switch (code) {
    case UnaryCode::Tanh: { // sech^2 x = 4 e / (1 + e)^2, e = exp(-2|x|)
      ValueId e = expOf(mul(unary(UnaryCode::Abs, w, at), c(-2)));
      ValueId onePlus = add(c(1), e);
      d = div(mul(c(4), e), mul(onePlus, onePlus));
      break;
    }
    case UnaryCode::Sigmoid: { // s (1 - s) = e / (1 + e)^2, e = exp(-|x|)
      ValueId e = expOf(unary(UnaryCode::Neg, unary(UnaryCode::Abs, w, at), at));
      ValueId onePlus = add(c(1), e);
      d = div(e, mul(onePlus, onePlus));
      break;
    }
    case UnaryCode::Gelu: {
      // Phi(x) + x phi(x): Phi = gelu(x) / x (1/2 at 0) with gelu in f64
      // (the two terms cancel where gelu' crosses 0, near x = -0.75),
      // phi = exp(-x^2/2) / sqrt(2 pi).
      ValueId phi = mul(expOf(mul(mul(w, w), c(-0.5))), c(0.3989422804014327));
      ValueId wide = t == DType::F64 ? wy : unary(UnaryCode::Gelu, w, at);
      ValueId cdf = select(compare(CompareDir::Eq, w, c(0), at), c(0.5), div(wide, w), at);
      d = add(cdf, mul(w, phi));
      break;
    }
    case UnaryCode::Silu: {
      // s(x) (1 + x s(-x)), 1 - s(x) as s(-x) without cancellation; both
      // from one e = exp(-|x|): 1 / (1 + e) and e / (1 + e), by x's sign.
      ValueId e = expOf(unary(UnaryCode::Neg, unary(UnaryCode::Abs, w, at), at));
      ValueId onePlus = add(c(1), e);
      ValueId larger = div(c(1), onePlus), smaller = div(e, onePlus);
      ValueId positive = compare(CompareDir::Ge, w, c(0), at);
      ValueId s = select(positive, larger, smaller, at), rest = select(positive, smaller, larger, at);
      d = mul(s, add(c(1), mul(w, rest)));
      break;
    }
    case UnaryCode::Neg: case UnaryCode::Abs: case UnaryCode::Relu: case UnaryCode::Not: case UnaryCode::Exp:
    case UnaryCode::Log: case UnaryCode::Sqrt: case UnaryCode::Rsqrt: case UnaryCode::Sin: case UnaryCode::Cos:
      stop("internal compiler error: no smooth derivative of `unary." + std::string(unaryName(code)) + "`", at);
    }
    return convert(d, t, at);
  }

  void binaryAdjoint(const Op &o, ValueId g, ValueId y) {
    const Location &at = o.loc;
    ValueId a = o.operands[0], b = o.operands[1];
    bool da = takes(o, a), db = takes(o, b);
    if (!da && !db)
      return;
    auto c = [&](double v) { return constant(type(a), v, at); };
    auto mul = [&](ValueId p, ValueId q) { return binary(BinaryCode::Mul, p, q, at); };
    auto neg = [&](ValueId p) { return unary(UnaryCode::Neg, p, at); };
    switch (o.binary) {
    case BinaryCode::Add:
      if (da) contribute(a, g, at);
      if (db) contribute(b, g, at);
      return;
    case BinaryCode::Sub:
      if (da) contribute(a, g, at);
      if (db) contribute(b, neg(g), at);
      return;
    case BinaryCode::Mul:
      if (da) contribute(a, mul(g, b), at);
      if (db) contribute(b, mul(g, a), at);
      return;
    case BinaryCode::Div:
      if (da) contribute(a, binary(BinaryCode::Div, g, b, at), at);
      if (db) contribute(b, neg(binary(BinaryCode::Div, mul(g, y), b, at)), at);
      return;
    case BinaryCode::Max: case BinaryCode::Min: { // ties go to a; NaN compares false: to b
      ValueId first = compare(o.binary == BinaryCode::Max ? CompareDir::Ge : CompareDir::Le, a, b, at);
      ValueId zero = c(0);
      if (da) contribute(a, select(first, g, zero, at), at);
      if (db) contribute(b, select(first, zero, g, at), at);
      return;
    }
    case BinaryCode::Pow: // b a^(b-1), and y log(a) (0 where a == 0)
      if (da)
        contribute(a, mul(g, mul(b, binary(BinaryCode::Pow, a, binary(BinaryCode::Sub, b, c(1), at), at))), at);
      if (db)
        contribute(b, select(compare(CompareDir::Eq, a, c(0), at), c(0), mul(g, mul(y, unary(UnaryCode::Log, a, at))), at),
                   at);
      return;
    case BinaryCode::Rem:
      stop("no gradient rule for `binary.rem` (the float remainder) yet", at);
    case BinaryCode::And: case BinaryCode::Or: case BinaryCode::Xor: return; // integers and pred: none
    }
  }

  /// The adjoint of a slice: g with zeros around it, axis by axis.
  ValueId padded(const Op &o, ValueId g) {
    const Location &at = o.loc;
    const TensorType &in = type(o.operands[0]);
    ValueId out = g;
    for (size_t d = 0; d < in.rank(); ++d) {
      int64_t before = o.dims[d], after = in.shape[d] - o.limits[d];
      if (before == 0 && after == 0)
        continue;
      std::vector<ValueId> parts;
      auto zeros = [&](int64_t n) {
        TensorType t = type(out);
        t.shape[d] = n;
        return constant(t, 0.0, at); // out's layout: concatenate's operands share one
      };
      if (before)
        parts.push_back(zeros(before));
      parts.push_back(out);
      if (after)
        parts.push_back(zeros(after));
      out = concatenate(parts, static_cast<int64_t>(d), at);
    }
    return out;
  }

  ValueId reduceAdjoint(const Op &o, ValueId g, ValueId x, ValueId y) {
    const Location &at = o.loc;
    const TensorType &in = type(x);
    std::vector<int64_t> kept;
    for (size_t d = 0; d < in.rank(); ++d)
      if (!std::binary_search(o.dims.begin(), o.dims.end(), static_cast<int64_t>(d)))
        kept.push_back(static_cast<int64_t>(d));
    ValueId gx = convert(g, in.dtype, at);
    switch (o.combiner) {
    case Combiner::Sum: return broadcast(gx, in.shape, kept, at);
    case Combiner::Max: case Combiner::Min: {
      // Every element equal to the extreme shares the gradient equally
      // (PyTorch's amax / amin rule): g / count where x == y, else 0.
      ValueId extreme = inLayoutOf(broadcast(convert(y, in.dtype, at), in.shape, kept, at), in, at);
      ValueId at_ = compare(CompareDir::Eq, x, extreme, at);
      ValueId ones = constant(in, 1.0, at), zeros = constant(in, 0.0, at);
      ValueId count = sum(select(at_, ones, zeros, at), o.dims, at);
      ValueId share =
          inLayoutOf(broadcast(binary(BinaryCode::Div, gx, inLayoutOf(count, type(gx), at), at), in.shape, kept, at),
                     in, at);
      return select(at_, share, zeros, at);
    }
    case Combiner::Prod: stop("no gradient rule for `reduce.prod` yet", at);
    case Combiner::And: case Combiner::Or: case Combiner::ArgMax: case Combiner::ArgMin:
      stop("internal compiler error: a gradient reached `" + opName(o) + "`", at);
    }
    stop("internal compiler error: no gradient rule for `" + opName(o) + "`", at);
  }

  /// dot_general's adjoints: each a contraction of g with the other
  /// operand over the other's free dimensions, then a transpose into the
  /// operand's dimension order (in the accumulator's type when wider).
  void dotAdjoint(const Op &o, ValueId g) {
    const Location &at = o.loc;
    ValueId lhs = o.operands[0], rhs = o.operands[1];
    bool dl = takes(o, lhs), dr = takes(o, rhs);
    if (!dl && !dr)
      return;
    DType acc = type(g).dtype;
    size_t batch = o.lhsBatch.size();
    auto freeDims = [](size_t rank, const std::vector<int64_t> &b, const std::vector<int64_t> &c) {
      std::vector<int64_t> out;
      for (size_t d = 0; d < rank; ++d)
        if (std::find(b.begin(), b.end(), static_cast<int64_t>(d)) == b.end() &&
            std::find(c.begin(), c.end(), static_cast<int64_t>(d)) == c.end())
          out.push_back(static_cast<int64_t>(d));
      return out;
    };
    std::vector<int64_t> lFree = freeDims(type(lhs).rank(), o.lhsBatch, o.lhsContract);
    std::vector<int64_t> rFree = freeDims(type(rhs).rank(), o.rhsBatch, o.rhsContract);
    std::vector<int64_t> gBatch;
    for (size_t i = 0; i < batch; ++i)
      gBatch.push_back(static_cast<int64_t>(i));
    // `operand`'s adjoint: contract g's dims of the other's free dims with
    // the other's free dims; the result's dims are batch, operand's free,
    // then the other's contracting dims in increasing order, which pair
    // with the operand's.
    auto adjoint = [&](ValueId gv, ValueId operand, ValueId other, const std::vector<int64_t> &opBatch,
                       const std::vector<int64_t> &opFree, const std::vector<int64_t> &opContract,
                       const std::vector<int64_t> &otherBatch, const std::vector<int64_t> &otherFree,
                       const std::vector<int64_t> &otherContract, size_t gFreeOffset, size_t gOwnOffset) {
      // A transposed `other` is read as the value it transposes, its
      // dimensions renamed (the contraction then reads it in its stored
      // order, and the transpose need not be stored for the adjoint).
      std::vector<int64_t> rename(type(other).rank());
      for (size_t i = 0; i < rename.size(); ++i)
        rename[i] = static_cast<int64_t>(i);
      if (const Op *made = transposeMaking(other)) {
        rename = made->dims;
        other = made->operands[0];
      }
      auto renamed = [&](const std::vector<int64_t> &dims) {
        std::vector<int64_t> out;
        for (int64_t d : dims)
          out.push_back(rename[static_cast<size_t>(d)]);
        return out;
      };
      Op d = op(OpKind::DotGeneral);
      d.lhsBatch = gBatch;
      d.rhsBatch = renamed(otherBatch);
      for (size_t i = 0; i < otherFree.size(); ++i)
        d.lhsContract.push_back(static_cast<int64_t>(gFreeOffset + i));
      d.rhsContract = renamed(otherFree);
      d.acc = acc;
      d.order = o.order;
      ValueId wide = convert(other, acc, at);
      std::vector<int64_t> shape;
      for (size_t i = 0; i < batch; ++i)
        shape.push_back(type(gv).shape[i]);
      for (size_t i = 0; i < opFree.size(); ++i)
        shape.push_back(type(gv).shape[gOwnOffset + i]);
      std::vector<int64_t> contracted = renamed(otherContract), rest;
      for (size_t dd = 0; dd < type(other).rank(); ++dd)
        if (std::find(contracted.begin(), contracted.end(), static_cast<int64_t>(dd)) != contracted.end())
          rest.push_back(static_cast<int64_t>(dd)); // increasing
      for (int64_t r : rest)
        shape.push_back(type(other).shape[static_cast<size_t>(r)]);
      ValueId product = emit(std::move(d), {gv, wide}, TensorType::make(acc, shape), at);
      // Position of each operand dimension in the product.
      std::vector<int64_t> perm(type(operand).rank());
      for (size_t i = 0; i < batch; ++i)
        perm[static_cast<size_t>(opBatch[i])] = static_cast<int64_t>(i);
      for (size_t i = 0; i < opFree.size(); ++i)
        perm[static_cast<size_t>(opFree[i])] = static_cast<int64_t>(batch + i);
      for (size_t j = 0; j < opContract.size(); ++j) {
        size_t k = static_cast<size_t>(std::find(rest.begin(), rest.end(), contracted[j]) - rest.begin());
        perm[static_cast<size_t>(opContract[j])] = static_cast<int64_t>(batch + opFree.size() + k);
      }
      bool identity = true;
      for (size_t i = 0; i < perm.size(); ++i)
        identity = identity && perm[i] == static_cast<int64_t>(i);
      ValueId ordered = identity ? product : transpose(product, perm, at);
      contribute(operand, convert(ordered, type(operand).dtype, at), at);
    };
    // g's dims: batch, lhs free, rhs free. The lhs's adjoint contracts g's
    // trailing dims; the rhs's would contract its middle ones, so g is
    // transposed to batch, rhs free, lhs free first: each adjoint is then a
    // product whose lhs contracts its last dimensions, the form the CPU
    // schedule tiles (a [N, M] transpose of g costs far less than a
    // contraction read down g's columns).
    if (dl)
      adjoint(g, lhs, rhs, o.lhsBatch, lFree, o.lhsContract, o.rhsBatch, rFree, o.rhsContract,
              batch + lFree.size(), batch);
    if (dr) {
      ValueId gt = g;
      if (!lFree.empty() && !rFree.empty()) {
        std::vector<int64_t> perm = gBatch;
        for (size_t i = 0; i < rFree.size(); ++i)
          perm.push_back(static_cast<int64_t>(batch + lFree.size() + i));
        for (size_t i = 0; i < lFree.size(); ++i)
          perm.push_back(static_cast<int64_t>(batch + i));
        gt = transpose(g, perm, at);
      }
      adjoint(gt, rhs, lhs, o.rhsBatch, rFree, o.rhsContract, o.lhsBatch, lFree, o.lhsContract,
              batch + (gt == g ? 0 : rFree.size()), batch + (gt == g ? lFree.size() : 0));
    }
  }

  const Module &m_;
  const Function &f_;
  Function g_;
  std::vector<Op> ops_;
  std::vector<bool> depends_;
  std::vector<ValueId> adjoint_;
  std::unordered_map<ValueId, size_t> producer_; ///< the op of ops_ that made each value (the sweeps' own)
};

/// Drops the operations whose results nothing reads (every operation is
/// pure once calls are inlined): the forward values no adjoint needs, and
/// the transposes a composed transpose replaced.
void dropUnused(Function &f) {
  std::vector<bool> live(f.valueTypes.size(), false);
  std::vector<bool> keep(f.ops.size(), false);
  for (size_t k = f.ops.size(); k-- > 0;) {
    const Op &o = f.ops[k];
    keep[k] = o.kind == OpKind::Return ||
              std::any_of(o.results.begin(), o.results.end(), [&](ValueId r) { return live[r]; });
    if (keep[k])
      for (ValueId v : o.operands)
        live[v] = true;
  }
  std::vector<Op> kept;
  for (size_t k = 0; k < f.ops.size(); ++k)
    if (keep[k])
      kept.push_back(std::move(f.ops[k]));
  f.ops = std::move(kept);
}

} // namespace

std::optional<Problem> valueAndGradient(Module &m, const std::string &function, const std::vector<size_t> &wrt) {
  auto it = std::find_if(m.functions.begin(), m.functions.end(), [&](const Function &f) { return f.name == function; });
  if (it == m.functions.end())
    return Problem{"internal compiler error: no function `" + function + "` to differentiate", {}};
  try {
    Function g = Differentiator(m, *it).run(wrt);
    dropUnused(g);
    *it = std::move(g);
  } catch (const Stop &s) {
    return s.problem;
  }
  return std::nullopt;
}

} // namespace keel::autodiff
