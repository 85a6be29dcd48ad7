//===- FuzzTest.cpp - The front end never crashes, whatever the input ----===//
//
// Random byte strings, random token sequences and random mutations of a
// valid program go through the lexer, the parser, the checker, both
// renderers and, when the checker accepts them, the lowering to loop IR and
// LLVM IR (both verified). Each run must end, every diagnostic must point inside its
// file, and no error may be reported twice at one place. Seeds are fixed and printed on failure, so a failure can be
// replayed; KEEL_FUZZ_ITERATIONS raises the count for longer runs.
//
//===----------------------------------------------------------------------===//
#include "keel/codegen/Codegen.h"
#include "keel/pipeline/Steps.h"
#include "keel/sema/Checker.h"
#include "keel/syntax/Parser.h"

#include <cstdlib>
#include <fstream>
#include <gtest/gtest.h>
#include <random>
#include <set>
#include <sstream>

using namespace keel;

namespace {

int iterations(int fallback) {
  const char *env = std::getenv("KEEL_FUZZ_ITERATIONS");
  return env ? std::max(1, std::atoi(env)) : fallback;
}

void runFrontEnd(const std::string &text, uint64_t seed) {
  SourceManager sources;
  FileId file = sources.add("fuzz.sfn", text);
  DiagnosticEngine diags(sources);
  syntax::Program program = syntax::parse(sources, file, diags);
  // Also on repaired trees: must not crash. A short solver timeout keeps
  // mutated non-linear obligations cheap (they end as E0211).
  static pipeline::ProofCache proofs(100);
  sema::CheckedProgram checked = sema::check(sources, program, diags, proofs.solver());
  // A program the front end accepts lowers to valid loop IR and valid LLVM
  // IR (or is refused as not runnable yet, E0500): never a crash or bad IR.
  if (diags.errorCount() == 0) {
    // The rest of the pipeline, on the same text (checked again, through it).
    pipeline::Options options;
    options.proofs = &proofs;
    DiagnosticEngine pipelineDiags(sources);
    pipeline::Compilation c(sources, pipelineDiags, options);
    std::optional<loop::Module> lowered = pipeline::compileProgram(c, file, ProgramRoots::Everything);
    for (const Diagnostic &d : pipelineDiags.diagnostics())
      ASSERT_NE(d.severity, Severity::Internal) << "seed " << seed << ": " << d.message << "\n--- input ---\n" << text;
    if (lowered) {
      std::vector<std::string> problems = loop::verify(*lowered);
      ASSERT_TRUE(problems.empty()) << "seed " << seed << ": " << problems[0] << "\n--- input ---\n" << text;
      std::string llvmProblems;
      ASSERT_TRUE(codegen::checkLLVM(*lowered, llvmProblems)) << "seed " << seed << ": " << llvmProblems
                                                               << "\n--- input ---\n" << text;
    }
  }
  syntax::dumpAst(sources, program);
  std::set<std::pair<std::string, uint32_t>> seen;
  for (const Diagnostic &d : diags.diagnostics()) {
    // The same error twice at the same place is a recovery bug.
    ASSERT_TRUE(seen.insert({d.code, d.span.begin}).second)
        << "seed " << seed << ": " << d.code << " reported twice at offset " << d.span.begin
        << ": " << d.message << "\n--- input ---\n" << text;
    ASSERT_TRUE(d.span.valid()) << "seed " << seed;
    ASSERT_LE(d.span.begin, d.span.end) << "seed " << seed;
    ASSERT_LE(d.span.end, text.size()) << "seed " << seed;
    ASSERT_NE(d.severity, Severity::Internal) << "seed " << seed << ": " << d.message;
    renderText(sources, d, true);
    renderJson(sources, d);
  }
}

TEST(FuzzTest, RandomBytes) {
  for (int i = 0; i < iterations(3000); ++i) {
    uint64_t seed = 1000 + static_cast<uint64_t>(i);
    std::mt19937_64 rng(seed);
    std::string text(rng() % 300, '\0');
    for (char &c : text)
      c = static_cast<char>(rng() % 4 == 0 ? rng() % 256 : " \n{}()[];:,.fnletx1\"$"[rng() % 20]);
    runFrontEnd(text, seed);
  }
}

TEST(FuzzTest, RandomTokenSequences) {
  static const char *vocabulary[] = {
      "fn", "test", "let", "mut", "if", "else", "for", "in", "while", "loop", "break", "continue",
      "return", "assert", "true", "false", "as", "requires", "struct", "match", "import", "(", ")",
      "[", "]", "{", "}", ",", ":", ";", ".", "..", "->", "=", "+=", "==", "!=", "<", "<=", ">",
      "+", "-", "*", "/", "%", "&", "|", "^", "~", "!", "&&", "||", "![", "x", "y", "main", "print",
      "sum", "matmul", "Tensor", "f16", "bf16", "tf32", "fp8e4m3fn", "fp8", "i64", "int", "float",
      "B", "D", "0", "1", "1_000", "3.14", "1e-8", "1000.0", "\"s\"", "\"${x}\"", "\"${\"", "axis:",
      "acc:", "dtype:",
  };
  const size_t n = sizeof vocabulary / sizeof *vocabulary;
  for (int i = 0; i < iterations(3000); ++i) {
    uint64_t seed = 50000 + static_cast<uint64_t>(i);
    std::mt19937_64 rng(seed);
    std::string text;
    size_t count = rng() % 80;
    for (size_t t = 0; t < count; ++t)
      text += std::string(vocabulary[rng() % n]) + (rng() % 5 ? " " : "\n");
    runFrontEnd(text, seed);
  }
}

void mutateProgram(const std::string &path, uint64_t firstSeed, int count) {
  std::ifstream in(path);
  ASSERT_TRUE(in) << path;
  std::stringstream buffer;
  buffer << in.rdbuf();
  const std::string original = buffer.str();
  for (int i = 0; i < iterations(count); ++i) {
    uint64_t seed = firstSeed + static_cast<uint64_t>(i);
    std::mt19937_64 rng(seed);
    std::string text = original;
    for (int edits = 1 + static_cast<int>(rng() % 4); edits > 0 && !text.empty(); --edits) {
      size_t at = rng() % text.size();
      switch (rng() % 3) {
      case 0: text.erase(at, 1 + rng() % 8); break;
      case 1: text.insert(at, 1, "{}();\"$[]<>,:"[rng() % 13]); break;
      default: text[at] = static_cast<char>(rng() % 128); break;
      }
    }
    runFrontEnd(text, seed);
  }
}

TEST(FuzzTest, MutatedValidProgram) { mutateProgram(KEEL_TEST_SOURCE_DIR "/sema/valid.sfn", 90000, 1500); }

// Tensor code: the shape checker and the solver under broken programs.
TEST(FuzzTest, MutatedTransformer) {
  mutateProgram(KEEL_TEST_SOURCE_DIR "/../examples/transformer.sfn", 200000, 1500);
}

} // namespace
