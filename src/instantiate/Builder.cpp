//===- Builder.cpp - Instantiating checked tensor functions as IR --------===//
#include "keel/instantiate/Builder.h"
#include "keel/support/Effects.h"

#include "keel/instantiate/Becomes.h"
#include "keel/ir/Infer.h"

#include "keel/numerics/Format.h"
#include "keel/support/Codes.h"

#include <algorithm>
#include <charconv>
#include <set>

namespace keel::instantiate {

using namespace ir;
using namespace syntax;
using sema::Scalar;

std::optional<std::map<std::string, int64_t>> parseBindings(std::string_view text, std::string &error) {
  std::map<std::string, int64_t> out;
  size_t start = 0;
  while (start <= text.size()) {
    size_t comma = text.find(',', start);
    std::string_view item = text.substr(start, comma == std::string_view::npos ? std::string_view::npos : comma - start);
    size_t eq = item.find('=');
    std::string_view name = eq == std::string_view::npos ? item : item.substr(0, eq);
    std::string_view value = eq == std::string_view::npos ? std::string_view{} : item.substr(eq + 1);
    int64_t v = 0;
    auto [p, ec] = std::from_chars(value.data(), value.data() + value.size(), v);
    bool nameOk = !name.empty() && std::all_of(name.begin(), name.end(), [](char c) {
      return (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || (c >= '0' && c <= '9') || c == '_';
    });
    if (!nameOk || value.empty() || ec != std::errc() || p != value.data() + value.size()) {
      error = "'" + std::string(item) + "' is not NAME=SIZE";
      return std::nullopt;
    }
    if (v < 1) {
      error = "'" + std::string(item) + "': a size must be at least 1";
      return std::nullopt;
    }
    if (!out.emplace(std::string(name), v).second) {
      error = "'" + std::string(name) + "' is bound twice";
      return std::nullopt;
    }
    if (comma == std::string_view::npos)
      break;
    start = comma + 1;
  }
  return out;
}

namespace {

struct Fail {}; // thrown after an error has been reported

/// The encoding of an integer in an integer dtype (two's complement,
/// truncated to the width) or a float dtype (rounded once).
uint64_t encodeInteger(int64_t v, DType t) {
  if (auto f = sema::formatOf(t))
    return fp::fromI64(*f, v);
  int bits = encodingBits(t);
  uint64_t u = static_cast<uint64_t>(v);
  return bits == 64 ? u : u & ((uint64_t{1} << bits) - 1);
}

/// Binds what sema::bindParameterVariables reads beyond the lone variables
/// (the dividends of exact quotients), at concrete sizes.
void readDividends(const sema::FunctionSig &s, const std::vector<std::optional<std::vector<int64_t>>> &shapes,
                   std::map<std::string, int64_t> &bindings) {
  std::map<std::string, sema::Dim> known;
  for (const auto &[name, size] : bindings)
    known.emplace(name, sema::Dim::constant(size));
  std::vector<std::pair<size_t, std::vector<sema::Dim>>> args;
  for (size_t i = 0; i < shapes.size() && i < s.params.size(); ++i)
    if (shapes[i] && shapes[i]->size() == s.params[i].dims.size()) {
      std::vector<sema::Dim> dims;
      for (int64_t d : *shapes[i])
        dims.push_back(sema::Dim::constant(d));
      args.push_back({i, std::move(dims)});
    }
  sema::bindParameterVariables(s, args, known);
  for (const auto &[name, dim] : known)
    if (std::optional<int64_t> size = dim.asConstant())
      bindings.emplace(name, *size);
}

/// The variable a parameter dimension is, when it is a lone variable.
std::optional<std::string> loneVariable(const sema::Dim &p) {
  if (p.terms().size() == 1 && p.constantTerm() == 0 && p.terms()[0].second == 1 &&
      p.terms()[0].first.kind == sema::DimAtom::Kind::Var)
    return p.terms()[0].first.name;
  return std::nullopt;
}

} // namespace

std::vector<uint64_t> randomEncodings(uint64_t seed, int64_t count, DType t, int64_t first) {
  std::vector<uint64_t> out;
  uint64_t state = seed + static_cast<uint64_t>(first) * 0x9E3779B97F4A7C15ull; // SplitMix64 jumps by adding
  for (int64_t k = 0; k < count; ++k) {
    state += 0x9E3779B97F4A7C15ull;
    uint64_t z = state;
    z = (z ^ (z >> 30)) * 0xBF58476D1CE4E5B9ull;
    z = (z ^ (z >> 27)) * 0x94D049BB133111EBull;
    z ^= z >> 31;
    double u = static_cast<double>(z >> 40) * 0x1p-24;
    if (auto f = sema::formatOf(t))
      out.push_back(fp::fromF64(*f, u));
    else
      out.push_back(encodeInteger(static_cast<int64_t>(z >> 40) & 1, t));
  }
  return out;
}

bool bindFromShapes(const sema::CheckedProgram &checked, const std::string &entry,
                    const std::vector<std::optional<std::vector<int64_t>>> &shapes,
                    std::map<std::string, int64_t> &bindings, std::string &error) {
  auto it = checked.functions.find(entry);
  if (it == checked.functions.end()) {
    error = "there is no function `" + entry + "`";
    return false;
  }
  const sema::FunctionSig &s = it->second;
  const syntax::FunctionDecl &decl = *s.decl;
  for (size_t i = 0; i < shapes.size() && i < s.params.size(); ++i) {
    if (!shapes[i])
      continue;
    const std::string &param = decl.params[i].name;
    const std::vector<sema::Dim> &dims = s.params[i].dims;
    if (dims.size() != shapes[i]->size()) {
      error = "`" + param + "` has rank " + std::to_string(dims.size()) + " but the argument has rank " +
              std::to_string(shapes[i]->size());
      return false;
    }
    for (size_t d = 0; d < dims.size(); ++d) {
      std::optional<std::string> var = loneVariable(dims[d]);
      if (!var)
        continue;
      int64_t size = (*shapes[i])[d];
      auto [at, fresh] = bindings.emplace(*var, size);
      if (!fresh && at->second != size) {
        error = "`" + *var + "` is " + std::to_string(at->second) + " from an earlier argument but " +
                std::to_string(size) + " from `" + param + "` (dimension " + std::to_string(d) + ")";
        return false;
      }
    }
  }
  readDividends(s, shapes, bindings);
  return true;
}

namespace {

class Builder {
public:
  Builder(const SourceManager &sources, const Program &program, const sema::CheckedProgram &checked,
          DiagnosticEngine &diags, SumOrder defaultOrder)
      : src_(sources), program_(program), checked_(checked), diags_(diags), defaultOrder_(defaultOrder) {}

  std::optional<Module> run(const BuildRequest &request) {
    keywordSizes_ = request.keywordSizes;
    const FunctionDecl *entry = findFunction(request.entry);
    try {
      if (!entry) {
        diags_.error(code::E0400, Span{}, "there is no function `" + request.entry + "` to build");
        throw Fail{};
      }
      std::set<std::string> vars = shapeVariables(*entry);
      for (const auto &[name, value] : request.bindings)
        if (!vars.count(name)) {
          diags_.error(code::E0400, entry->nameSpan, "`" + name + "` is not a shape variable of `" + entry->name + "`");
          throw Fail{};
        }
      instantiate(*entry, request.bindings, entry->nameSpan, true);
    } catch (const Fail &) {
      return std::nullopt;
    }
    // Callees were finished (and appended) before their callers: reverse, so
    // the entry comes first and each function before the ones it calls.
    std::reverse(module_.functions.begin(), module_.functions.end());
    return std::move(module_);
  }

  /// A tensor expression of scalar code as function `name`: the variables
  /// it reads are its parameters (`params`, in order); no shape variables.
  std::optional<TensorType> expression(const Expr &e, const std::vector<std::pair<std::string, TensorType>> &params,
                                       const std::string &name) {
    Function f;
    f.name = name;
    f.loc = location(e.span);
    fn_ = &f;
    env_.clear();
    bindings_.clear();
    try {
      for (const auto &[param, t] : params) {
        ValueId v = f.newValue(t);
        f.params.push_back(v);
        env_[param] = v;
      }
      ValueId r = value(e);
      f.resultTypes.push_back(f.valueTypes[r]);
      Op ret = make(OpKind::Return, {r});
      ret.loc = location(e.span);
      f.ops.push_back(std::move(ret));
    } catch (const Fail &) {
      fn_ = nullptr;
      return std::nullopt;
    }
    fn_ = nullptr;
    TensorType result = f.resultTypes[0];
    module_.functions.push_back(std::move(f));
    return result;
  }
  Module &module() { return module_; }

private:
  //===-- Instantiation ----------------------------------------------------===//

  const FunctionDecl *findFunction(const std::string &name) const {
    for (const FunctionDecl &f : program_.functions)
      if (f.name == name)
        return &f;
    return nullptr;
  }

  const sema::FunctionSig &sig(const FunctionDecl &fn) const { return checked_.functions.at(fn.name); }

  static bool isDimParam(const sema::FunctionSig &s, const std::string &v) {
    return std::find(s.dimParams.begin(), s.dimParams.end(), v) != s.dimParams.end();
  }
  std::set<std::string> shapeVariables(const FunctionDecl &fn) const {
    std::set<std::string> vars(sig(fn).dimParams.begin(), sig(fn).dimParams.end());
    for (const sema::Type &t : sig(fn).params)
      for (const sema::Dim &d : t.dims)
        for (const std::string &v : d.variables())
          vars.insert(v);
    return vars;
  }

  std::string instantiate(const FunctionDecl &fn, const std::map<std::string, int64_t> &bindings, Span site,
                          bool entry) {
    std::string name = fn.name;
    if (!entry)
      for (const auto &[var, value] : bindings)
        name += "." + var + std::to_string(value);
    if (built_.count(name))
      return name;
    if (inProgress_.count(name)) {
      diags_.error(code::E0403, site, "`" + fn.name + "` calls itself: recursive tensor functions cannot be "
                                                      "instantiated");
      throw Fail{};
    }
    const sema::FunctionSig &s = sig(fn);
    std::vector<std::string> missing; // every one at once, in name order
    for (const std::string &v : shapeVariables(fn))
      if (!bindings.count(v))
        missing.push_back(v);
    if (!missing.empty()) {
      std::string names, example;
      for (size_t i = 0; i < missing.size(); ++i) {
        names += std::string(i == 0 ? "" : i + 1 == missing.size() ? " and " : ", ") + "`" + missing[i] + "`";
        example += (i ? keywordSizes_ ? ", " : "," : "") + missing[i] + "=8";
      }
      bool allParams = std::all_of(missing.begin(), missing.end(), [&](const std::string &v) { return isDimParam(s, v); });
      bool noParams = std::none_of(missing.begin(), missing.end(), [&](const std::string &v) { return isDimParam(s, v); });
      std::string what = allParams ? "dimension parameter" : noParams ? "shape variable" : "shape variable or dimension parameter";
      diags_.error(code::E0400, site, "no size for " + what + (missing.size() > 1 ? "s " : " ") + names + " of `" + fn.name + "`")
          .help("give every shape variable a size, e.g. " +
                (keywordSizes_ ? example + (missing.size() > 1 ? " as keyword arguments" : " as a keyword argument")
                               : "--bind " + example));
      throw Fail{};
    }
    for (size_t i = 0; i < s.refinements.size(); ++i) {
      const sema::Comparison &c = s.refinements[i];
      std::optional<int64_t> l = c.lhs.evaluate(bindings), r = c.rhs.evaluate(bindings);
      bool holds = l && r;
      if (holds) {
        switch (c.rel) {
        case sema::Rel::Eq: holds = *l == *r; break;
        case sema::Rel::Ne: holds = *l != *r; break;
        case sema::Rel::Lt: holds = *l < *r; break;
        case sema::Rel::Le: holds = *l <= *r; break;
        case sema::Rel::Gt: holds = *l > *r; break;
        case sema::Rel::Ge: holds = *l >= *r; break;
        }
      }
      if (!holds) {
        std::string values;
        for (const auto &[var, value] : bindings)
          values += (values.empty() ? "" : ", ") + var + " = " + std::to_string(value);
        diags_.error(code::E0401, site, "`" + fn.name + "` requires " + c.str() + ", which does not hold for " + values)
            .note(s.refinementSpans[i], "required here");
        throw Fail{};
      }
    }
    inProgress_.insert(name);
    // Save the enclosing instantiation's state.
    Function *savedFn = fn_;
    auto savedEnv = std::move(env_);
    auto savedBindings = std::move(bindings_);
    env_.clear();
    bindings_ = bindings;

    Function f;
    f.name = name;
    f.loc = location(fn.nameSpan);
    for (const syntax::Effect &d : fn.effects) // the checker rejected unknown ones
      if (std::optional<keel::Effect> e = parseEffect(d.name))
        f.effects.insert(*e);
    fn_ = &f;
    for (size_t i = 0; i < fn.params.size(); ++i) { // a scalar parameter is a rank-0 tensor
      ValueId v = f.newValue(concrete(s.params[i], fn.params[i].nameSpan));
      f.params.push_back(v);
      env_[fn.params[i].name] = v;
    }
    if (!s.result.is(sema::Type::Kind::Tensor)) {
      diags_.error(code::E0403, fn.nameSpan, "`" + fn.name + "` does not return a tensor: only tensor functions "
                                                            "become tensor IR");
      throw Fail{};
    }
    f.resultTypes.push_back(concrete(s.result, fn.nameSpan));
    for (const StmtPtr &st : fn.body.stmts)
      statement(*st);
    if (f.ops.empty() || f.ops.back().kind != OpKind::Return) {
      diags_.error(code::E0403, fn.nameSpan, "`" + fn.name + "` must end with `return` to become tensor IR");
      throw Fail{};
    }
    fn_ = savedFn;
    env_ = std::move(savedEnv);
    bindings_ = std::move(savedBindings);
    inProgress_.erase(name);
    built_.insert(name);
    module_.functions.push_back(std::move(f));
    return name;
  }

  Location location(Span s) const {
    if (!s.valid())
      return {};
    LineColumn lc = src_.lineColumn(s.file, s.begin);
    return {std::string(src_.name(s.file)), lc.line, lc.column};
  }

  /// A checked type at the current sizes: scalars become rank-0 tensors.
  TensorType concrete(const sema::Type &t, Span at) {
    std::vector<int64_t> shape;
    for (const sema::Dim &d : t.dims) {
      std::optional<int64_t> v = d.evaluate(bindings_);
      if (!v || *v < 1) {
        diags_.error(code::E0404, at, "dimension `" + d.str() + "` is " +
                                          (v ? std::to_string(*v) : std::string("out of range")) +
                                          " at these sizes; dimensions are at least 1");
        throw Fail{};
      }
      shape.push_back(*v);
    }
    TensorType out = TensorType::make(t.scalar, shape);
    if (!out.byteCount()) {
      diags_.error(code::E0404, at, "`" + typeText(out) + "` has more " + (out.elementCount() ? "bytes" : "elements") +
                                        " than int64 can count");
      throw Fail{};
    }
    return out;
  }

  const sema::Type &checkedType(const Expr &e) const {
    static const sema::Type error;
    auto it = checked_.exprTypes.find(&e);
    return it == checked_.exprTypes.end() ? error : it->second;
  }

  TensorType typeOf(const Expr &e) { return concrete(checkedType(e), e.span); }

  //===-- Emitting ---------------------------------------------------------===//

  /// Adds `op`, whose result type is `result` (from the checker's types);
  /// one the operation's type rule (ir/Infer.h) does not give is Keel's bug.
  ValueId emit(Op op, TensorType result, Span at) {
    if (op.kind != OpKind::Call) {
      std::optional<TensorType> rule = inferred(op, result, at);
      if (!(*rule == result)) {
        diags_.internalError(at, "the tensor IR builder typed `" + opName(op) + "` " + typeText(result) +
                                     " but its type rule gives " + typeText(*rule));
        throw Fail{};
      }
    }
    return add(std::move(op), std::move(result), at);
  }
  /// Adds `op` with the type its rule gives; `target` supplies what is an
  /// attribute of the operation (Infer.h).
  ValueId emitInferred(Op op, const TensorType &target, Span at) {
    TensorType t = *inferred(op, target, at);
    return add(std::move(op), std::move(t), at);
  }
  std::optional<TensorType> inferred(const Op &op, const TensorType &target, Span at) {
    std::vector<TensorType> operands;
    for (ValueId v : op.operands)
      operands.push_back(type(v));
    Inferred rule = inferResultType(op, operands, target);
    if (!rule.type) {
      diags_.internalError(at, "the tensor IR builder made an invalid `" + opName(op) + "`: " + rule.error);
      throw Fail{};
    }
    return rule.type;
  }
  ValueId add(Op op, TensorType result, Span at) {
    ValueId v = fn_->newValue(result);
    op.results.push_back(v);
    op.resultTypes.push_back(std::move(result));
    op.loc = location(at);
    fn_->ops.push_back(std::move(op));
    return v;
  }
  static Op make(OpKind k, std::vector<ValueId> operands = {}) {
    Op op;
    op.kind = k;
    op.operands = std::move(operands);
    return op;
  }
  const TensorType &type(ValueId v) const { return fn_->valueTypes[v]; }

  ValueId constant(std::vector<uint64_t> values, TensorType t, Span at) {
    Op op = make(OpKind::Constant);
    op.constant = std::move(values);
    return emit(std::move(op), std::move(t), at);
  }

  /// `v` broadcast to `shape` (right-aligned; rank-0 scalars and size-1
  /// dimensions stretch), or `v` itself when it has that shape.
  ValueId broadcastTo(ValueId v, const std::vector<int64_t> &shape, Span at) {
    const TensorType &t = type(v);
    if (t.shape == shape)
      return v;
    Op op = make(OpKind::BroadcastInDim, {v});
    for (size_t i = 0; i < t.rank(); ++i)
      op.dims.push_back(static_cast<int64_t>(shape.size() - t.rank() + i));
    return emit(std::move(op), TensorType::make(t.dtype, shape), at);
  }

  /// NumPy's matmul as the IR's one contraction: a 1-D operand reshaped
  /// to a row [1, K] or a column [K, 1]; the batch dimensions broadcast to
  /// the result's and, past one, collapsed into one; a dot_general of
  /// [B, M, K] x [B, K, N] (or [M, K] x [K, N]); the result reshaped to the
  /// checker's shape.
  /// A call's `order:` (the checker admitted `sequential` or `tree`), else
  /// the request's default.
  SumOrder orderOf(const CallExpr &c) const {
    for (const syntax::Arg &a : c.args)
      if (a.name == "order")
        if (auto *n = a.value->as<NameExpr>())
          if (std::optional<SumOrder> o = parseSumOrder(n->name))
            return *o;
    return defaultOrder_;
  }

  ValueId matmul(ValueId l, ValueId r, const TensorType &result, SumOrder order, Span at) {
    auto reshaped = [&](ValueId v, std::vector<int64_t> shape) {
      if (type(v).shape == shape)
        return v;
      return emit(make(OpKind::Reshape, {v}), TensorType::make(type(v).dtype, std::move(shape)), at);
    };
    std::vector<int64_t> ls = type(l).shape, rs = type(r).shape;
    if (ls.size() == 1)
      l = reshaped(l, {1, ls[0]});
    if (rs.size() == 1)
      r = reshaped(r, {rs[0], 1});
    ls = type(l).shape;
    rs = type(r).shape;
    int64_t m = ls[ls.size() - 2], k = ls.back(), n = rs.back();
    size_t lb = ls.size() - 2, rb = rs.size() - 2, nb = std::max(lb, rb);
    std::vector<int64_t> batch(nb, 1);
    for (size_t i = 0; i < nb; ++i) {
      int64_t x = i + lb >= nb ? ls[i + lb - nb] : 1, y = i + rb >= nb ? rs[i + rb - nb] : 1;
      batch[i] = x == 1 ? y : x;
    }
    int64_t volume = 1;
    for (int64_t b : batch)
      volume *= b;
    auto operand = [&](ValueId v, int64_t rows, int64_t cols) {
      std::vector<int64_t> full = batch;
      full.push_back(rows);
      full.push_back(cols);
      v = broadcastTo(v, full, at);
      return nb > 1 ? reshaped(v, {volume, rows, cols}) : v;
    };
    l = operand(l, m, k);
    r = operand(r, k, n);
    Op op = make(OpKind::DotGeneral, {l, r});
    std::vector<int64_t> shape = {m, n};
    if (nb > 0) {
      op.lhsBatch = {0};
      op.rhsBatch = {0};
      op.lhsContract = {2};
      op.rhsContract = {1};
      shape.insert(shape.begin(), nb > 1 ? volume : batch[0]);
    } else {
      op.lhsContract = {1};
      op.rhsContract = {0};
    }
    op.acc = result.dtype;
    op.order = order;
    ValueId out = emit(std::move(op), TensorType::make(result.dtype, shape), at);
    return reshaped(out, result.shape);
  }

  ValueId convertTo(ValueId v, DType d, Span at) {
    if (type(v).dtype == d)
      return v;
    TensorType t = type(v);
    t.dtype = d;
    return emit(make(OpKind::Convert, {v}), t, at);
  }

  [[noreturn]] void unsupported(Span at, const std::string &what) {
    diags_.error(code::E0403, at, what + " cannot be built into tensor IR")
        .note("tensor functions are straight-line: `let`, tensor operations and `return`");
    throw Fail{};
  }

  //===-- Statements -------------------------------------------------------===//

  void statement(const Stmt &s) {
    switch (s.kind) {
    case StmtKind::Let: {
      auto &l = *s.as<LetStmt>();
      ValueId v = value(*l.init);
      env_[l.name] = v;
      return;
    }
    case StmtKind::Return: {
      auto &r = *s.as<ReturnStmt>();
      if (!r.value)
        unsupported(s.span, "`return` without a value");
      ValueId v = value(*r.value);
      Op op = make(OpKind::Return, {v});
      op.loc = location(s.span);
      fn_->ops.push_back(std::move(op));
      return;
    }
    case StmtKind::Block:
      for (const StmtPtr &inner : s.as<BlockStmt>()->block.stmts)
        statement(*inner);
      return;
    case StmtKind::Assign: unsupported(s.span, "assignment");
    case StmtKind::If: unsupported(s.span, "`if`");
    case StmtKind::For: unsupported(s.span, "`for`");
    case StmtKind::While: unsupported(s.span, "`while`");
    case StmtKind::Loop: unsupported(s.span, "`loop`");
    case StmtKind::Break:
    case StmtKind::Continue: unsupported(s.span, "`break` and `continue`");
    case StmtKind::Assert: unsupported(s.span, "`assert`");
    case StmtKind::Expr: unsupported(s.span, "an expression statement");
    }
  }

  //===-- Expressions ------------------------------------------------------===//

  ValueId value(const Expr &e) {
    switch (e.kind) {
    case ExprKind::Int: {
      auto &i = *e.as<IntExpr>();
      return intLiteral(i, false, e);
    }
    case ExprKind::Float: return floatLiteral(*e.as<FloatExpr>(), e);
    case ExprKind::Bool: return constant({e.as<BoolExpr>()->value ? 1u : 0u}, TensorType::make(DType::Bool, {}), e.span);
    case ExprKind::String: unsupported(e.span, "a string");
    case ExprKind::Name: {
      auto &n = *e.as<NameExpr>();
      if (auto it = env_.find(n.name); it != env_.end())
        return it->second;
      if (auto it = bindings_.find(n.name); it != bindings_.end()) // a shape variable read as an int
        return constant({static_cast<uint64_t>(it->second)}, TensorType::make(DType::I64, {}), e.span);
      unsupported(e.span, "`" + n.name + "`");
    }
    case ExprKind::Unary: {
      auto &u = *e.as<UnaryExpr>();
      bool negate = operatorOf(u).kind == ElementOperator::Kind::Negate; // else Not
      if (negate) {
        if (auto *i = u.operand->as<IntExpr>())
          return intLiteral(*i, true, e);
        if (auto *f = u.operand->as<FloatExpr>())
          return floatLiteral(*f, e); // the checker rounded the negated value
      }
      ValueId v = value(*u.operand);
      Op op = make(OpKind::Unary, {v});
      op.unary = negate ? UnaryCode::Neg : UnaryCode::Not;
      return emit(std::move(op), type(v), e.span);
    }
    case ExprKind::Binary: return binary(*e.as<BinaryExpr>());
    case ExprKind::Cast: {
      auto &c = *e.as<CastExpr>();
      return convertTo(value(*c.operand), typeOf(e).dtype, e.span);
    }
    case ExprKind::Call: return call(*e.as<CallExpr>());
    case ExprKind::Index: unsupported(e.span, "indexing one element");
    case ExprKind::Array: unsupported(e.span, "an array");
    }
    unsupported(e.span, "this expression");
  }

  ValueId intLiteral(const IntExpr &i, bool negative, const Expr &whole) {
    TensorType t = typeOf(whole);
    uint64_t magnitude = 0;
    std::from_chars(i.text.data(), i.text.data() + i.text.size(), magnitude);
    int64_t v = negative ? static_cast<int64_t>(uint64_t{0} - magnitude) : static_cast<int64_t>(magnitude);
    return constant({encodeInteger(v, t.dtype)}, t, whole.span);
  }

  ValueId floatLiteral(const FloatExpr &f, const Expr &whole) {
    TensorType t = typeOf(whole);
    auto it = checked_.floatLiterals.find(&f);
    if (it == checked_.floatLiterals.end()) {
      diags_.internalError(whole.span, "a float literal has no encoding from the checker");
      throw Fail{};
    }
    return constant({it->second}, t, whole.span);
  }

  /// What the checker resolved an operator expression to.
  const ElementOperator &operatorOf(const Expr &e) {
    auto found = checked_.operators.find(&e);
    if (found == checked_.operators.end()) {
      diags_.internalError(e.span, "the checker recorded no operator for this expression");
      throw Fail{};
    }
    return found->second;
  }

  ValueId binary(const BinaryExpr &b) {
    TensorType result = typeOf(b);
    ValueId l = value(*b.lhs), r = value(*b.rhs);
    // Broadcasting sugar, made explicit.
    l = broadcastTo(l, result.shape, b.lhs->span);
    r = broadcastTo(r, result.shape, b.rhs->span);
    const ElementOperator &what = operatorOf(b);
    if (what.kind == ElementOperator::Kind::Compare) {
      Op op = make(OpKind::Compare, {l, r});
      op.compare = what.compare;
      return emit(std::move(op), result, b.span);
    }
    if (what.kind == ElementOperator::Kind::Negate || what.kind == ElementOperator::Kind::Not) {
      diags_.internalError(b.span, "a binary expression resolved to a prefix operator");
      throw Fail{};
    }
    Op op = make(OpKind::Binary, {l, r});
    // `&&` and `||` on pred tensors: elementwise and / or (nothing to skip).
    op.binary = what.kind == ElementOperator::Kind::LogicalAnd  ? BinaryCode::And
                : what.kind == ElementOperator::Kind::LogicalOr ? BinaryCode::Or
                                                                : what.binary;
    return emit(std::move(op), result, b.span);
  }

  const Expr *named(const CallExpr &c, const char *name) const {
    for (const Arg &a : c.args)
      if (a.name == name)
        return a.value.get();
    return nullptr;
  }
  std::vector<const Expr *> positional(const CallExpr &c) const {
    std::vector<const Expr *> out;
    for (const Arg &a : c.args)
      if (a.name.empty())
        out.push_back(a.value.get());
    return out;
  }
  static int64_t intOf(const Expr &e) {
    int64_t v = 0;
    if (auto *i = e.as<IntExpr>())
      std::from_chars(i->text.data(), i->text.data() + i->text.size(), v);
    return v;
  }
  /// A dimension written as an expression, at the current sizes.
  int64_t dimValue(const Expr &e) {
    if (auto *i = e.as<IntExpr>())
      return intOf(*i);
    if (auto *n = e.as<NameExpr>())
      return bindings_.at(n->name);
    if (auto *u = e.as<UnaryExpr>())
      return -dimValue(*u->operand);
    if (auto *b = e.as<BinaryExpr>()) {
      int64_t l = dimValue(*b->lhs), r = dimValue(*b->rhs);
      switch (b->op) {
      case Tok::Plus: return l + r;
      case Tok::Minus: return l - r;
      case Tok::Star: return l * r;
      case Tok::Slash: return l / r - ((l % r != 0 && (l < 0) != (r < 0)) ? 1 : 0);
      case Tok::Percent: return l - r * (l / r - ((l % r != 0 && (l < 0) != (r < 0)) ? 1 : 0));
      default: break;
      }
    }
    return 0;
  }
  /// An axis as the checker counted it (a negative one from the end).
  int64_t axisOf(const Expr &e) {
    auto found = checked_.axes.find(&e);
    if (found == checked_.axes.end()) {
      diags_.internalError(e.span, "the checker recorded no axis here");
      throw Fail{};
    }
    return static_cast<int64_t>(found->second);
  }
  std::vector<int64_t> axesOf(const CallExpr &c) {
    std::vector<int64_t> axes;
    if (const Expr *a = named(c, "axis")) {
      if (auto *list = a->as<ArrayExpr>())
        for (const ExprPtr &x : list->elements)
          axes.push_back(axisOf(*x));
      else
        axes.push_back(axisOf(*a));
    }
    std::sort(axes.begin(), axes.end());
    return axes;
  }

  /// A call: of a user function, or of a built-in, built as its row of
  /// keel/sema/Builtins.def says (its family, and the IR it becomes).
  ValueId call(const CallExpr &c) {
    if (const FunctionDecl *fn = findFunction(c.callee))
      return userCall(c, *fn);
    auto found = checked_.builtinCalls.find(&c);
    if (found == checked_.builtinCalls.end())
      unsupported(c.span, "`" + c.callee + "`");
    const sema::BuiltinInfo &info = sema::builtinInfo(found->second);
    std::optional<Becomes> ir = becomes(info.id);
    TensorType result = typeOf(c);
    std::vector<const Expr *> args = positional(c);
    using F = sema::BuiltinFamily;
    switch (info.family) {
    case F::Unary: {
      Op op = make(OpKind::Unary, {value(*args[0])});
      op.unary = ir->unary;
      return emit(std::move(op), result, c.span);
    }
    case F::Binary: {
      ValueId l = broadcastTo(value(*args[0]), result.shape, args[0]->span);
      ValueId r = broadcastTo(value(*args[1]), result.shape, args[1]->span);
      Op op = make(OpKind::Binary, {l, r});
      op.binary = ir->binary;
      return emit(std::move(op), result, c.span);
    }
    case F::Select: {
      ValueId cond = broadcastTo(value(*args[0]), result.shape, args[0]->span);
      ValueId a = broadcastTo(value(*args[1]), result.shape, args[1]->span);
      ValueId b = broadcastTo(value(*args[2]), result.shape, args[2]->span);
      return emit(make(OpKind::Select, {cond, a, b}), result, c.span);
    }
    case F::Matmul: return matmul(value(*args[0]), value(*args[1]), result, orderOf(c), c.span);
    case F::Reduce: case F::ReduceIndex: case F::ReduceBool:
      return reduce(c, ir->combiner, info.id == sema::BuiltinId::Mean, value(*args[0]), result);
    case F::Transpose: {
      Op op = make(OpKind::Transpose, {value(*args[0])});
      for (const ExprPtr &x : args[1]->as<ArrayExpr>()->elements)
        op.dims.push_back(axisOf(*x));
      return emit(std::move(op), result, c.span);
    }
    case F::Reshape: {
      ValueId v = value(*args[0]);
      if (type(v).elementCount() != result.elementCount()) {
        diags_.error(code::E0402, c.span, "the reshape from " + typeText(type(v)) + " to " + typeText(result) +
                                              " changes the number of elements at these sizes")
            .note("the type checker assumed the volumes equal; at these sizes they are not");
        throw Fail{};
      }
      return emit(make(OpKind::Reshape, {v}), result, c.span);
    }
    case F::Broadcast: return broadcastTo(value(*args[0]), result.shape, c.span);
    case F::Slice: {
      ValueId v = value(*args[0]);
      Op op = make(OpKind::Slice, {v});
      size_t axis = static_cast<size_t>(axisOf(*named(c, "axis")));
      for (size_t d = 0; d < type(v).rank(); ++d) {
        op.dims.push_back(d == axis ? dimValue(*named(c, "start")) : 0);
        op.limits.push_back(d == axis ? dimValue(*named(c, "stop")) : type(v).shape[d]);
      }
      return emit(std::move(op), result, c.span);
    }
    case F::Concat: {
      Op op = make(OpKind::Concatenate);
      for (const Expr *a : args)
        op.operands.push_back(value(*a));
      op.axis = axisOf(*named(c, "axis"));
      return emit(std::move(op), result, c.span);
    }
    case F::Full: return broadcastTo(value(*args[1]), result.shape, c.span); // the checker typed the value
    case F::Zeros: return constant({0}, result, c.span);
    case F::Iota: {
      Op op = make(OpKind::Iota);
      op.axis = axisOf(*named(c, "axis"));
      return emit(std::move(op), result, c.span);
    }
    case F::TensorLit: {
      std::vector<uint64_t> values;
      flatten(*args[0], result.dtype, values);
      return constant(std::move(values), result, c.span);
    }
    case F::Random: {
      // Its values are made here, at compile time, and become part of the
      // program: bounded, so that a large request is an error, not an
      // exhausted machine.
      if (*result.elementCount() > kMaxRandomElements) {
        diags_.error(code::E0404, c.span,
                     "`random` would make " + std::to_string(*result.elementCount()) +
                         " values at compile time; a constant holds at most " + std::to_string(kMaxRandomElements))
            .note("large random inputs belong at run time: `keel run --entry F --arg x=random:SEED`");
        throw Fail{};
      }
      const Expr *seed = named(c, "seed");
      return constant(randomEncodings(seed ? static_cast<uint64_t>(intOf(*seed)) : 0,
                                   result.elementCount().value_or(0), result.dtype),
                      result, c.span);
    }
    case F::Print: break;
    }
    unsupported(c.span, "`" + c.callee + "`");
  }

  ValueId reduce(const CallExpr &c, Combiner combiner, bool mean, ValueId input, const TensorType &result) {
    const TensorType in = type(input); // a copy: emit() below grows the value table
    std::vector<int64_t> axes = axesOf(c);
    bool lowPrecision = isFloatType(in.dtype) && in.dtype != DType::F32 && in.dtype != DType::F64;
    DType acc = result.dtype;
    switch (combiner) {
    case Combiner::Sum: case Combiner::Prod:
      acc = result.dtype; // the accumulator the checker chose
      break;
    case Combiner::Max: case Combiner::Min: case Combiner::ArgMax: case Combiner::ArgMin:
      acc = lowPrecision ? DType::F32 : in.dtype; // compares exactly
      break;
    case Combiner::And: case Combiner::Or:
      acc = DType::Bool;
      break;
    }
    Op op = make(OpKind::Reduce, {input});
    op.combiner = combiner;
    op.dims = axes;
    op.acc = acc;
    if (combiner == Combiner::Sum) // sum and mean; the other reductions' results do not depend on an order
      op.order = orderOf(c);
    ValueId v = emitInferred(std::move(op), TensorType::make(result.dtype, {}), c.span);
    std::vector<int64_t> reducedShape = type(v).shape;
    if (mean) {
      int64_t count = 1;
      for (int64_t a : axes)
        count *= in.shape[static_cast<size_t>(a)];
      ValueId n = constant({encodeInteger(count, result.dtype)}, TensorType::make(result.dtype, {}), c.span);
      Op div = make(OpKind::Binary, {v, broadcastTo(n, reducedShape, c.span)});
      div.binary = BinaryCode::Div;
      v = emit(std::move(div), TensorType::make(result.dtype, reducedShape), c.span);
    }
    if (result.shape != reducedShape) // keepdims
      v = emit(make(OpKind::Reshape, {v}), result, c.span);
    return v;
  }

  void flatten(const Expr &e, DType t, std::vector<uint64_t> &out) {
    if (auto *list = e.as<ArrayExpr>()) {
      for (const ExprPtr &x : list->elements)
        flatten(*x, t, out);
      return;
    }
    bool negative = false;
    const Expr *leaf = &e;
    if (auto *u = e.as<UnaryExpr>(); u && u->op == Tok::Minus) {
      negative = true;
      leaf = u->operand.get();
    }
    std::string text = (negative ? "-" : "");
    if (auto *f = leaf->as<FloatExpr>())
      text += f->text;
    else if (auto *i = leaf->as<IntExpr>())
      text += i->text;
    else if (auto *b = leaf->as<BoolExpr>())
      text = b->value ? "1" : "0";
    else
      unsupported(e.span, "a `tensor` element that is not a literal");
    if (auto f = sema::formatOf(t)) {
      out.push_back(fp::fromDecimal(*f, text).value_or(0)); // one rounding from the decimal
      return;
    }
    if (leaf->as<FloatExpr>())
      unsupported(e.span, "a float literal in integer `tensor` data");
    int64_t v = 0;
    std::from_chars(text.data(), text.data() + text.size(), v);
    out.push_back(t == DType::Bool ? (v != 0) : encodeInteger(v, t));
  }

  ValueId userCall(const CallExpr &c, const FunctionDecl &fn) {
    const sema::FunctionSig &s = sig(fn);
    std::vector<ValueId> args;
    std::map<std::string, int64_t> bindings;
    // The dimension arguments, at the caller's sizes; then the sizes of the
    // parameters' lone shape variables.
    if (auto found = checked_.dimArguments.find(&c); found != checked_.dimArguments.end())
      for (const auto &[name, dim] : found->second) {
        std::optional<int64_t> size = dim.evaluate(bindings_);
        if (!size || *size < 0) {
          diags_.error(code::E0401, c.span, "the dimension argument `" + name + ": " + dim.str() + "` of `" +
                                                fn.name + "` is " + (size ? std::to_string(*size) : "undefined") +
                                                " here, not a size");
          throw Fail{};
        }
        bindings.emplace(name, *size);
      }
    std::vector<std::optional<std::vector<int64_t>>> shapes;
    for (const Arg &a : c.args) {
      if (!a.name.empty())
        continue; // a dimension argument
      ValueId v = value(*a.value);
      args.push_back(v);
      shapes.push_back(type(v).shape);
    }
    for (size_t i = 0; i < shapes.size() && i < s.params.size(); ++i)
      for (size_t d = 0; d < s.params[i].dims.size(); ++d)
        if (std::optional<std::string> var = loneVariable(s.params[i].dims[d]))
          bindings.emplace(*var, (*shapes[i])[d]);
    readDividends(s, shapes, bindings);
    std::string callee = instantiate(fn, bindings, c.span, false);
    Op op = make(OpKind::Call, args);
    op.callee = callee;
    return emit(std::move(op), typeOf(c), c.span);
  }

  const SourceManager &src_;
  const Program &program_;
  const sema::CheckedProgram &checked_;
  DiagnosticEngine &diags_;
  Module module_;
  std::set<std::string> built_, inProgress_;
  Function *fn_ = nullptr;
  std::map<std::string, ValueId> env_;
  std::map<std::string, int64_t> bindings_;
  SumOrder defaultOrder_;
  bool keywordSizes_ = false; ///< BuildRequest::keywordSizes
};

} // namespace

std::optional<Module> build(const SourceManager &sources, const Program &program, const sema::CheckedProgram &checked,
                            const BuildRequest &request, DiagnosticEngine &diags) {
  return Builder(sources, program, checked, diags, request.defaultOrder).run(request);
}

struct ExpressionBuilder::Impl {
  Builder builder;
};

ExpressionBuilder::ExpressionBuilder(const SourceManager &sources, const syntax::Program &program,
                                     const sema::CheckedProgram &checked, DiagnosticEngine &diags,
                                     ir::SumOrder defaultOrder)
    : impl_(new Impl{Builder(sources, program, checked, diags, defaultOrder)}) {}
ExpressionBuilder::~ExpressionBuilder() = default;

std::optional<TensorType> ExpressionBuilder::build(const syntax::Expr &e,
                                                   const std::vector<std::pair<std::string, TensorType>> &params,
                                                   const std::string &name) {
  return impl_->builder.expression(e, params, name);
}

Module &ExpressionBuilder::module() { return impl_->builder.module(); }

} // namespace keel::instantiate
