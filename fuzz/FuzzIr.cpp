//===- FuzzIr.cpp - libFuzzer: tensor IR text through parser and verifier -===//
//
// Any bytes as .kir text: parsed, verified, and, when valid, printed,
// parsed again and printed again: the canonical text must be a fixed point
// (docs/ir.md), so the printer and parser agree on every valid module.
//
//===----------------------------------------------------------------------===//
#include "keel/ir/Text.h"
#include "keel/ir/Verifier.h"

#include <cstdio>
#include <cstdlib>

namespace {
std::optional<keel::ir::Module> parseText(keel::SourceManager &sources, std::string text, keel::DiagnosticEngine &diags) {
  keel::FileId file = sources.add("fuzz.kir", std::move(text));
  return keel::ir::parse(sources, file, diags);
}
} // namespace

extern "C" int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size) {
  keel::SourceManager sources;
  keel::DiagnosticEngine diags(sources);
  std::optional<keel::ir::Module> m = parseText(sources, std::string(reinterpret_cast<const char *>(data), size), diags);
  if (!m || diags.errorCount() > 0 || !keel::ir::verify(*m).empty())
    return 0;
  std::string first = keel::ir::print(*m);
  keel::DiagnosticEngine again(sources);
  std::optional<keel::ir::Module> reparsed = parseText(sources, first, again);
  if (!reparsed || again.errorCount() > 0 || !keel::ir::verify(*reparsed).empty() ||
      keel::ir::print(*reparsed) != first) {
    std::fprintf(stderr, "a verified module's printed text does not read back the same:\n%s\n", first.c_str());
    std::abort();
  }
  return 0;
}
