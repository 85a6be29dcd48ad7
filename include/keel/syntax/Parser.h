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

Program parse(const SourceManager &sources, FileId file, DiagnosticEngine &diags);

/// A readable, stable dump of the tree, one node per line with its
/// line:column, for `keel check --dump-ast` and tests.
std::string dumpAst(const SourceManager &sources, const Program &program);

} // namespace keel::syntax

#endif // KEEL_SYNTAX_PARSER_H
