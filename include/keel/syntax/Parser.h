//===- keel/syntax/Parser.h - Tokens to AST --------------------*- C++ -*-===//
//
// A recursive-descent parser for the grammar of ../shared/spec/README.md §2.
// Errors are reported to the diagnostics engine and the parser recovers at
// the next statement (or, outside bodies, the next `fn` or `test`), so one
// run reports every independent error once. Constructs of full Sailfin that
// Keel does not support are reported as such (E0011) and skipped.
//
//===----------------------------------------------------------------------===//
#ifndef KEEL_SYNTAX_PARSER_H
#define KEEL_SYNTAX_PARSER_H

#include "keel/support/Diagnostics.h"
#include "keel/syntax/AST.h"

namespace keel::syntax {

/// How deep the parser lets source go (docs/reliability.md).
struct ParseLimits {
  /// Brackets, blocks, calls, indexing and prefix operators inside one
  /// another (E0013), as clang's -fbracket-depth; `keel --max-nesting N`.
  uint32_t maxNesting = 256;
};

/// The largest --max-nesting: deeper nesting could overflow the stack.
inline constexpr uint32_t kMaxNestingLimit = 4096;

/// The longest path from an expression (or dimension) to a leaf, and the
/// longest `else if` chain: a sum of 100,000 terms fits (E0014 above it).
/// The driver's stack (keel/support/Stack.h) is sized for it.
inline constexpr uint32_t kMaxExpressionHeight = uint32_t{1} << 17;

Program parse(const SourceManager &sources, FileId file, DiagnosticEngine &diags, ParseLimits limits = {});

/// A readable, stable dump of the tree, one node per line with its
/// line:column, for `keel check --dump-ast` and tests.
std::string dumpAst(const SourceManager &sources, const Program &program);

} // namespace keel::syntax

#endif // KEEL_SYNTAX_PARSER_H
