//===- keel/loop/LoopIR.h - The scalar loop IR (native_ir's role) -*- C++ -*-===//
//
// Between the checked program (and, next, the tensor IR's scalar-reference
// lowering) and LLVM: functions of structured statements over typed scalar
// expressions. Every expression has an exact scalar type; every conversion
// is an explicit Cast; every operation has defined results for every input
// (docs/semantics.md), so code generation introduces no undefined behaviour.
//
//   fn @gcd(%0: i64, %1: i64) -> i64 {
//     while (ne %1, 0:i64) { %2: i64 = rem %0, %1; %0 = %1; %1 = %2 }
//     return %0
//   }
//
//===----------------------------------------------------------------------===//
#ifndef KEEL_LOOP_LOOPIR_H
#define KEEL_LOOP_LOOPIR_H

#include "keel/support/ElementType.h"
#include "keel/support/Operators.h"

#include <cstdint>
#include <memory>
#include <optional>
#include <string>
#include <vector>

namespace keel::loop {

/// Scalar types: the element types of keel/support/ElementTypes.def (the
/// same enumerators in the same order, exact low-precision identity
/// included), then void and ptr. i4 has no values in the loop IR: it is
/// computed and stored in i8 (the verifier rejects it).
enum class Type : uint8_t {
#define KEEL_ELEMENT_TYPE(Enum, Spelling, Bits, Kind) Enum,
#include "keel/support/ElementTypes.def"
#undef KEEL_ELEMENT_TYPE
  Void,
  Ptr, ///< the address of a buffer's elements (a KeelBuffer's data)
};
/// The loop IR type of an element type (the same enumerator).
constexpr Type typeOf(ElementType e) { return static_cast<Type>(e); }
/// The element type a scalar type is; nullopt for void and ptr.
std::optional<ElementType> elementOf(Type t);
std::string_view typeName(Type t);

bool isIntegerType(Type t);
bool isSignedType(Type t);
bool isFloatType(Type t); ///< every floating format, low precision included
bool isLowPrecisionType(Type t); ///< f16 bf16 tf32 fp8e4m3fn fp8e5m2
int typeBits(Type t);     ///< width of the value (bool 1)

/// Every binary code of keel/support/Operators.def, then `land` and `lor`
/// (bool, short-circuit). Min and Max are IEEE 754-2019 minimum/maximum on
/// floats (a NaN operand gives that NaN; -0 < +0); Pow is
/// keel/numerics/Math.h's (f32, f64).
enum class BinaryOp : uint8_t {
#define KEEL_BINARY_CODE(Enum, name, source, operands, mlirFloat, mlirSigned, mlirUnsigned, stablehlo) Enum,
#include "keel/support/Operators.def"
#undef KEEL_BINARY_CODE
  LogicalAnd,
  LogicalOr,
};
/// The loop IR operation of a binary code (the same row).
constexpr BinaryOp binaryOp(BinaryCode c) {
  switch (c) {
#define KEEL_BINARY_CODE(Enum, name, source, operands, mlirFloat, mlirSigned, mlirUnsigned, stablehlo)            \
  case BinaryCode::Enum: return BinaryOp::Enum;
#include "keel/support/Operators.def"
#undef KEEL_BINARY_CODE
  }
  return BinaryOp::Add;
}
/// Abs clears a float's sign bit and is wrapping on integers (abs(MIN) ==
/// MIN); then every math function of keel/support/MathFunctions.def (f32,
/// f64 only), keel/numerics/Math.h's.
enum class UnaryOp : uint8_t {
  Neg,
  Not,
  BitNot,
  Abs,
#define KEEL_MATH_FUNCTION(Enum, name, mlir, stablehlo, summary) Enum,
#include "keel/support/MathFunctions.def"
#undef KEEL_MATH_FUNCTION
};
bool isMathOp(UnaryOp op);
/// The printed names: `add`, `land`, `exp`, ...
std::string_view binaryName(BinaryOp op);
std::string_view unaryName(UnaryOp op);
/// keel/support/Operators.def's comparisons.
using CompareOp = CompareDir;

struct Location {
  std::string file;
  uint32_t line = 0, column = 0;
};

using Slot = uint32_t; ///< a local variable (parameters first)

struct Expr {
  /// Load: operands are a Ptr and an i64 element index; the element's type
  /// is the expression's (a ptr too), stored in its carrier's width.
  /// Select: a bool and two operands of the result's type (both evaluated).
  /// Global: the address (Ptr) of the module's constant data `bits`.
  /// Alloc: a Ptr to operand-0 (i64) bytes, 64-byte aligned, not cleared
  /// (every lowering writes each element before reading it); a size the
  /// machine cannot give stops the program at `loc`.
  /// Runtime: a call of the runtime helper `callee` (a C symbol of
  /// keel/runtime, one of runtimeHelpers()).
  enum class Kind : uint8_t { Const, Var, Unary, Binary, Compare, Cast, Call, Load, Select, Global, Alloc, Runtime };
  Kind kind = Kind::Const;
  Type type = Type::Void;
  uint64_t bits = 0;          ///< Const: the value's encoding (a Ptr: only 0, null)
  Slot slot = 0;              ///< Var
  UnaryOp unary = UnaryOp::Neg;
  BinaryOp binary = BinaryOp::Add;
  CompareOp compare = CompareOp::Eq;
  std::string callee;         ///< Call
  std::vector<std::unique_ptr<Expr>> operands;
  Location loc;
};
using ExprPtr = std::unique_ptr<Expr>;

/// Builders for the common expressions (no location; callers set `loc`).
ExprPtr makeConst(Type t, uint64_t bits);
ExprPtr makeVar(Slot slot, Type t);
/// The result has the operand's type.
ExprPtr makeUnary(UnaryOp op, ExprPtr operand);
/// The result has the left operand's type (both operands share it).
ExprPtr makeBinary(BinaryOp op, ExprPtr lhs, ExprPtr rhs);
/// A bool.
ExprPtr makeCompare(CompareOp op, ExprPtr lhs, ExprPtr rhs);
/// `e` itself when it already has type `to`.
ExprPtr makeCast(ExprPtr e, Type to);
/// The result has `a`'s type.
ExprPtr makeSelect(ExprPtr cond, ExprPtr a, ExprPtr b);
/// Element `index` (an i64) of the buffer at `ptr`, of type `t`.
ExprPtr makeLoad(Type t, ExprPtr ptr, ExprPtr index);
ExprPtr makeCall(std::string callee, Type result, std::vector<ExprPtr> args);
/// Fresh memory for `bytes` bytes; a failure stops the program at `loc`.
ExprPtr makeAlloc(int64_t bytes, Location loc);

/// One piece of a print or assert message: literal text or a value. A
/// tensor value is a Ptr to row-major elements of element type
/// `tensorDType` (a KeelDType code) and shape `shape`.
struct TextPart {
  std::string text;
  ExprPtr value;
  int tensorDType = -1;
  std::vector<int64_t> shape;
};

struct Stmt {
  /// Store: `value` to element `index` of the Ptr variable `slot`, in
  /// `value`'s type. Free: releases the Alloc'd memory in Ptr `slot` (a
  /// null ptr is fine). CheckIndex: stops the program at `loc` unless
  /// 0 <= value (an i64) < extent, naming the axis.
  enum class Kind : uint8_t { Assign, If, For, Loop, Break, Continue, Return, Eval, Print, Assert, Store, Free,
                              CheckIndex };
  Kind kind = Kind::Eval;
  Slot slot = 0;               ///< Assign, For (the counter)
  ExprPtr value;               ///< Assign, If (condition), Return (may be null), Eval, Assert
  ExprPtr from, to;            ///< For: slot = from, from+1, ..., to-1
  ExprPtr index;               ///< Store
  int64_t extent = 0, axis = 0; ///< CheckIndex
  bool unsignedIndex = false;   ///< CheckIndex: the source's index was u64 (shown unsigned)
  /// For: the iterations are independent and may run on several threads
  /// at once, each a contiguous range of the counter (`for.parallel`;
  /// keel_rt_parallel_for). The verifier holds such a loop to: an i64
  /// counter; no other parallel loop inside; no return, print or assert,
  /// no break or continue out of it, no call of a function that checks
  /// its stack; every slot it assigns (its counter, its locals) private to
  /// it, used nowhere outside; no `free` of a buffer it did not allocate.
  /// What each iteration stores must be disjoint from what the others read
  /// and store: the lowering that marks a loop parallel guarantees it.
  bool parallel = false;
  std::vector<std::unique_ptr<Stmt>> body, orElse;
  std::vector<TextPart> text;  ///< Print, Assert (the message)
  Location loc;
};
using StmtPtr = std::unique_ptr<Stmt>;

/// Releases the Alloc'd memory in Ptr variable `slot`.
StmtPtr makeFree(Slot slot);

/// The runtime helpers a Runtime expression may call, with their types.
struct RuntimeHelper {
  std::string_view name;
  Type result;
  std::vector<Type> params;
};
const std::vector<RuntimeHelper> &runtimeHelpers();

struct Function {
  std::string name;
  std::vector<Type> slots; ///< parameters first, then locals
  size_t params = 0;
  Type result = Type::Void;
  std::vector<StmtPtr> body;
  Location loc;
  /// Checks the stack on entry and stops the program with "stack overflow
  /// (recursion too deep) in NAME at loc" when it is nearly used up
  /// (keel_rt_stack_overflow). Source functions and tests have it; the
  /// tensor IR cannot recurse.
  bool checksStack = false;
};

struct Module {
  std::vector<Function> functions;
  /// Test blocks, by name, as the functions that run them.
  std::vector<std::pair<std::string, std::string>> tests;
  /// Read-only data (tensor constants), addressed by Global expressions.
  std::vector<std::vector<uint8_t>> constants;
  const Function *find(std::string_view name) const;
};

std::string print(const Module &m);
/// Problems found; empty when the module is well formed.
std::vector<std::string> verify(const Module &m);

} // namespace keel::loop

#endif // KEEL_LOOP_LOOPIR_H
