//===- FuzzSource.cpp - libFuzzer: source text through the checker -------===//
//
// Any bytes as a .sfn file: lexer, parser (with its nesting and depth
// limits) and, when it parses, the whole checker with Z3 on a short time
// limit. Nothing may crash, and every diagnostic must lie inside the file.
//
//===----------------------------------------------------------------------===//
#include "keel/sema/Checker.h"
#include "keel/sema/Solver.h"
#include "keel/syntax/Parser.h"

#include <cstdio>
#include <cstdlib>

extern "C" int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size) {
  keel::SourceManager sources;
  keel::FileId file = sources.add("fuzz.sfn", std::string(reinterpret_cast<const char *>(data), size));
  keel::DiagnosticEngine diags(sources);
  keel::syntax::Program program = keel::syntax::parse(sources, file, diags);
  if (diags.errorCount() == 0) {
    keel::sema::ShapeSolver solver(50); // ms: the fuzzer wants many inputs a second
    keel::sema::check(sources, program, diags, solver);
  }
  for (const keel::Diagnostic &d : diags.diagnostics())
    if (d.span.valid() && (d.span.begin > d.span.end || d.span.end > size)) {
      std::fprintf(stderr, "diagnostic span [%u, %u) outside the %zu-byte file: %s\n", d.span.begin, d.span.end,
                   size, d.message.c_str());
      std::abort();
    }
  return 0;
}
