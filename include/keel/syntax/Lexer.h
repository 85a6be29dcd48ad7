//===- keel/syntax/Lexer.h - Source text to tokens -------------*- C++ -*-===//
//
// Tokens: names, keywords, integer literals (`1_000`), float literals
// (`3.14`, `1.0e-6`, `2e5`), string literals (kept whole; the parser splits
// `${...}` interpolations), punctuation. `//` line and `/* */` block
// comments are skipped. Lexical errors are reported to the diagnostics
// engine and become Error tokens, so parsing goes on.
//
//===----------------------------------------------------------------------===//
#ifndef KEEL_SYNTAX_LEXER_H
#define KEEL_SYNTAX_LEXER_H

#include "keel/support/Diagnostics.h"
#include "keel/syntax/Token.h"

#include <vector>

namespace keel::syntax {

/// Lexes the bytes [begin, end) of a file (all of it by default).
std::vector<Token> lex(const SourceManager &sources, FileId file, DiagnosticEngine &diags,
                       uint32_t begin = 0, uint32_t end = ~uint32_t{0});

} // namespace keel::syntax

#endif // KEEL_SYNTAX_LEXER_H
