//===- keel/syntax/Token.h - Tokens of the Sailfin subset ------*- C++ -*-===//
//
// One table (KEEL_TOKENS) gives every token kind and its spelling; the enum
// and the name function come from it.
//
//===----------------------------------------------------------------------===//
#ifndef KEEL_SYNTAX_TOKEN_H
#define KEEL_SYNTAX_TOKEN_H

#include "keel/support/Source.h"

#include <string_view>

namespace keel::syntax {

// X(Name, "spelling") for punctuation and keywords; literals and names have
// a descriptive spelling in angle brackets.
#define KEEL_TOKENS(X)                                                         \
  X(Eof, "<end of file>")                                                      \
  X(Error, "<invalid token>")                                                  \
  X(Name, "<name>")                                                            \
  X(Int, "<integer>")                                                          \
  X(Float, "<float>")                                                          \
  X(String, "<string>")                                                        \
  X(LParen, "(") X(RParen, ")") X(LBracket, "[") X(RBracket, "]")              \
  X(LBrace, "{") X(RBrace, "}") X(Comma, ",") X(Colon, ":") X(Semi, ";")       \
  X(Dot, ".") X(DotDot, "..") X(Arrow, "->") X(FatArrow, "=>")                 \
  X(Assign, "=") X(PlusAssign, "+=") X(MinusAssign, "-=")                      \
  X(StarAssign, "*=") X(SlashAssign, "/=")                                     \
  X(EqEq, "==") X(NotEq, "!=") X(Less, "<") X(LessEq, "<=") X(Greater, ">")    \
  X(GreaterEq, ">=") X(Plus, "+") X(Minus, "-") X(Star, "*") X(Slash, "/")     \
  X(Percent, "%") X(Amp, "&") X(Pipe, "|") X(Caret, "^") X(Tilde, "~")         \
  X(Bang, "!") X(AmpAmp, "&&") X(PipePipe, "||") X(Question, "?") X(At, "@")   \
  X(Hash, "#")                                                                 \
  X(KwFn, "fn") X(KwTest, "test") X(KwLet, "let") X(KwMut, "mut")              \
  X(KwIf, "if") X(KwElse, "else") X(KwFor, "for") X(KwIn, "in")                \
  X(KwWhile, "while") X(KwLoop, "loop") X(KwBreak, "break")                    \
  X(KwContinue, "continue") X(KwReturn, "return") X(KwAssert, "assert")        \
  X(KwTrue, "true") X(KwFalse, "false") X(KwAs, "as")                          \
  X(KwRequires, "requires")                                                    \
  /* Full-Sailfin keywords that Keel recognizes only to refuse clearly. */     \
  X(KwStruct, "struct") X(KwEnum, "enum") X(KwMatch, "match")                  \
  X(KwImport, "import") X(KwTry, "try") X(KwCatch, "catch")                    \
  X(KwUse, "use") X(KwImpl, "impl") X(KwTrait, "trait")                        \
  X(KwInterface, "interface") X(KwType, "type") X(KwConst, "const")            \
  X(KwAsync, "async") X(KwAwait, "await") X(KwSpawn, "spawn")

enum class Tok : uint8_t {
#define KEEL_TOKEN_ENUM(Name, Spelling) Name,
  KEEL_TOKENS(KEEL_TOKEN_ENUM)
#undef KEEL_TOKEN_ENUM
};

/// The spelling ("(", "fn") or description ("<name>") of a kind.
std::string_view tokenSpelling(Tok t);
/// True for the keywords of full Sailfin that Keel refuses.
bool isUnsupportedKeyword(Tok t);

struct Token {
  Tok kind = Tok::Eof;
  Span span;
};

} // namespace keel::syntax

#endif // KEEL_SYNTAX_TOKEN_H
