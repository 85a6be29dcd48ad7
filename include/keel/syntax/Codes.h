//===- keel/syntax/Codes.h - Every diagnostic code, in one table -*- C++ -*-===//
//
// KEEL_DIAGNOSTIC_CODES is the list of codes Keel reports, each with a one-
// line meaning. docs/diagnostics.md explains each with an example; a test
// checks that every code here is documented there.
//
//===----------------------------------------------------------------------===//
#ifndef KEEL_SYNTAX_CODES_H
#define KEEL_SYNTAX_CODES_H

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
  X(E0012, "an assignment to something that is not a variable")

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

#endif // KEEL_SYNTAX_CODES_H
