//===- keel/sema/Builtins.h - The built-in functions, from one table -*- C++ -*-===//
//
// Every built-in function is a row of Builtins.def: its name, the typing
// rule the checker applies (its family), the element types it admits, the
// tensor IR it becomes, its named arguments and its documentation line.
// The checker resolves each call to a row and records it
// (CheckedProgram::builtinCalls); the instantiation and the scalar lowering
// read the row, never the name.
//
//===----------------------------------------------------------------------===//
#ifndef KEEL_SEMA_BUILTINS_H
#define KEEL_SEMA_BUILTINS_H

#include "keel/support/ElementType.h"

#include <cstdint>
#include <span>
#include <string_view>
#include <vector>

namespace keel::sema {

enum class BuiltinId : uint8_t {
#define KEEL_BUILTIN(Id, Name, Family, Dtypes, Becomes, Named, Signature, Summary) Id,
#include "keel/sema/Builtins.def"
#undef KEEL_BUILTIN
};

/// The typing rule a built-in follows (one case each in the checker and the
/// instantiation).
enum class BuiltinFamily : uint8_t {
  Unary, Binary, Select, Matmul, Reduce, ReduceIndex, ReduceBool, Transpose, Reshape, Broadcast, Slice, Concat, Full,
  Zeros, Iota, TensorLit, Random, Print,
};

/// Element-type admissibility (Phase 0 §4-§8), for built-ins and operators.
enum class Admits : uint8_t {
  FloatMath,   ///< floats: exp log tanh sigmoid gelu silu sqrt rsqrt, mean
  SignedMath,  ///< floats and signed integers: relu neg abs
  IntegerBits, ///< integers: bitwise_not
  Arithmetic,  ///< not bool: + - * / pow min max, matmul
  Bitwise,     ///< integers and bool: & | ^
  Reduce,      ///< not bool: sum prod max min argmax argmin
  ReduceLogic, ///< bool: any all
  Any,         ///< every element type: shapes and constructors
};
bool admits(Admits a, ElementType t);
/// "floating-point elements", ...
std::string_view admittedText(Admits a);

struct BuiltinInfo {
  BuiltinId id;
  std::string_view name;
  BuiltinFamily family;
  Admits admits;
  std::string_view named; ///< its named arguments, comma-separated
  std::string_view signature, summary;
  /// The named arguments, one by one.
  std::vector<std::string_view> namedArguments() const;
};

/// Every row, in table order.
std::span<const BuiltinInfo> builtins();
const BuiltinInfo &builtinInfo(BuiltinId id);
/// The row a call of `name` means: of a name with an elementwise and a
/// reducing row, the reducing one when `reductionForm` (named arguments, or
/// one positional argument). Null when no built-in has the name.
const BuiltinInfo *findBuiltin(std::string_view name, bool reductionForm);

} // namespace keel::sema

#endif // KEEL_SEMA_BUILTINS_H
