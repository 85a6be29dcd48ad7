//===- keel/support/Codes.h - Every diagnostic code, in one table -*- C++ -*-===//
//
// KEEL_DIAGNOSTIC_CODES is the list of codes Keel reports, each with a one-
// line meaning. docs/diagnostics.md explains each with an example; a test
// checks that every code here is documented there.
//
//===----------------------------------------------------------------------===//
#ifndef KEEL_SUPPORT_CODES_H
#define KEEL_SUPPORT_CODES_H

#include <span>
#include <string_view>

namespace keel {

#define KEEL_DIAGNOSTIC_CODES(X)                                               \
  /* Lexical and syntax errors. */                                             \
  X(E0001, "a character that is not part of the language")                     \
  X(E0002, "a string literal without its closing quote")                       \
  X(E0003, "an unknown escape sequence or a malformed interpolation in a string") \
  X(E0004, "a malformed number literal")                                        \
  X(E0005, "a block comment without its closing */")                            \
  X(E0010, "a token where the grammar expects something else")                  \
  X(E0011, "a construct of full Sailfin that Keel does not support")            \
  X(E0012, "an assignment to something that is not a variable")               \
  X(E0013, "brackets, blocks or prefix operators nested deeper than the limit") \
  X(E0014, "an expression or `else if` chain longer than the limit")           \
  /* Names, types, statements. */                                             \
  X(E0100, "a name that is not defined here")                                   \
  X(E0101, "a function or test defined twice, or a built-in redefined")         \
  X(E0102, "a type name that does not exist")                                   \
  X(E0103, "a call with the wrong number of arguments")                         \
  X(E0104, "a call to a function that does not exist")                          \
  X(E0105, "an assignment to a variable that is not `let mut`")                 \
  X(E0106, "a value of one type where another is required")                     \
  X(E0107, "a function that can end without returning its value")              \
  X(E0108, "`break` or `continue` outside a loop")                              \
  X(E0109, "a condition that is not `bool`")                                    \
  X(E0110, "an operator or index applied to a type that does not have it")      \
  X(E0111, "an integer literal that does not fit its type")                     \
  X(E0112, "a cast between types that do not convert")                          \
  X(E0113, "a named argument a function does not take, or given twice")         \
  X(E0114, "a `main` function with the wrong signature")                        \
  /* Shapes (Phase 0 §4-§14). */                                                 \
  X(E0200, "elementwise operands whose shapes differ and do not broadcast")       \
  X(E0201, "a matmul whose contraction dimensions differ")                       \
  X(E0202, "a matmul of a rank-0 operand or batch dimensions that do not broadcast")\
  X(E0203, "an axis that is missing, not a constant, or out of range; an index count that is not the rank") \
  X(E0204, "a transpose whose permutation is not one")                           \
  X(E0205, "a broadcast to a shape the tensor does not broadcast to")            \
  X(E0206, "slice bounds that may fall outside the dimension")                   \
  X(E0207, "a concat whose other dimensions differ")                             \
  X(E0208, "a call whose callee's requires clause may not hold")                \
  X(E0209, "call arguments whose shapes do not match the parameters")            \
  X(E0210, "a value whose shape is not the declared one")                       \
  X(E0211, "a shape fact the solver could not prove (unknown or timeout)")      \
  X(E0212, "a dimension outside the allowed arithmetic, or a name that is not a shape variable") \
  X(E0213, "a tensor operation on an element type it does not take")            \
  X(E0214, "a dimension divided by a dimension that may not divide it")          \
  /* Tensor IR text (keel opt). */                                               \
  X(E0300, "malformed tensor IR text")                                           \
  X(E0301, "tensor IR that breaks a verifier rule")                              \
  /* Instantiation (keel ir). */                                                 \
  X(E0400, "a missing or unknown shape-variable binding, or no such function")   \
  X(E0401, "a requires clause that does not hold at the bound sizes")           \
  X(E0402, "a reshape whose volume does not hold at the bound sizes")           \
  X(E0403, "a construct that does not become tensor IR")                         \
  X(E0404, "a dimension that is not positive, or too large, at the bound sizes") \
  /* Running programs (keel run, keel test). */                                 \
  X(E0500, "code the CPU exit does not run yet")                                 \
  X(W0510, "the compile cache was not used, or an entry of it was discarded")     \
  /* Gradients (keel run --grad, keel ir --grad). */                            \
  X(E0600, "a gradient that cannot be made: a low-precision value on its path, or no f32/f64 scalar result") \
  /* Effects. */                                                                \
  X(E0120, "a call whose effects the caller does not declare")                  \
  X(E0121, "an effect name that does not exist")                                \
  /* Low-precision numerics (SFEP-0054 §3.8, ../shared/spec/README.md §5). */   \
  X(E0910, "an unknown or ambiguous low-precision spelling")                    \
  X(E0911, "mixed formats in one arithmetic operation or comparison")          \
  X(E0912, "an implicit conversion where `as` is required, or a cast never allowed") \
  X(E0913, "an invalid accumulator type")                                        \
  X(E0914, "scalar arithmetic on an fp8 type")                                    \
  X(E0915, "a type or operation a backend or target cannot represent")           \
  /* Warnings. */                                                                \
  X(W0901, "a float literal too large for its type: it becomes infinity or saturates") \
  X(W0902, "a nonzero float literal too small for its type: it becomes zero")

#define KEEL_DIAGNOSTIC_CODE_CONSTANT(Code, Meaning) inline constexpr const char *Code = #Code;
namespace code {
KEEL_DIAGNOSTIC_CODES(KEEL_DIAGNOSTIC_CODE_CONSTANT)
}
#undef KEEL_DIAGNOSTIC_CODE_CONSTANT

struct DiagnosticCodeInfo {
  std::string_view code, meaning;
};
std::span<const DiagnosticCodeInfo> allDiagnosticCodes();

} // namespace keel

#endif // KEEL_SUPPORT_CODES_H
