//===- LoopIR.cpp - Names, printer and verifier of the loop IR -----------===//
#include "keel/loop/LoopIR.h"

#include <algorithm>
#include <array>
#include <cstdio>
#include <functional>

namespace keel::loop {

namespace {
constexpr std::string_view kBinary[] = {
#define KEEL_BINARY_CODE(Enum, name, source, operands, mlirFloat, mlirSigned, mlirUnsigned, stablehlo) #name,
#include "keel/support/Operators.def"
#undef KEEL_BINARY_CODE
    "land", "lor"};
constexpr std::string_view kUnary[] = {"neg", "not", "bitnot", "abs",
#define KEEL_MATH_FUNCTION(Enum, name, mlir, stablehlo, summary) #name,
#include "keel/support/MathFunctions.def"
#undef KEEL_MATH_FUNCTION
};
constexpr std::string_view kCompare[] = {
#define KEEL_COMPARE_DIR(Enum, name, source, mlirFloat, mlirSigned, mlirUnsigned, stablehlo) #name,
#include "keel/support/Operators.def"
#undef KEEL_COMPARE_DIR
};
} // namespace

std::string_view binaryName(BinaryOp op) { return kBinary[static_cast<size_t>(op)]; }
std::string_view unaryName(UnaryOp op) { return kUnary[static_cast<size_t>(op)]; }

std::optional<ElementType> elementOf(Type t) {
  if (t == Type::Void || t == Type::Ptr)
    return std::nullopt;
  return static_cast<ElementType>(t);
}

std::string_view typeName(Type t) {
  if (std::optional<ElementType> e = elementOf(t))
    return elementName(*e);
  return t == Type::Void ? "void" : "ptr";
}

const std::vector<RuntimeHelper> &runtimeHelpers() {
  static const std::vector<RuntimeHelper> helpers = {
      {"keel_rt_buffer_data", Type::Ptr, {Type::Ptr, Type::Ptr, Type::I32, Type::Ptr}},
  };
  return helpers;
}

bool isMathOp(UnaryOp op) {
  switch (op) {
  case UnaryOp::Neg: case UnaryOp::Not: case UnaryOp::BitNot: case UnaryOp::Abs: return false;
#define KEEL_MATH_FUNCTION(Enum, name, mlir, stablehlo, summary) case UnaryOp::Enum:
#include "keel/support/MathFunctions.def"
#undef KEEL_MATH_FUNCTION
    return true;
  }
  return false;
}

ExprPtr makeConst(Type t, uint64_t bits) {
  auto e = std::make_unique<Expr>();
  e->kind = Expr::Kind::Const;
  e->type = t;
  e->bits = bits;
  return e;
}

ExprPtr makeVar(Slot slot, Type t) {
  auto e = std::make_unique<Expr>();
  e->kind = Expr::Kind::Var;
  e->type = t;
  e->slot = slot;
  return e;
}

ExprPtr makeUnary(UnaryOp op, ExprPtr operand) {
  auto e = std::make_unique<Expr>();
  e->kind = Expr::Kind::Unary;
  e->unary = op;
  e->type = operand->type;
  e->operands.push_back(std::move(operand));
  return e;
}

ExprPtr makeBinary(BinaryOp op, ExprPtr lhs, ExprPtr rhs) {
  auto e = std::make_unique<Expr>();
  e->kind = Expr::Kind::Binary;
  e->binary = op;
  e->type = lhs->type;
  e->operands.push_back(std::move(lhs));
  e->operands.push_back(std::move(rhs));
  return e;
}

ExprPtr makeCompare(CompareOp op, ExprPtr lhs, ExprPtr rhs) {
  auto e = std::make_unique<Expr>();
  e->kind = Expr::Kind::Compare;
  e->compare = op;
  e->type = Type::Bool;
  e->operands.push_back(std::move(lhs));
  e->operands.push_back(std::move(rhs));
  return e;
}

ExprPtr makeCast(ExprPtr operand, Type to) {
  if (operand->type == to)
    return operand;
  auto e = std::make_unique<Expr>();
  e->kind = Expr::Kind::Cast;
  e->type = to;
  e->operands.push_back(std::move(operand));
  return e;
}

ExprPtr makeSelect(ExprPtr cond, ExprPtr a, ExprPtr b) {
  auto e = std::make_unique<Expr>();
  e->kind = Expr::Kind::Select;
  e->type = a->type;
  e->operands.push_back(std::move(cond));
  e->operands.push_back(std::move(a));
  e->operands.push_back(std::move(b));
  return e;
}

ExprPtr makeLoad(Type t, ExprPtr ptr, ExprPtr index) {
  auto e = std::make_unique<Expr>();
  e->kind = Expr::Kind::Load;
  e->type = t;
  e->operands.push_back(std::move(ptr));
  e->operands.push_back(std::move(index));
  return e;
}

ExprPtr makeCall(std::string callee, Type result, std::vector<ExprPtr> args) {
  auto e = std::make_unique<Expr>();
  e->kind = Expr::Kind::Call;
  e->callee = std::move(callee);
  e->type = result;
  e->operands = std::move(args);
  return e;
}

ExprPtr makeAlloc(int64_t bytes, Location loc) {
  auto e = std::make_unique<Expr>();
  e->kind = Expr::Kind::Alloc;
  e->type = Type::Ptr;
  e->loc = std::move(loc);
  e->operands.push_back(makeConst(Type::I64, static_cast<uint64_t>(bytes)));
  return e;
}

StmtPtr makeFree(Slot slot) {
  auto s = std::make_unique<Stmt>();
  s->kind = Stmt::Kind::Free;
  s->slot = slot;
  return s;
}

bool isIntegerType(Type t) {
  std::optional<ElementType> e = elementOf(t);
  return e && isIntegerElement(*e);
}
bool isSignedType(Type t) {
  std::optional<ElementType> e = elementOf(t);
  return e && elementInfo(*e).kind == ElementKind::Signed;
}
bool isFloatType(Type t) {
  std::optional<ElementType> e = elementOf(t);
  return e && isFloatElement(*e);
}
bool isLowPrecisionType(Type t) {
  std::optional<ElementType> e = elementOf(t);
  return e && isLowPrecisionElement(*e);
}
int typeBits(Type t) {
  if (std::optional<ElementType> e = elementOf(t))
    return elementBits(*e);
  return t == Type::Ptr ? 64 : 0;
}

const Function *Module::find(std::string_view name) const {
  for (const Function &f : functions)
    if (f.name == name)
      return &f;
  return nullptr;
}

namespace {

class Printer {
public:
  std::string out;

  void function(const Function &f) {
    out += "fn @" + f.name + "(";
    for (size_t i = 0; i < f.params; ++i)
      out += (i ? ", %" : "%") + std::to_string(i) + ": " + std::string(typeName(f.slots[i]));
    out += ") -> " + std::string(typeName(f.result)) + (f.checksStack ? " checks_stack" : "") + " {\n";
    block(f.body, 1, f);
    out += "}\n";
  }

private:
  static std::string hex(uint64_t v) {
    char buf[24];
    std::snprintf(buf, sizeof buf, "0x%llx", static_cast<unsigned long long>(v));
    return buf;
  }
  std::string expr(const Expr &e) {
    switch (e.kind) {
    case Expr::Kind::Const: return hex(e.bits) + ":" + std::string(typeName(e.type));
    case Expr::Kind::Var: return "%" + std::to_string(e.slot);
    case Expr::Kind::Unary:
      return "(" + std::string(kUnary[static_cast<size_t>(e.unary)]) + " " + expr(*e.operands[0]) + ")";
    case Expr::Kind::Binary:
      return "(" + std::string(kBinary[static_cast<size_t>(e.binary)]) + " " + expr(*e.operands[0]) + ", " +
             expr(*e.operands[1]) + ")";
    case Expr::Kind::Compare:
      return "(" + std::string(kCompare[static_cast<size_t>(e.compare)]) + " " + expr(*e.operands[0]) + ", " +
             expr(*e.operands[1]) + ")";
    case Expr::Kind::Cast: return "(cast " + expr(*e.operands[0]) + " to " + std::string(typeName(e.type)) + ")";
    case Expr::Kind::Load:
      return "(load." + std::string(typeName(e.type)) + " " + expr(*e.operands[0]) + "[" + expr(*e.operands[1]) + "])";
    case Expr::Kind::Select:
      return "(select " + expr(*e.operands[0]) + ", " + expr(*e.operands[1]) + ", " + expr(*e.operands[2]) + ")";
    case Expr::Kind::Global: return "@const." + std::to_string(e.bits);
    case Expr::Kind::Alloc: return "(alloc " + expr(*e.operands[0]) + ")";
    case Expr::Kind::Runtime: {
      std::string s = "runtime @" + e.callee + "(";
      for (size_t i = 0; i < e.operands.size(); ++i)
        s += (i ? ", " : "") + expr(*e.operands[i]);
      return s + ")";
    }
    case Expr::Kind::Call: {
      std::string s = "call @" + e.callee + "(";
      for (size_t i = 0; i < e.operands.size(); ++i)
        s += (i ? ", " : "") + expr(*e.operands[i]);
      return s + ")";
    }
    }
    return "?";
  }
  std::string text(const std::vector<TextPart> &parts) {
    std::string s;
    for (size_t i = 0; i < parts.size(); ++i) {
      s += i ? ", " : "";
      if (parts[i].value && parts[i].tensorDType >= 0) {
        s += "tensor(" + expr(*parts[i].value) + ")";
      } else if (parts[i].value)
        s += expr(*parts[i].value);
      else {
        s += '"';
        for (char c : parts[i].text)
          s += c == '\n' ? std::string("\\n") : c == '"' ? std::string("\\\"") : std::string(1, c);
        s += '"';
      }
    }
    return s;
  }
  void block(const std::vector<StmtPtr> &body, int depth, const Function &f) {
    std::string pad(2 * static_cast<size_t>(depth), ' ');
    for (const StmtPtr &s : body) {
      switch (s->kind) {
      case Stmt::Kind::Assign:
        out += pad + "%" + std::to_string(s->slot) + ": " + std::string(typeName(f.slots[s->slot])) + " = " +
               expr(*s->value) + "\n";
        break;
      case Stmt::Kind::If:
        out += pad + "if " + expr(*s->value) + " {\n";
        block(s->body, depth + 1, f);
        if (!s->orElse.empty()) {
          out += pad + "} else {\n";
          block(s->orElse, depth + 1, f);
        }
        out += pad + "}\n";
        break;
      case Stmt::Kind::For:
        out += pad + (s->parallel ? "for.parallel %" : "for %") + std::to_string(s->slot) + " in " + expr(*s->from) + " .. " + expr(*s->to) + " {\n";
        block(s->body, depth + 1, f);
        out += pad + "}\n";
        break;
      case Stmt::Kind::Loop:
        out += pad + "loop {\n";
        block(s->body, depth + 1, f);
        out += pad + "}\n";
        break;
      case Stmt::Kind::Break: out += pad + "break\n"; break;
      case Stmt::Kind::Continue: out += pad + "continue\n"; break;
      case Stmt::Kind::Return: out += pad + "return" + (s->value ? " " + expr(*s->value) : "") + "\n"; break;
      case Stmt::Kind::Eval: out += pad + expr(*s->value) + "\n"; break;
      case Stmt::Kind::Print: out += pad + "print " + text(s->text) + "\n"; break;
      case Stmt::Kind::Assert:
        out += pad + "assert " + expr(*s->value) + (s->text.empty() ? "" : ", " + text(s->text)) + "\n";
        break;
      case Stmt::Kind::Store:
        out += pad + "store." + std::string(typeName(s->value->type)) + " %" + std::to_string(s->slot) + "[" +
               expr(*s->index) + "] = " + expr(*s->value) + "\n";
        break;
      case Stmt::Kind::Free: out += pad + "free %" + std::to_string(s->slot) + "\n"; break;
      case Stmt::Kind::CheckIndex:
        out += pad + "check_index " + expr(*s->value) + " < " + std::to_string(s->extent) + " (axis " +
               std::to_string(s->axis) + ")\n";
        break;
      }
    }
  }
};

/// Which operations code generation implements on which types.
bool unaryDefined(UnaryOp op, Type t) {
  switch (op) {
  case UnaryOp::Neg: case UnaryOp::Abs: return isIntegerType(t) || isFloatType(t);
  case UnaryOp::Not: return t == Type::Bool;
  case UnaryOp::BitNot: return isIntegerType(t);
#define KEEL_MATH_FUNCTION(Enum, name, mlir, stablehlo, summary) case UnaryOp::Enum:
#include "keel/support/MathFunctions.def"
#undef KEEL_MATH_FUNCTION
    return t == Type::F32 || t == Type::F64;
  }
  return false;
}
bool binaryDefined(BinaryOp op, Type t) {
  switch (op) {
  case BinaryOp::Add: case BinaryOp::Sub: case BinaryOp::Mul: case BinaryOp::Div:
    return isIntegerType(t) || (isFloatType(t) && t != Type::FP8E4M3FN && t != Type::FP8E5M2);
  case BinaryOp::Rem: case BinaryOp::Min: case BinaryOp::Max:
    return isIntegerType(t) || t == Type::F32 || t == Type::F64;
  case BinaryOp::And: case BinaryOp::Or: case BinaryOp::Xor: return isIntegerType(t) || t == Type::Bool;
  case BinaryOp::LogicalAnd: case BinaryOp::LogicalOr: return t == Type::Bool;
  case BinaryOp::Pow: return t == Type::F32 || t == Type::F64;
  }
  return false;
}

class Verifier {
public:
  Verifier(const Module &m, std::vector<std::string> &problems) : m_(m), problems_(problems) {}

  void function(const Function &f) {
    f_ = &f;
    loops_ = 0;
    parallelBase_ = -1;
    if (f.params > f.slots.size())
      problem("more parameters than slots");
    for (Type t : f.slots)
      if (t == Type::I4)
        problem("a slot of type i4 (i4 is computed and stored in i8)");
    if (f.result == Type::I4)
      problem("an i4 result (i4 is computed and stored in i8)");
    block(f.body);
    privateSlots(f);
  }

private:
  /// A slot a parallel loop assigns is used nowhere outside that loop.
  void privateSlots(const Function &f) {
    // For each slot: the parallel loop it is used in (1, 2, ...; 0 outside
    // any) at its first use, and whether it is used in several places.
    std::vector<int> where(f.slots.size(), -1);
    std::vector<bool> assignedInside(f.slots.size(), false), shared(f.slots.size(), false);
    int loops = 0;
    auto use = [&](Slot slot, int in) {
      if (slot >= where.size())
        return;
      if (where[slot] == -1)
        where[slot] = in;
      else if (where[slot] != in)
        shared[slot] = true;
    };
    std::function<void(const Expr &, int)> walkExpr = [&](const Expr &e, int in) {
      if (e.kind == Expr::Kind::Var)
        use(e.slot, in);
      for (const ExprPtr &o : e.operands)
        walkExpr(*o, in);
    };
    std::function<void(const std::vector<StmtPtr> &, int)> walk = [&](const std::vector<StmtPtr> &body, int in) {
      for (const StmtPtr &s : body) {
        int inner = in;
        if (s->kind == Stmt::Kind::For && s->parallel && in == 0)
          inner = ++loops;
        bool assigns = s->kind == Stmt::Kind::Assign || s->kind == Stmt::Kind::For;
        if (assigns || s->kind == Stmt::Kind::Store || s->kind == Stmt::Kind::Free)
          use(s->slot, assigns ? inner : in);
        if (assigns && inner != 0 && s->slot < assignedInside.size())
          assignedInside[s->slot] = true;
        for (const ExprPtr *e : {&s->value, &s->from, &s->to, &s->index})
          if (*e)
            walkExpr(**e, s->kind == Stmt::Kind::For ? in : inner);
        for (const TextPart &p : s->text)
          if (p.value)
            walkExpr(*p.value, inner);
        walk(s->body, inner);
        walk(s->orElse, inner);
        if (s->kind == Stmt::Kind::Free && in != 0 && s->slot < where.size() && !assignedInside[s->slot])
          problem("a parallel loop frees %" + std::to_string(s->slot) + ", which it did not allocate");
      }
    };
    walk(f.body, 0);
    for (Slot slot = 0; slot < f.slots.size(); ++slot)
      if (assignedInside[slot] && (shared[slot] || slot < f.params))
        problem("%" + std::to_string(slot) + " is assigned in a parallel loop and used outside it");
  }

  void problem(const std::string &what) { problems_.push_back("@" + f_->name + ": " + what); }

  Type expr(const Expr &e) {
    std::vector<Type> ops;
    for (const ExprPtr &o : e.operands)
      ops.push_back(expr(*o));
    if (e.type == Type::I4)
      problem("an expression of type i4 (i4 is computed and stored in i8)");
    auto arity = [&](size_t n) {
      if (ops.size() == n)
        return true;
      problem("an expression has " + std::to_string(ops.size()) + " operands, not " + std::to_string(n));
      return false;
    };
    switch (e.kind) {
    case Expr::Kind::Const:
      if ((e.type == Type::Ptr && e.bits != 0) || e.type == Type::Void)
        problem("a constant ptr other than null, or a void constant");
      break;
    case Expr::Kind::Var:
      if (e.slot >= f_->slots.size() || f_->slots[e.slot] != e.type)
        problem("variable %" + std::to_string(e.slot) + " used with the wrong type or out of range");
      break;
    case Expr::Kind::Unary:
      if (arity(1) && ops[0] != e.type)
        problem("unary operand type differs from its result");
      else if (!unaryDefined(e.unary, e.type))
        problem(std::string(kUnary[static_cast<size_t>(e.unary)]) + " is not defined on " + std::string(typeName(e.type)));
      break;
    case Expr::Kind::Binary:
      if (arity(2) && (ops[0] != e.type || ops[1] != e.type))
        problem("binary operands must have the result's type (" + std::string(typeName(e.type)) + ")");
      else if (!binaryDefined(e.binary, e.type))
        problem(std::string(kBinary[static_cast<size_t>(e.binary)]) + " is not defined on " + std::string(typeName(e.type)));
      break;
    case Expr::Kind::Select:
      if (arity(3) && (ops[0] != Type::Bool || ops[1] != e.type || ops[2] != e.type))
        problem("a select needs a bool and two operands of its type");
      break;
    case Expr::Kind::Global:
      if (e.bits >= m_.constants.size() || e.type != Type::Ptr)
        problem("a global names no constant data, or is not a ptr");
      break;
    case Expr::Kind::Alloc:
      if (arity(1) && (ops[0] != Type::I64 || e.type != Type::Ptr))
        problem("an alloc takes an i64 byte count and gives a ptr");
      break;
    case Expr::Kind::Runtime: {
      const std::vector<RuntimeHelper> &helpers = runtimeHelpers();
      auto it = std::find_if(helpers.begin(), helpers.end(), [&](const RuntimeHelper &h) { return h.name == e.callee; });
      if (it == helpers.end() || it->result != e.type || it->params != ops)
        problem("runtime call @" + e.callee + " is not a runtime helper of this signature");
      break;
    }
    case Expr::Kind::Compare:
      if (arity(2) && (ops[0] != ops[1] || e.type != Type::Bool))
        problem("comparison of different types, or not giving bool");
      break;
    case Expr::Kind::Cast:
      arity(1);
      break;
    case Expr::Kind::Load:
      if (arity(2) && (ops[0] != Type::Ptr || ops[1] != Type::I64 || e.type == Type::Void))
        problem("a load needs a ptr, an i64 index and an element type");
      break;
    case Expr::Kind::Call: {
      const Function *callee = m_.find(e.callee);
      if (!callee) {
        problem("call to unknown @" + e.callee);
        break;
      }
      bool ok = callee->params == ops.size() && callee->result == e.type;
      for (size_t i = 0; ok && i < ops.size(); ++i)
        ok = callee->slots[i] == ops[i];
      if (!ok)
        problem("call to @" + e.callee + " does not match its signature");
      if (parallelBase_ >= 0 && callee->checksStack)
        problem("a parallel `for` calls @" + e.callee + ", which checks its stack (the guard knows one thread's stack)");
      break;
    }
    }
    return e.type;
  }

  void block(const std::vector<StmtPtr> &body) {
    for (const StmtPtr &s : body) {
      switch (s->kind) {
      case Stmt::Kind::Assign:
        if (s->slot >= f_->slots.size() || expr(*s->value) != f_->slots[s->slot])
          problem("assignment of a value of another type to %" + std::to_string(s->slot));
        break;
      case Stmt::Kind::If:
        if (expr(*s->value) != Type::Bool)
          problem("an `if` condition that is not bool");
        block(s->body);
        block(s->orElse);
        break;
      case Stmt::Kind::For: {
        Type t = s->slot < f_->slots.size() ? f_->slots[s->slot] : Type::Void;
        if (!isIntegerType(t) || expr(*s->from) != t || expr(*s->to) != t)
          problem("a `for` counter and bounds must share one integer type");
        int outerBase = parallelBase_;
        if (s->parallel) {
          if (t != Type::I64)
            problem("a parallel `for` needs an i64 counter");
          if (parallelBase_ >= 0)
            problem("a parallel `for` inside another");
          parallelBase_ = loops_ + 1;
        }
        ++loops_;
        block(s->body);
        --loops_;
        parallelBase_ = outerBase;
        break;
      }
      case Stmt::Kind::Loop:
        ++loops_;
        block(s->body);
        --loops_;
        break;
      case Stmt::Kind::Break:
      case Stmt::Kind::Continue:
        if (loops_ == 0)
          problem("`break` or `continue` outside a loop");
        else if (parallelBase_ >= 0 && loops_ <= parallelBase_)
          problem("`break` or `continue` of a parallel `for`, or out of it");
        break;
      case Stmt::Kind::Return:
        if (parallelBase_ >= 0)
          problem("`return` inside a parallel `for`");
        if ((s->value ? expr(*s->value) : Type::Void) != f_->result)
          problem("`return` of another type than the function's");
        break;
      case Stmt::Kind::Eval: expr(*s->value); break;
      case Stmt::Kind::Store: {
        Type element = expr(*s->value);
        if (s->slot >= f_->slots.size() || f_->slots[s->slot] != Type::Ptr || expr(*s->index) != Type::I64 ||
            element == Type::Void || element == Type::Ptr)
          problem("a store needs a ptr variable, an i64 index and an element value");
        break;
      }
      case Stmt::Kind::Free:
        if (s->slot >= f_->slots.size() || f_->slots[s->slot] != Type::Ptr)
          problem("`free` of a variable that is not a ptr");
        break;
      case Stmt::Kind::CheckIndex:
        if (expr(*s->value) != Type::I64 || s->extent <= 0)
          problem("`check_index` needs an i64 index and a positive extent");
        break;
      case Stmt::Kind::Print:
        if (parallelBase_ >= 0)
          problem("`print` inside a parallel `for`");
        for (const TextPart &p : s->text)
          if (p.value)
            expr(*p.value);
        break;
      case Stmt::Kind::Assert:
        if (parallelBase_ >= 0)
          problem("`assert` inside a parallel `for`");
        if (expr(*s->value) != Type::Bool)
          problem("an `assert` condition that is not bool");
        for (const TextPart &p : s->text)
          if (p.value)
            expr(*p.value);
        break;
      }
    }
  }

  const Module &m_;
  std::vector<std::string> &problems_;
  const Function *f_ = nullptr;
  int loops_ = 0;
  /// Inside a parallel `for`: the loop depth of its body (loops_ there);
  /// -1 outside.
  int parallelBase_ = -1;
};

} // namespace

std::string print(const Module &m) {
  Printer p;
  for (size_t i = 0; i < m.functions.size(); ++i) {
    if (i)
      p.out += "\n";
    p.function(m.functions[i]);
  }
  return p.out;
}

std::vector<std::string> verify(const Module &m) {
  std::vector<std::string> problems;
  Verifier v(m, problems);
  for (const Function &f : m.functions)
    v.function(f);
  return problems;
}

} // namespace keel::loop
