//===- Lower.cpp - Checked scalar functions and tests to the loop IR -----===//
#include "keel/loop/Lower.h"

#include "keel/syntax/Codes.h"

#include <charconv>
#include <map>

namespace keel::loop {

using namespace syntax;
using sema::Scalar;

namespace {

struct Fail {};

Type typeOf(const sema::Type &t) {
  if (t.is(sema::Type::Kind::Void))
    return Type::Void;
  switch (t.scalar) {
  case Scalar::Bool: return Type::Bool;
  case Scalar::I4: return Type::I8;
  case Scalar::I8: return Type::I8;
  case Scalar::I16: return Type::I16;
  case Scalar::I32: return Type::I32;
  case Scalar::I64: return Type::I64;
  case Scalar::U8: return Type::U8;
  case Scalar::U16: return Type::U16;
  case Scalar::U32: return Type::U32;
  case Scalar::U64: return Type::U64;
  case Scalar::F16: return Type::F16;
  case Scalar::BF16: return Type::BF16;
  case Scalar::TF32: return Type::TF32;
  case Scalar::FP8E4M3FN: return Type::FP8E4M3FN;
  case Scalar::FP8E5M2: return Type::FP8E5M2;
  case Scalar::F32: return Type::F32;
  case Scalar::F64: return Type::F64;
  }
  return Type::Void;
}

bool isScalarSignature(const sema::FunctionSig &s) {
  for (const sema::Type &t : s.params)
    if (!t.is(sema::Type::Kind::Scalar))
      return false;
  return s.result.is(sema::Type::Kind::Scalar) || s.result.is(sema::Type::Kind::Void);
}

class Lowerer {
public:
  Lowerer(const SourceManager &sources, const sema::CheckedProgram &checked, DiagnosticEngine &diags)
      : src_(sources), checked_(checked), diags_(diags) {}

  Module module;

  void function(const FunctionDecl &fn, const sema::FunctionSig &sig) {
    Function f;
    f.name = fn.name;
    f.loc = location(fn.nameSpan);
    f.result = typeOf(sig.result);
    begin(f);
    for (size_t i = 0; i < fn.params.size(); ++i)
      scopes_.back()[fn.params[i].name] = newSlot(typeOf(sig.params[i]));
    f_->params = fn.params.size();
    block(fn.body, f_->body);
    module.functions.push_back(std::move(f));
  }

  void test(const TestDecl &t, size_t index) {
    Function f;
    f.name = "test." + std::to_string(index);
    f.loc = location(t.nameSpan);
    begin(f);
    block(t.body, f_->body);
    module.tests.push_back({t.name, f.name});
    module.functions.push_back(std::move(f));
  }

private:
  void begin(Function &f) {
    f_ = &f;
    scopes_.assign(1, {});
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
  [[noreturn]] void unsupported(Span at, const std::string &what) {
    diags_.error(code::E0500, at, what + " does not run on the CPU yet")
        .note("scalar code runs today; tensor functions and scalar math built-ins come with the CPU oracle");
    throw Fail{};
  }
  Type checkedType(const syntax::Expr &e) const {
    auto it = checked_.exprTypes.find(&e);
    return it == checked_.exprTypes.end() ? Type::Void : typeOf(it->second);
  }
  Slot lookup(const std::string &name) const {
    for (auto it = scopes_.rbegin(); it != scopes_.rend(); ++it)
      if (auto found = it->find(name); found != it->end())
        return found->second;
    return 0;
  }

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
      if (u.op == Tok::Minus) {
        if (auto *i = u.operand->as<IntExpr>()) {
          out = intLiteral(*i, type, true);
          break;
        }
        if (auto *f = u.operand->as<FloatExpr>()) {
          out = floatLiteral(*f, type); // already negated by the checker
          break;
        }
      }
      out = makeUnary(u.op == Tok::Minus ? UnaryOp::Neg : u.op == Tok::Bang ? UnaryOp::Not : UnaryOp::BitNot,
                      expr(*u.operand));
      break;
    }
    case ExprKind::Binary: out = binary(*e.as<BinaryExpr>()); break;
    case ExprKind::Cast: {
      out = makeCast(expr(*e.as<CastExpr>()->operand), type);
      break;
    }
    case ExprKind::Call: {
      auto &c = *e.as<CallExpr>();
      auto it = checked_.functions.find(c.callee);
      if (it == checked_.functions.end())
        unsupported(e.span, "`" + c.callee + "`");
      if (!isScalarSignature(it->second))
        unsupported(e.span, "calling the tensor function `" + c.callee + "`");
      std::vector<ExprPtr> args;
      for (const Arg &a : c.args)
        args.push_back(expr(*a.value));
      out = makeCall(c.callee, typeOf(it->second.result), std::move(args));
      break;
    }
    case ExprKind::String:
    case ExprKind::Index:
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

  ExprPtr binary(const BinaryExpr &b) {
    auto out = std::make_unique<loop::Expr>();
    out->operands.push_back(expr(*b.lhs));
    out->operands.push_back(expr(*b.rhs));
    switch (b.op) {
    case Tok::EqEq: case Tok::NotEq: case Tok::Less: case Tok::LessEq: case Tok::Greater: case Tok::GreaterEq:
      out->kind = loop::Expr::Kind::Compare;
      out->type = Type::Bool;
      out->compare = b.op == Tok::EqEq ? CompareOp::Eq : b.op == Tok::NotEq ? CompareOp::Ne
                   : b.op == Tok::Less ? CompareOp::Lt : b.op == Tok::LessEq ? CompareOp::Le
                   : b.op == Tok::Greater ? CompareOp::Gt : CompareOp::Ge;
      return out;
    default:
      break;
    }
    out->kind = loop::Expr::Kind::Binary;
    out->type = out->operands[0]->type;
    switch (b.op) {
    case Tok::Plus: out->binary = BinaryOp::Add; break;
    case Tok::Minus: out->binary = BinaryOp::Sub; break;
    case Tok::Star: out->binary = BinaryOp::Mul; break;
    case Tok::Slash: out->binary = BinaryOp::Div; break;
    case Tok::Percent: out->binary = BinaryOp::Rem; break;
    case Tok::Amp: out->binary = BinaryOp::And; break;
    case Tok::Pipe: out->binary = BinaryOp::Or; break;
    case Tok::Caret: out->binary = BinaryOp::Xor; break;
    case Tok::AmpAmp: out->binary = BinaryOp::LogicalAnd; break;
    default: out->binary = BinaryOp::LogicalOr; break;
    }
    return out;
  }

  std::vector<TextPart> message(const syntax::Expr &e) {
    std::vector<TextPart> parts;
    if (auto *s = e.as<StringExpr>()) {
      for (const StringPart &p : s->parts)
        parts.push_back({p.text, p.expr ? expr(*p.expr) : nullptr});
      return parts;
    }
    parts.push_back({"", expr(e)});
    return parts;
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

  void stmt(const syntax::Stmt &s, std::vector<StmtPtr> &out) {
    switch (s.kind) {
    case StmtKind::Let: {
      auto &l = *s.as<LetStmt>();
      ExprPtr value = expr(*l.init);
      Slot slot = newSlot(value->type);
      scopes_.back()[l.name] = slot;
      auto st = make(Stmt::Kind::Assign, s.span);
      st->slot = slot;
      st->value = std::move(value);
      out.push_back(std::move(st));
      return;
    }
    case StmtKind::Assign: {
      auto &a = *s.as<AssignStmt>();
      Slot slot = lookup(a.name);
      ExprPtr value = expr(*a.value);
      if (a.op != Tok::Assign) {
        BinaryOp op = a.op == Tok::PlusAssign ? BinaryOp::Add : a.op == Tok::MinusAssign ? BinaryOp::Sub
                    : a.op == Tok::StarAssign ? BinaryOp::Mul : BinaryOp::Div;
        auto combined = makeBinary(op, makeVar(slot, f_->slots[slot]), std::move(value));
        combined->loc = location(s.span);
        value = std::move(combined);
      }
      auto st = make(Stmt::Kind::Assign, s.span);
      st->slot = slot;
      st->value = std::move(value);
      out.push_back(std::move(st));
      return;
    }
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
    case StmtKind::While: {
      // while c { body }  ->  loop { if !c { break } body }
      auto &w = *s.as<WhileStmt>();
      auto st = make(Stmt::Kind::Loop, s.span);
      auto guard = make(Stmt::Kind::If, w.cond->span);
      guard->value = makeUnary(UnaryOp::Not, expr(*w.cond));
      guard->body.push_back(make(Stmt::Kind::Break, w.cond->span));
      st->body.push_back(std::move(guard));
      block(w.body, st->body);
      out.push_back(std::move(st));
      return;
    }
    case StmtKind::Loop: {
      auto st = make(Stmt::Kind::Loop, s.span);
      block(s.as<LoopStmt>()->body, st->body);
      out.push_back(std::move(st));
      return;
    }
    case StmtKind::Break: out.push_back(make(Stmt::Kind::Break, s.span)); return;
    case StmtKind::Continue: out.push_back(make(Stmt::Kind::Continue, s.span)); return;
    case StmtKind::Return: {
      auto st = make(Stmt::Kind::Return, s.span);
      if (auto &v = s.as<ReturnStmt>()->value)
        st->value = expr(*v);
      out.push_back(std::move(st));
      return;
    }
    case StmtKind::Assert: {
      auto &a = *s.as<AssertStmt>();
      auto st = make(Stmt::Kind::Assert, s.span);
      st->value = expr(*a.cond);
      if (a.message)
        st->text = message(*a.message);
      out.push_back(std::move(st));
      return;
    }
    case StmtKind::Expr: {
      const syntax::Expr &e = *s.as<ExprStmt>()->expr;
      if (auto *c = e.as<CallExpr>(); c && c->callee == "print") {
        auto st = make(Stmt::Kind::Print, s.span);
        if (!c->args.empty())
          st->text = message(*c->args[0].value);
        out.push_back(std::move(st));
        return;
      }
      auto st = make(Stmt::Kind::Eval, s.span);
      st->value = expr(e);
      out.push_back(std::move(st));
      return;
    }
    case StmtKind::Block: block(s.as<BlockStmt>()->block, out); return;
    }
  }

  const SourceManager &src_;
  const sema::CheckedProgram &checked_;
  DiagnosticEngine &diags_;
  Function *f_ = nullptr;
  std::vector<std::map<std::string, Slot>> scopes_;
};

} // namespace

std::optional<Module> lowerScalarProgram(const SourceManager &sources, const Program &program,
                                         const sema::CheckedProgram &checked, DiagnosticEngine &diags) {
  Lowerer lower(sources, checked, diags);
  try {
    for (const FunctionDecl &fn : program.functions) {
      auto it = checked.functions.find(fn.name);
      if (it != checked.functions.end() && it->second.decl == &fn && isScalarSignature(it->second))
        lower.function(fn, it->second);
    }
    for (size_t i = 0; i < program.tests.size(); ++i)
      lower.test(program.tests[i], i);
  } catch (const Fail &) {
    return std::nullopt;
  }
  return std::move(lower.module);
}

} // namespace keel::loop
