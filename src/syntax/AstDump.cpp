//===- AstDump.cpp - `keel check --dump-ast` -----------------------------===//
//
// One node per line, indented by depth, with its start line:column:
//   fn attention @3:1
//     param q: Tensor<bf16, [B, H, S, D]> @3:14
//     let c @4:5
//       binary + @4:13
//         name a @4:13
//
//===----------------------------------------------------------------------===//
#include "keel/syntax/Parser.h"

namespace keel::syntax {
namespace {

class Dumper {
public:
  Dumper(const SourceManager &sources) : sources_(sources) {}
  std::string out;

  void program(const Program &p) {
    for (const FunctionDecl &fn : p.functions)
      function(fn);
    for (const TestDecl &t : p.tests) {
      line(0, "test \"" + t.name + "\"", t.span);
      block(1, t.body);
    }
  }

private:
  void line(int depth, const std::string &text, Span at) {
    LineColumn lc = sources_.lineColumn(at.file, at.begin);
    out += std::string(2 * depth, ' ') + text + " @" + std::to_string(lc.line) + ":" +
           std::to_string(lc.column) + "\n";
  }

  static std::string dim(const Dim &d) {
    switch (d.kind) {
    case Dim::Kind::Int: return std::to_string(d.value);
    case Dim::Kind::Name: return d.name;
    case Dim::Kind::Add: return "(" + dim(*d.lhs) + " + " + dim(*d.rhs) + ")";
    case Dim::Kind::Sub: return "(" + dim(*d.lhs) + " - " + dim(*d.rhs) + ")";
    case Dim::Kind::Mul: return "(" + dim(*d.lhs) + " * " + dim(*d.rhs) + ")";
    case Dim::Kind::Div: return "(" + dim(*d.lhs) + " / " + dim(*d.rhs) + ")";
    case Dim::Kind::Mod: return "(" + dim(*d.lhs) + " % " + dim(*d.rhs) + ")";
    }
    return "?";
  }

  static std::string type(const TypeExpr &t) {
    if (t.kind == TypeExpr::Kind::Named)
      return t.name;
    std::string s = "Tensor<" + t.name + ", [";
    for (size_t i = 0; i < t.dims.size(); ++i)
      s += (i ? ", " : "") + dim(*t.dims[i]);
    return s + "]>";
  }

  void function(const FunctionDecl &fn) {
    line(0, "fn " + fn.name, fn.span);
    for (const DimParam &d : fn.dimParams)
      line(1, "dimension " + d.name, d.span);
    for (const Param &p : fn.params)
      line(1, "param " + p.name + ": " + type(p.type), p.nameSpan);
    if (fn.returnType)
      line(1, "returns " + type(*fn.returnType), fn.returnType->span);
    for (const Effect &e : fn.effects)
      line(1, "effect " + e.name, e.span);
    for (const Predicate &pr : fn.refinements)
      line(1, "requires " + dim(*pr.lhs) + " " + std::string(tokenSpelling(pr.op)) + " " +
                  dim(*pr.rhs),
           pr.span);
    block(1, fn.body);
  }

  void block(int depth, const Block &b) {
    for (const StmtPtr &s : b.stmts)
      stmt(depth, *s);
  }

  void stmt(int d, const Stmt &s) {
    switch (s.kind) {
    case StmtKind::Let: {
      auto &l = *s.as<LetStmt>();
      std::string names = l.name, wrt;
      if (!l.names.empty()) { // let (value, d1, ...) = value_and_grad(f(...), wrt: [...])
        names.clear();
        for (const std::string &n : l.names)
          names += (names.empty() ? "(" : ", ") + n;
        for (const std::string &p : l.wrt)
          wrt += (wrt.empty() ? " value_and_grad wrt [" : ", ") + p;
        names += ")";
        wrt += "]";
      }
      line(d, std::string("let ") + (l.isMutable ? "mut " : "") + names + (l.type ? ": " + type(*l.type) : "") + wrt,
           s.span);
      expr(d + 1, *l.init);
      return;
    }
    case StmtKind::Assign: {
      auto &a = *s.as<AssignStmt>();
      line(d, "assign " + a.name + " " + std::string(tokenSpelling(a.op)), s.span);
      expr(d + 1, *a.value);
      return;
    }
    case StmtKind::If: {
      auto &i = *s.as<IfStmt>();
      line(d, "if", s.span);
      expr(d + 1, *i.cond);
      line(d + 1, "then", i.thenBlock.span);
      block(d + 2, i.thenBlock);
      if (i.elseStmt) {
        line(d + 1, "else", i.elseStmt->span);
        stmt(d + 2, *i.elseStmt);
      }
      return;
    }
    case StmtKind::For: {
      auto &f = *s.as<ForStmt>();
      line(d, "for " + f.var, s.span);
      expr(d + 1, *f.from);
      expr(d + 1, *f.to);
      block(d + 1, f.body);
      return;
    }
    case StmtKind::While: {
      auto &w = *s.as<WhileStmt>();
      line(d, "while", s.span);
      expr(d + 1, *w.cond);
      block(d + 1, w.body);
      return;
    }
    case StmtKind::Loop:
      line(d, "loop", s.span);
      block(d + 1, s.as<LoopStmt>()->body);
      return;
    case StmtKind::Break: line(d, "break", s.span); return;
    case StmtKind::Continue: line(d, "continue", s.span); return;
    case StmtKind::Return: {
      line(d, "return", s.span);
      if (auto &v = s.as<ReturnStmt>()->value)
        expr(d + 1, *v);
      return;
    }
    case StmtKind::Assert: {
      auto &a = *s.as<AssertStmt>();
      line(d, "assert", s.span);
      expr(d + 1, *a.cond);
      if (a.message)
        expr(d + 1, *a.message);
      return;
    }
    case StmtKind::Expr:
      line(d, "expr", s.span);
      expr(d + 1, *s.as<ExprStmt>()->expr);
      return;
    case StmtKind::Block:
      line(d, "block", s.span);
      block(d + 1, s.as<BlockStmt>()->block);
      return;
    }
  }

  static std::string quoted(const std::string &text) {
    std::string s = "\"";
    for (char c : text) {
      if (c == '\n') s += "\\n";
      else if (c == '\t') s += "\\t";
      else if (c == '"' || c == '\\') s += std::string("\\") + c;
      else s += c;
    }
    return s + "\"";
  }

  void expr(int d, const Expr &e) {
    switch (e.kind) {
    case ExprKind::Int: line(d, "int " + e.as<IntExpr>()->text, e.span); return;
    case ExprKind::Float: line(d, "float " + e.as<FloatExpr>()->text, e.span); return;
    case ExprKind::Bool: line(d, e.as<BoolExpr>()->value ? "bool true" : "bool false", e.span); return;
    case ExprKind::String: {
      line(d, "string", e.span);
      for (const StringPart &p : e.as<StringExpr>()->parts) {
        if (p.expr)
          expr(d + 1, *p.expr);
        else
          line(d + 1, "text " + quoted(p.text), e.span);
      }
      return;
    }
    case ExprKind::Name: line(d, "name " + e.as<NameExpr>()->name, e.span); return;
    case ExprKind::Unary: {
      auto &u = *e.as<UnaryExpr>();
      line(d, "unary " + std::string(tokenSpelling(u.op)), e.span);
      expr(d + 1, *u.operand);
      return;
    }
    case ExprKind::Binary: {
      auto &b = *e.as<BinaryExpr>();
      line(d, "binary " + std::string(tokenSpelling(b.op)), e.span);
      expr(d + 1, *b.lhs);
      expr(d + 1, *b.rhs);
      return;
    }
    case ExprKind::Cast: {
      auto &c = *e.as<CastExpr>();
      line(d, "cast " + type(c.type), e.span);
      expr(d + 1, *c.operand);
      return;
    }
    case ExprKind::Call: {
      auto &c = *e.as<CallExpr>();
      line(d, "call " + c.callee, e.span);
      for (const Arg &a : c.args) {
        if (!a.name.empty()) {
          line(d + 1, "named " + a.name, a.nameSpan);
          expr(d + 2, *a.value);
        } else {
          expr(d + 1, *a.value);
        }
      }
      return;
    }
    case ExprKind::Index: {
      auto &i = *e.as<IndexExpr>();
      line(d, "index", e.span);
      expr(d + 1, *i.base);
      for (const ExprPtr &x : i.indices)
        expr(d + 1, *x);
      return;
    }
    case ExprKind::Array: {
      line(d, "array", e.span);
      for (const ExprPtr &x : e.as<ArrayExpr>()->elements)
        expr(d + 1, *x);
      return;
    }
    }
  }

  const SourceManager &sources_;
};

} // namespace

std::string dumpAst(const SourceManager &sources, const Program &program) {
  Dumper d(sources);
  d.program(program);
  return d.out;
}

} // namespace keel::syntax
