//===- LowerScalar.cpp - Checked scalar functions and tests to the loop IR ===//
#include "keel/instantiate/LowerScalar.h"

#include "keel/autodiff/Gradient.h"

#include "keel/instantiate/Becomes.h"
#include "keel/instantiate/Builder.h"
#include "keel/exits/cpu/Elements.h"
#include "keel/support/Codes.h"

#include <algorithm>
#include <charconv>
#include <map>
#include <set>
#include <utility>

namespace keel::instantiate {

using namespace loop;
using cpu::binaryElement;
using cpu::storageType;
using cpu::unaryElement;
using namespace syntax;
// Unqualified, these are the loop IR's (syntax::Expr and syntax::Stmt are
// written out).
using loop::Expr;
using loop::ExprPtr;
using loop::Stmt;
using loop::StmtPtr;
using sema::Scalar;

namespace {

struct Fail {};

/// The loop IR type of a checked scalar type (i4 is computed in i8).
Type typeOf(const sema::Type &t) {
  if (t.is(sema::Type::Kind::Void))
    return Type::Void;
  return loop::typeOf(t.scalar == Scalar::I4 ? Scalar::I8 : t.scalar);
}

bool isScalarSignature(const sema::FunctionSig &s) {
  if (!s.dimParams.empty()) // sizes tensors: the checker refuses them elsewhere
    return false;
  for (const sema::Type &t : s.params)
    if (!t.is(sema::Type::Kind::Scalar))
      return false;
  return s.result.is(sema::Type::Kind::Scalar) || s.result.is(sema::Type::Kind::Void);
}

/// The names an expression reads (its free variables, in first-use order).
void namesIn(const syntax::Expr &e, std::vector<const NameExpr *> &out) {
  switch (e.kind) {
  case ExprKind::Name: out.push_back(e.as<NameExpr>()); return;
  case ExprKind::Unary: namesIn(*e.as<UnaryExpr>()->operand, out); return;
  case ExprKind::Binary:
    namesIn(*e.as<BinaryExpr>()->lhs, out);
    namesIn(*e.as<BinaryExpr>()->rhs, out);
    return;
  case ExprKind::Cast: namesIn(*e.as<CastExpr>()->operand, out); return;
  case ExprKind::Call:
    for (const Arg &a : e.as<CallExpr>()->args)
      namesIn(*a.value, out);
    return;
  case ExprKind::Index:
    namesIn(*e.as<IndexExpr>()->base, out);
    for (const syntax::ExprPtr &i : e.as<IndexExpr>()->indices)
      namesIn(*i, out);
    return;
  case ExprKind::Array:
    for (const syntax::ExprPtr &i : e.as<ArrayExpr>()->elements)
      namesIn(*i, out);
    return;
  case ExprKind::String:
    for (const StringPart &p : e.as<StringExpr>()->parts)
      if (p.expr)
        namesIn(*p.expr, out);
    return;
  case ExprKind::Int: case ExprKind::Float: case ExprKind::Bool: return;
  }
}

class Lowerer {
public:
  Lowerer(const SourceManager &sources, const Program &program, const sema::CheckedProgram &checked,
          DiagnosticEngine &diags, ir::SumOrder defaultOrder)
      : src_(sources), checked_(checked), diags_(diags), tensors_(sources, program, checked, diags, defaultOrder) {}

  Module module;

  void function(const FunctionDecl &fn, const sema::FunctionSig &sig) {
    Function f;
    f.name = fn.name;
    f.loc = location(fn.nameSpan);
    f.checksStack = true;
    f.result = typeOf(sig.result);
    begin(f);
    for (size_t i = 0; i < fn.params.size(); ++i)
      scopes_.back()[fn.params[i].name] = newSlot(typeOf(sig.params[i]));
    f_->params = fn.params.size();
    block(fn.body, f_->body);
    end();
    module.functions.push_back(std::move(f));
  }

  void test(const TestDecl &t, size_t index) {
    Function f;
    f.name = "test." + std::to_string(index);
    f.loc = location(t.nameSpan);
    f.checksStack = true;
    begin(f);
    block(t.body, f_->body);
    end();
    module.tests.push_back({t.name, f.name});
    module.functions.push_back(std::move(f));
  }

  /// The tensor functions scalar code uses (built, not yet verified).
  ir::Module takeTensors() { return std::move(tensors_.module()); }

  /// The scalar functions called by what was lowered since the last call,
  /// in call order (repeats included).
  std::vector<std::string> takeCalled() { return std::exchange(called_, {}); }

private:
  void begin(Function &f) {
    f_ = &f;
    scopes_.assign(1, {});
    tensorVars_.clear();
    expressions_ = 0; // names are the function's: the same whichever functions are lowered
  }
  /// Tensor variables start null and are freed when the function ends.
  void end() {
    std::vector<StmtPtr> init;
    for (Slot v : tensorVars_) {
      auto st = std::make_unique<Stmt>();
      st->kind = Stmt::Kind::Assign;
      st->slot = v;
      st->value = makeConst(Type::Ptr, 0);
      init.push_back(std::move(st));
    }
    freeTensorVariables(f_->body);
    f_->body.insert(f_->body.begin(), std::make_move_iterator(init.begin()), std::make_move_iterator(init.end()));
  }
  void freeTensorVariables(std::vector<StmtPtr> &out) {
    for (Slot v : tensorVars_)
      out.push_back(makeFree(v));
  }
  bool isTensor(const syntax::Expr &e) const {
    auto it = checked_.exprTypes.find(&e);
    return it != checked_.exprTypes.end() && it->second.is(sema::Type::Kind::Tensor);
  }
  std::optional<Slot> find(const std::string &name) const {
    for (auto it = scopes_.rbegin(); it != scopes_.rend(); ++it)
      if (auto found = it->find(name); found != it->end())
        return found->second;
    return std::nullopt;
  }

  //===-- Tensors in scalar code -------------------------------------------===//

  /// Computes tensor expression `e` into fresh memory (a Ptr slot the
  /// caller owns): `e` becomes a tensor IR function of the variables it
  /// reads, run by the CPU oracle; scalars travel as one-element buffers.
  Slot computeTensor(const syntax::Expr &e) { return computeTensors(e, {}, e.span).front(); }

  /// computeTensor, for a call whose value and gradients with respect to
  /// the variables `wrt` (its arguments) are asked for: the expression's
  /// function becomes its value-and-gradient function (docs/autodiff.md),
  /// and each of its results gets fresh memory; `wrt` empty: the value.
  std::vector<Slot> computeTensors(const syntax::Expr &e, const std::vector<std::string> &wrt, Span at) {
    std::vector<const NameExpr *> names;
    namesIn(e, names);
    std::vector<std::pair<std::string, ir::TensorType>> params;
    std::vector<Slot> slots;
    for (const NameExpr *n : names) {
      std::optional<Slot> slot = find(n->name);
      if (!slot || std::find(slots.begin(), slots.end(), *slot) != slots.end())
        continue; // not a variable (a shape variable, a function), or seen
      if (auto t = tensorTypes_.find(*slot); t != tensorTypes_.end())
        params.push_back({n->name, t->second});
      else
        params.push_back({n->name, ir::TensorType::make(checked_.exprTypes.at(n).scalar, {})});
      slots.push_back(*slot);
    }
    std::string name = f_->name + ".tensor" + std::to_string(expressions_++);
    std::optional<ir::TensorType> result = tensors_.build(e, params, name);
    if (!result)
      throw Fail{};
    std::vector<ir::TensorType> results{*result};
    if (!wrt.empty()) {
      std::vector<size_t> indices;
      for (const std::string &v : wrt) {
        auto p = std::find_if(params.begin(), params.end(), [&](const auto &q) { return q.first == v; });
        size_t i = static_cast<size_t>(p - params.begin());
        if (p == params.end() || std::find(indices.begin(), indices.end(), i) != indices.end()) {
          diags_.error(code::E0600, at, "`" + v + "` is the argument of two differentiated parameters (or of none): "
                                        "give each its own variable");
          throw Fail{};
        }
        indices.push_back(i);
      }
      if (std::optional<autodiff::Problem> problem = autodiff::valueAndGradient(tensors_.module(), name, indices)) {
        Span where = problem->loc.known() ? src_.spanAt(problem->loc.file, problem->loc.line, problem->loc.column) : at;
        diags_.error(code::E0600, where.file == kNoFile ? at : where, problem->message);
        throw Fail{};
      }
      results = tensors_.module().find(name)->resultTypes;
    }
    std::vector<ExprPtr> args;
    std::vector<Slot> scalarBuffers;
    for (size_t i = 0; i < slots.size(); ++i) {
      if (tensorTypes_.count(slots[i])) {
        args.push_back(makeVar(slots[i], Type::Ptr));
        continue;
      }
      Slot buffer = allocate(params[i].second, e.span);
      auto st = std::make_unique<Stmt>();
      st->kind = Stmt::Kind::Store;
      st->slot = buffer;
      st->index = makeConst(Type::I64, 0);
      st->value = makeCast(makeVar(slots[i], f_->slots[slots[i]]), storageType(params[i].second.dtype));
      out_->push_back(std::move(st));
      args.push_back(makeVar(buffer, Type::Ptr));
      scalarBuffers.push_back(buffer);
    }
    std::vector<Slot> outs;
    for (const ir::TensorType &t : results) {
      outs.push_back(allocate(t, e.span));
      args.push_back(makeVar(outs.back(), Type::Ptr));
    }
    auto call = std::make_unique<Stmt>();
    call->kind = Stmt::Kind::Eval;
    call->value = makeCall(name, Type::Void, std::move(args));
    out_->push_back(std::move(call));
    for (Slot b : scalarBuffers)
      out_->push_back(makeFree(b));
    return outs;
  }

  /// A Ptr slot holding fresh memory for a tensor of type `t`.
  Slot allocate(const ir::TensorType &t, Span at) {
    Slot slot = newSlot(Type::Ptr);
    tensorTypes_[slot] = t;
    auto st = std::make_unique<Stmt>();
    st->kind = Stmt::Kind::Assign;
    st->slot = slot;
    st->value = makeAlloc(*t.elementCount() * (typeBits(storageType(t.dtype)) / 8), location(at));
    out_->push_back(std::move(st));
    return slot;
  }

  /// A tensor to read: a variable's own buffer, or a temporary freed after
  /// the current statement.
  Slot tensorOperand(const syntax::Expr &e) {
    if (auto *n = e.as<NameExpr>())
      if (std::optional<Slot> slot = find(n->name); slot && tensorTypes_.count(*slot))
        return *slot;
    Slot t = computeTensor(e);
    temps_.push_back(t);
    return t;
  }

  /// `let x = tensor` or `x = tensor`: the new value first (it may read
  /// the old), then the old one freed.
  void assignTensor(Slot variable, const syntax::Expr &value, Span at) { bindTensor(variable, computeTensor(value), at); }

  /// `variable` takes tensor `fresh` (its memory); its old one is freed.
  void bindTensor(Slot variable, Slot fresh, Span at) {
    tensorTypes_[variable] = tensorTypes_.at(fresh);
    out_->push_back(makeFree(variable));
    auto st = make(Stmt::Kind::Assign, at);
    st->slot = variable;
    st->value = makeVar(fresh, Type::Ptr);
    out_->push_back(std::move(st));
  }

  /// x[i, j]: each index checked against its dimension, then the element.
  ExprPtr element(const IndexExpr &ix, Type type) {
    Slot base = tensorOperand(*ix.base);
    const ir::TensorType &t = tensorTypes_.at(base);
    ExprPtr address;
    int64_t stride = 1;
    for (size_t d = ix.indices.size(); d-- > 0;) {
      Slot index = newSlot(Type::I64);
      auto st = make(Stmt::Kind::Assign, ix.indices[d]->span);
      st->slot = index;
      ExprPtr given = expr(*ix.indices[d]);
      bool unsignedIndex = given->type == Type::U64;
      st->value = makeCast(std::move(given), Type::I64);
      out_->push_back(std::move(st));
      auto check = make(Stmt::Kind::CheckIndex, ix.indices[d]->span);
      check->unsignedIndex = unsignedIndex;
      check->value = makeVar(index, Type::I64);
      check->extent = t.shape[d];
      check->axis = static_cast<int64_t>(d);
      out_->push_back(std::move(check));
      ExprPtr term = makeBinary(BinaryOp::Mul, makeVar(index, Type::I64), makeConst(Type::I64, static_cast<uint64_t>(stride)));
      address = address ? makeBinary(BinaryOp::Add, std::move(term), std::move(address)) : std::move(term);
      stride *= t.shape[d];
    }
    if (!address)
      address = makeConst(Type::I64, 0);
    ExprPtr value = makeLoad(storageType(t.dtype), makeVar(base, Type::Ptr), std::move(address));
    if (t.dtype == ir::DType::Bool)
      return makeCompare(CompareOp::Ne, std::move(value), makeConst(Type::U8, 0));
    return makeCast(std::move(value), type);
  }

  /// Math built-ins on scalars (exp(x), max(a, b), ...): the same element
  /// definitions as the tensor operations (the IR their table row says
  /// they become); null for other calls.
  ExprPtr scalarMath(const CallExpr &c, const syntax::Expr &e) {
    auto found = checked_.builtinCalls.find(&c);
    if (isTensor(e) || found == checked_.builtinCalls.end())
      return nullptr;
    std::optional<Becomes> ir = becomes(found->second);
    ir::DType t = checked_.exprTypes.at(&e).scalar;
    switch (sema::builtinInfo(found->second).family) {
    case sema::BuiltinFamily::Unary: return unaryElement(ir->unary, t, expr(*c.args[0].value));
    case sema::BuiltinFamily::Binary:
      return binaryElement(loop::binaryOp(ir->binary), t, expr(*c.args[0].value), expr(*c.args[1].value));
    case sema::BuiltinFamily::Select: // both evaluated, as the tensor operation
      return loop::makeSelect(expr(*c.args[0].value), expr(*c.args[1].value), expr(*c.args[2].value));
    case sema::BuiltinFamily::Matmul: case sema::BuiltinFamily::Reduce: case sema::BuiltinFamily::ReduceIndex:
    case sema::BuiltinFamily::ReduceBool: case sema::BuiltinFamily::Transpose: case sema::BuiltinFamily::Reshape:
    case sema::BuiltinFamily::Broadcast: case sema::BuiltinFamily::Slice: case sema::BuiltinFamily::Concat:
    case sema::BuiltinFamily::Full: case sema::BuiltinFamily::Zeros: case sema::BuiltinFamily::Iota:
    case sema::BuiltinFamily::TensorLit: case sema::BuiltinFamily::Random: case sema::BuiltinFamily::Print:
      return nullptr; // tensors, or print (a statement of its own)
    }
    return nullptr;
  }

  /// Frees the current statement's temporaries into `out`.
  void flushTemps(std::vector<StmtPtr> &out) {
    for (Slot t : temps_)
      out.push_back(makeFree(t));
    temps_.clear();
  }
  Slot newSlot(Type t) {
    f_->slots.push_back(t);
    return static_cast<Slot>(f_->slots.size() - 1);
  }
  Location location(Span s) const {
    if (!s.valid())
      return {};
    LineColumn lc = src_.lineColumn(s.file, s.begin);
    return {std::string(src_.name(s.file)), lc.line, lc.column};
  }
  [[noreturn]] void internal(Span at, const std::string &what) {
    diags_.internalError(at, what);
    throw Fail{};
  }
  [[noreturn]] void unsupported(Span at, const std::string &what) {
    diags_.error(code::E0500, at, what + " does not run on the CPU yet");
    throw Fail{};
  }
  Type checkedType(const syntax::Expr &e) const {
    auto it = checked_.exprTypes.find(&e);
    return it == checked_.exprTypes.end() ? Type::Void : typeOf(it->second);
  }
  Slot lookup(const std::string &name) const { return find(name).value_or(0); }

  static uint64_t integerBits(Type t, int64_t v) {
    int bits = typeBits(t);
    uint64_t u = static_cast<uint64_t>(v);
    return bits >= 64 ? u : u & ((uint64_t{1} << bits) - 1);
  }

  ExprPtr expr(const syntax::Expr &e) {
    ExprPtr out;
    Type type = checkedType(e);
    switch (e.kind) {
    case ExprKind::Int: out = intLiteral(*e.as<IntExpr>(), type, false); break;
    case ExprKind::Float: out = floatLiteral(*e.as<FloatExpr>(), type); break;
    case ExprKind::Bool: out = makeConst(Type::Bool, e.as<BoolExpr>()->value ? 1 : 0); break;
    case ExprKind::Name: {
      Slot slot = lookup(e.as<NameExpr>()->name);
      out = makeVar(slot, f_->slots[slot]);
      break;
    }
    case ExprKind::Unary: {
      auto &u = *e.as<UnaryExpr>();
      bool negate = operatorOf(u).kind == ElementOperator::Kind::Negate; // else Not
      if (negate) {
        if (auto *i = u.operand->as<IntExpr>()) {
          out = intLiteral(*i, type, true);
          break;
        }
        if (auto *f = u.operand->as<FloatExpr>()) {
          out = floatLiteral(*f, type); // already negated by the checker
          break;
        }
      }
      ExprPtr x = expr(*u.operand);
      UnaryOp op = negate ? UnaryOp::Neg : x->type == Type::Bool ? UnaryOp::Not : UnaryOp::BitNot;
      out = makeUnary(op, std::move(x));
      break;
    }
    case ExprKind::Binary: out = binary(*e.as<BinaryExpr>()); break;
    case ExprKind::Cast: {
      out = makeCast(expr(*e.as<CastExpr>()->operand), type);
      break;
    }
    case ExprKind::Call: {
      auto &c = *e.as<CallExpr>();
      if (ExprPtr math = scalarMath(c, e)) {
        out = std::move(math);
        break;
      }
      auto it = checked_.functions.find(c.callee);
      if (it == checked_.functions.end())
        unsupported(e.span, "`" + c.callee + "`");
      if (!isScalarSignature(it->second))
        unsupported(e.span, "calling the tensor function `" + c.callee + "`");
      std::vector<ExprPtr> args;
      for (const Arg &a : c.args)
        args.push_back(expr(*a.value));
      out = makeCall(c.callee, typeOf(it->second.result), std::move(args));
      called_.push_back(c.callee);
      break;
    }
    case ExprKind::Index: out = element(*e.as<IndexExpr>(), type); break;
    case ExprKind::String:
    case ExprKind::Array:
      unsupported(e.span, "this expression");
    }
    out->loc = location(e.span);
    return out;
  }

  ExprPtr intLiteral(const IntExpr &i, Type t, bool negative) {
    uint64_t magnitude = 0;
    std::from_chars(i.text.data(), i.text.data() + i.text.size(), magnitude);
    return makeConst(t, integerBits(t, static_cast<int64_t>(negative ? uint64_t{0} - magnitude : magnitude)));
  }
  ExprPtr floatLiteral(const FloatExpr &f, Type t) {
    auto it = checked_.floatLiterals.find(&f);
    return makeConst(t, it == checked_.floatLiterals.end() ? 0 : it->second);
  }

  /// What the checker resolved an operator expression to.
  const ElementOperator &operatorOf(const syntax::Expr &e) {
    auto found = checked_.operators.find(&e);
    if (found == checked_.operators.end())
      internal(e.span, "the checker recorded no operator for this expression");
    return found->second;
  }

  ExprPtr binary(const BinaryExpr &b) {
    auto out = std::make_unique<loop::Expr>();
    out->operands.push_back(expr(*b.lhs));
    out->operands.push_back(expr(*b.rhs));
    const ElementOperator &what = operatorOf(b);
    switch (what.kind) {
    case ElementOperator::Kind::Compare:
      out->kind = loop::Expr::Kind::Compare;
      out->type = Type::Bool;
      out->compare = what.compare;
      return out;
    case ElementOperator::Kind::Binary: out->binary = loop::binaryOp(what.binary); break;
    case ElementOperator::Kind::LogicalAnd: out->binary = BinaryOp::LogicalAnd; break;
    case ElementOperator::Kind::LogicalOr: out->binary = BinaryOp::LogicalOr; break;
    case ElementOperator::Kind::Negate: case ElementOperator::Kind::Not:
      internal(b.span, "a binary expression resolved to a prefix operator");
    }
    out->kind = loop::Expr::Kind::Binary;
    out->type = out->operands[0]->type;
    return out;
  }

  std::vector<TextPart> message(const syntax::Expr &e) {
    std::vector<TextPart> parts;
    if (auto *s = e.as<StringExpr>()) {
      for (const StringPart &p : s->parts)
        parts.push_back(p.expr ? value(*p.expr) : TextPart{p.text, nullptr, -1, {}});
      return parts;
    }
    parts.push_back(value(e));
    return parts;
  }
  /// A printed value: a scalar, or a tensor (by its buffer and type).
  TextPart value(const syntax::Expr &e) {
    if (!isTensor(e))
      return {"", expr(e), -1, {}};
    Slot t = tensorOperand(e);
    const ir::TensorType &type = tensorTypes_.at(t);
    return {"", makeVar(t, Type::Ptr), static_cast<int>(type.dtype), type.shape};
  }

  StmtPtr make(Stmt::Kind k, Span at) {
    auto s = std::make_unique<Stmt>();
    s->kind = k;
    s->loc = location(at);
    return s;
  }

  void block(const Block &b, std::vector<StmtPtr> &out) {
    scopes_.emplace_back();
    for (const syntax::StmtPtr &s : b.stmts)
      stmt(*s, out);
    scopes_.pop_back();
  }

  /// Lowers one statement into `out`: code that computes its tensor
  /// operands goes first, their temporaries are freed after it.
  void stmt(const syntax::Stmt &s, std::vector<StmtPtr> &out) {
    std::vector<StmtPtr> *savedOut = out_;
    std::vector<Slot> savedTemps = std::move(temps_);
    temps_.clear();
    out_ = &out;
    statement(s, out);
    flushTemps(out);
    out_ = savedOut;
    temps_ = std::move(savedTemps);
  }

  void letStatement(const LetStmt &l, const syntax::Stmt &s, std::vector<StmtPtr> &out) {
    if (!l.names.empty()) { // let (value, d1, ...) = value_and_grad(f, ..., wrt: [...])
      const auto &c = *l.init->as<syntax::CallExpr>();
      const syntax::FunctionDecl &decl = *checked_.functions.at(c.callee).decl;
      std::vector<const syntax::Expr *> positional;
      for (const syntax::Arg &a : c.args)
        if (a.name.empty())
          positional.push_back(a.value.get());
      std::vector<std::string> variables; // the checker made each a variable
      for (const std::string &p : l.wrt)
        for (size_t i = 0; i < decl.params.size(); ++i)
          if (decl.params[i].name == p)
            variables.push_back(positional[i]->as<NameExpr>()->name);
      std::vector<Slot> results = computeTensors(*l.init, variables, s.span);
      for (size_t i = 0; i < l.names.size(); ++i) {
        Slot variable = newSlot(Type::Ptr);
        tensorVars_.push_back(variable);
        scopes_.back()[l.names[i]] = variable;
        bindTensor(variable, results[i], s.span);
      }
      return;
    }
    if (isTensor(*l.init)) {
      Slot variable = newSlot(Type::Ptr);
      tensorVars_.push_back(variable);
      scopes_.back()[l.name] = variable;
      assignTensor(variable, *l.init, s.span);
      return;
    }
    ExprPtr value = expr(*l.init);
    Slot slot = newSlot(value->type);
    scopes_.back()[l.name] = slot;
    auto st = make(Stmt::Kind::Assign, s.span);
    st->slot = slot;
    st->value = std::move(value);
    out.push_back(std::move(st));
  }

  void assignStatement(const AssignStmt &a, const syntax::Stmt &s, std::vector<StmtPtr> &out) {
    Slot slot = lookup(a.name);
    if (tensorTypes_.count(slot)) {
      if (a.op != Tok::Assign)
        unsupported(s.span, "a compound assignment to a tensor (write `" + a.name + " = " + a.name + " + ...`)");
      assignTensor(slot, *a.value, s.span);
      return;
    }
    ExprPtr value = expr(*a.value);
    if (a.op != Tok::Assign) {
      auto code = checked_.compoundAssignments.find(&s);
      if (code == checked_.compoundAssignments.end())
        internal(s.span, "the checker recorded no operator for this assignment");
      auto combined = makeBinary(loop::binaryOp(code->second), makeVar(slot, f_->slots[slot]), std::move(value));
      combined->loc = location(s.span);
      value = std::move(combined);
    }
    auto st = make(Stmt::Kind::Assign, s.span);
    st->slot = slot;
    st->value = std::move(value);
    out.push_back(std::move(st));
  }

  /// while c { body }  ->  loop { if !c { break } body }
  /// (the condition's tensor temporaries are freed on both ways out).
  void whileStatement(const WhileStmt &w, const syntax::Stmt &s, std::vector<StmtPtr> &out) {
    auto st = make(Stmt::Kind::Loop, s.span);
    auto guard = make(Stmt::Kind::If, w.cond->span);
    out_ = &st->body;
    guard->value = makeUnary(UnaryOp::Not, expr(*w.cond));
    for (Slot t : temps_)
      guard->body.push_back(makeFree(t));
    guard->body.push_back(make(Stmt::Kind::Break, w.cond->span));
    st->body.push_back(std::move(guard));
    flushTemps(st->body);
    out_ = &out;
    block(w.body, st->body);
    out.push_back(std::move(st));
  }

  /// The value first, then every tensor freed, then the return.
  void returnStatement(const ReturnStmt &r, const syntax::Stmt &s, std::vector<StmtPtr> &out) {
    auto st = make(Stmt::Kind::Return, s.span);
    if (auto &v = r.value) {
      ExprPtr value = expr(*v);
      Slot result = newSlot(value->type);
      auto keep = make(Stmt::Kind::Assign, s.span);
      keep->slot = result;
      keep->value = std::move(value);
      out.push_back(std::move(keep));
      st->value = makeVar(result, f_->slots[result]);
    }
    flushTemps(out);
    freeTensorVariables(out);
    out.push_back(std::move(st));
  }

  void exprStatement(const syntax::Expr &e, const syntax::Stmt &s, std::vector<StmtPtr> &out) {
    auto *c = e.as<CallExpr>();
    if (auto it = c ? checked_.builtinCalls.find(c) : checked_.builtinCalls.end();
        it != checked_.builtinCalls.end() && it->second == sema::BuiltinId::Print) {
      auto st = make(Stmt::Kind::Print, s.span);
      if (!c->args.empty())
        st->text = message(*c->args[0].value);
      out.push_back(std::move(st));
      return;
    }
    if (isTensor(e)) { // computed for nothing but its effects: none
      tensorOperand(e);
      return;
    }
    auto st = make(Stmt::Kind::Eval, s.span);
    st->value = expr(e);
    out.push_back(std::move(st));
  }

  void statement(const syntax::Stmt &s, std::vector<StmtPtr> &out) {
    switch (s.kind) {
    case StmtKind::Let: letStatement(*s.as<LetStmt>(), s, out); return;
    case StmtKind::Assign: assignStatement(*s.as<AssignStmt>(), s, out); return;
    case StmtKind::If: {
      auto &i = *s.as<IfStmt>();
      auto st = make(Stmt::Kind::If, s.span);
      st->value = expr(*i.cond);
      block(i.thenBlock, st->body);
      if (i.elseStmt) {
        scopes_.emplace_back();
        stmt(*i.elseStmt, st->orElse);
        scopes_.pop_back();
      }
      out.push_back(std::move(st));
      return;
    }
    case StmtKind::For: {
      auto &f = *s.as<ForStmt>();
      auto st = make(Stmt::Kind::For, s.span);
      st->from = expr(*f.from);
      st->to = expr(*f.to);
      scopes_.emplace_back();
      st->slot = newSlot(st->from->type);
      scopes_.back()[f.var] = st->slot;
      block(f.body, st->body);
      scopes_.pop_back();
      out.push_back(std::move(st));
      return;
    }
    case StmtKind::While: whileStatement(*s.as<WhileStmt>(), s, out); return;
    case StmtKind::Loop: {
      auto st = make(Stmt::Kind::Loop, s.span);
      block(s.as<LoopStmt>()->body, st->body);
      out.push_back(std::move(st));
      return;
    }
    case StmtKind::Break: out.push_back(make(Stmt::Kind::Break, s.span)); return;
    case StmtKind::Continue: out.push_back(make(Stmt::Kind::Continue, s.span)); return;
    case StmtKind::Return: returnStatement(*s.as<ReturnStmt>(), s, out); return;
    case StmtKind::Assert: {
      auto &a = *s.as<AssertStmt>();
      auto st = make(Stmt::Kind::Assert, s.span);
      st->value = expr(*a.cond);
      if (a.message)
        st->text = message(*a.message);
      out.push_back(std::move(st));
      return;
    }
    case StmtKind::Expr: exprStatement(*s.as<ExprStmt>()->expr, s, out); return;
    case StmtKind::Block: block(s.as<BlockStmt>()->block, out); return;
    }
  }

  const SourceManager &src_;
  const sema::CheckedProgram &checked_;
  DiagnosticEngine &diags_;
  Function *f_ = nullptr;
  std::vector<std::map<std::string, Slot>> scopes_;
  ExpressionBuilder tensors_;
  std::map<Slot, ir::TensorType> tensorTypes_; ///< Ptr slots holding tensors
  std::vector<Slot> tensorVars_;               ///< this function's tensor variables
  std::vector<Slot> temps_;                    ///< to free after the current statement
  std::vector<StmtPtr> *out_ = nullptr;        ///< where an expression's preparation goes
  size_t expressions_ = 0;
  std::vector<std::string> called_;            ///< see takeCalled
};

} // namespace

std::optional<ScalarProgram> lowerScalarProgram(const SourceManager &sources, const Program &program,
                                                const sema::CheckedProgram &checked, DiagnosticEngine &diags,
                                                ProgramRoots roots, ir::SumOrder defaultOrder) {
  // The scalar functions by name, in declaration order (the checker's
  // signature must be this declaration's: a duplicate was reported).
  std::map<std::string, size_t> index;
  for (size_t i = 0; i < program.functions.size(); ++i) {
    const FunctionDecl &fn = program.functions[i];
    auto it = checked.functions.find(fn.name);
    if (it != checked.functions.end() && it->second.decl == &fn && isScalarSignature(it->second))
      index.emplace(fn.name, i);
  }
  Lowerer lower(sources, program, checked, diags, defaultOrder);
  std::set<size_t> reached; // declaration indices, lowered or about to be
  std::vector<size_t> work;
  auto reach = [&](const std::vector<std::string> &names) {
    for (const std::string &name : names)
      if (auto it = index.find(name); it != index.end() && reached.insert(it->second).second)
        work.push_back(it->second);
  };
  try {
    switch (roots) {
    case ProgramRoots::Main: case ProgramRoots::MainAndTests: reach({"main"}); break;
    case ProgramRoots::Everything:
      for (const auto &[name, i] : index)
        reach({name});
      break;
    case ProgramRoots::Tests: break;
    }
    if (roots != ProgramRoots::Main)
      for (size_t i = 0; i < program.tests.size(); ++i) {
        lower.test(program.tests[i], i);
        reach(lower.takeCalled());
      }
    while (!work.empty()) {
      size_t i = work.back();
      work.pop_back();
      const FunctionDecl &fn = program.functions[i];
      lower.function(fn, checked.functions.at(fn.name));
      reach(lower.takeCalled());
    }
  } catch (const Fail &) {
    return std::nullopt;
  }
  // Declaration order, as a whole program's lowering gave it: printed loop
  // and LLVM IR do not depend on the order calls were found in.
  std::stable_sort(lower.module.functions.begin(), lower.module.functions.end(),
                   [&](const Function &a, const Function &b) {
                     auto rank = [&](const Function &f) {
                       auto it = index.find(f.name); // tests ("test.N") after every function
                       return it != index.end() ? it->second : program.functions.size();
                     };
                     return rank(a) < rank(b);
                   });
  return ScalarProgram{std::move(lower.module), lower.takeTensors()};
}

} // namespace keel::instantiate
