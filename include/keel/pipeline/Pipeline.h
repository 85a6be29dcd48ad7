//===- keel/pipeline/Pipeline.h - The one compile pipeline ------*- C++ -*-===//
//
// Every subcommand that compiles goes through these steps, in this order
// (src/pipeline/Pipeline.cpp reads top to bottom the same way):
//
//   source (.sfn)   frontEnd:      parse -> check
//                   instantiate:   the entry at static sizes (tensor IR),
//                                  or a whole program (loop IR for scalar
//                                  code, tensor IR for its tensor
//                                  expressions) -> verify
//   IR text (.kir)  readIr:        parse -> verify (user errors: E0301)
//   tensor IR       runPasses:     each pass, then the verifier
//   one exit        lowerForCpu:   [schedule] -> lower -> verify loop IR
//                                  (--exit reference: no schedule)
//                   emitLinalg:    the MLIR linalg exit (text; E0915 for
//                                  what it cannot express)
//                   emitStableHlo: the StableHLO exit (text; E0915, and
//                                  E0120 for an entry without ![gpu])
//   loop IR         jit:           LLVM IR, LLVM's -O2, machine code (ORC JIT)
//
// A Compilation carries the options and the instrumentation, as LLVM's pass
// instrumentation does: --print-after=STEP / --print-after-all print the IR
// a step produced (a pass's only when it changed the module) to stderr, and
// --time-passes prints each step's wall time when the Compilation ends. A
// verifier failure after a step is Keel's bug: an internal compiler error
// naming the step, with the IR it produced as a note.
//
//===----------------------------------------------------------------------===//
#ifndef KEEL_PIPELINE_PIPELINE_H
#define KEEL_PIPELINE_PIPELINE_H

#include "keel/codegen/Codegen.h"
#include "keel/exits/Linalg.h"
#include "keel/exits/StableHlo.h"
#include "keel/instantiate/Builder.h"
#include "keel/ir/IR.h"
#include "keel/loop/LoopIR.h"
#include "keel/sema/Checker.h"
#include "keel/sema/Solver.h"
#include "keel/support/Diagnostics.h"
#include "keel/syntax/AST.h"
#include "keel/syntax/Parser.h"

#include <chrono>
#include <cstdio>
#include <memory>
#include <optional>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

namespace keel::pipeline {

/// Where the pipeline ends for `keel run` and `keel test`.
enum class Exit : uint8_t {
  Cpu,          ///< the reference lowering realizing the CPU schedule (default)
  CpuReference, ///< the reference lowering alone (--exit reference): the definition
};

struct Options {
  syntax::ParseLimits limits; ///< --max-nesting N
  Exit exit = Exit::Cpu;
  bool printAfterAll = false;
  std::vector<std::string> printAfter; ///< --print-after=STEP (may repeat)
  bool timePasses = false;
  /// --test-pass=NAME: passes that exist only to test the pipeline, run
  /// after the default passes.
  std::vector<std::string> testPasses;
  /// --fuse / --no-fuse; unset: the command's default (on for run, test and
  /// emit; off for ir and opt, which show the graph as written).
  std::optional<bool> fuse;
  bool explainFusion = false; ///< --explain-fusion: every edge considered, on stderr
  bool stats = false;         ///< --stats: what the passes did (regions, bytes)
  /// The checker's shape solver (its timeout, cache and statistics), kept
  /// across compilations by `keel check`; null: a fresh one, 2 s timeout.
  sema::ShapeSolver *solver = nullptr;
};

/// The names --print-after accepts: every step that produces IR, and every
/// tensor pass (test passes included).
std::vector<std::string_view> stepNames();
/// The test passes --test-pass accepts.
std::vector<std::string_view> testPassNames();

/// One compilation: the sources, its diagnostics, the options and the
/// instrumentation. Prints the --time-passes report when it ends.
class Compilation {
public:
  Compilation(SourceManager &sources, DiagnosticEngine &diags, const Options &options)
      : sources(sources), diags(diags), options(options) {}
  ~Compilation();
  Compilation(const Compilation &) = delete;
  Compilation &operator=(const Compilation &) = delete;

  SourceManager &sources;
  DiagnosticEngine &diags;
  const Options &options;

  /// Runs `step`, adding its wall time to the report under `name`.
  template <typename F> auto timed(std::string_view name, F &&step) -> decltype(step()) {
    auto start = std::chrono::steady_clock::now();
    struct Record {
      Compilation &c;
      std::string_view name;
      std::chrono::steady_clock::time_point start;
      ~Record() { c.addTime(name, std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count()); }
    } record{*this, name, start};
    return step();
  }
  /// Adds `seconds` to the report under `name` (for steps timed inside
  /// another layer, such as LLVM's).
  void addTime(std::string_view name, double seconds);
  /// Prints `text()` as the IR after `name` when --print-after asks for it
  /// and the step changed something.
  template <typename F> void printAfter(std::string_view name, bool changed, F &&text) {
    if (changed && wantsPrintAfter(name))
      dump(name, text());
  }

private:
  bool wantsPrintAfter(std::string_view name) const;
  void dump(std::string_view name, const std::string &ir) const;
  std::vector<std::pair<std::string, double>> times_; ///< in first-run order
};

/// A parsed and checked source file; `ok` when neither step reported an
/// error (the program is kept either way, for `keel check --dump-ast`).
struct Checked {
  syntax::Program program;
  sema::CheckedProgram checked;
  bool ok = false;
};

/// parse -> check (the type checker runs only on a tree without syntax
/// errors: a tree the parser repaired would give follow-on errors).
Checked frontEnd(Compilation &c, FileId file);

/// Instantiates `request.entry` at its bound sizes and verifies the result.
std::optional<ir::Module> instantiateEntry(Compilation &c, const Checked &source,
                                           const instantiate::BuildRequest &request);

/// Reads tensor IR text and verifies it (problems are the user's: E0301).
std::optional<ir::Module> readIr(Compilation &c, FileId file);

/// The tensor IR passes (fusion, when on: `fuseByDefault` unless --fuse or
/// --no-fuse said; then --test-pass's), each followed by the verifier.
/// False after an internal error.
bool runPasses(Compilation &c, ir::Module &m, bool fuseByDefault);

/// The CPU exit: the chosen schedule (none for --exit reference), the
/// lowering of every function of `m` into `into`, the loop IR verifier.
std::optional<loop::Module> lowerForCpu(Compilation &c, const ir::Module &m, loop::Module into = {});

/// The MLIR linalg exit: the module's text, or nullopt after reporting
/// what it cannot express (E0915, at the operation's source location).
std::optional<std::string> emitLinalg(Compilation &c, const ir::Module &m, const exits::LinalgOptions &options);

/// The StableHLO exit: the module's text, or nullopt after reporting what
/// it cannot express (E0915) or an entry that does not declare `![gpu]`
/// (E0120, with the signature that declares it as help).
std::optional<std::string> emitStableHlo(Compilation &c, const ir::Module &m, const exits::StableHloOptions &options);

/// A whole program (scalar functions, tests and their tensor expressions):
/// frontEnd, instantiate, runPasses (fusion on by default), lowerForCpu.
std::optional<loop::Module> compileProgram(Compilation &c, FileId file);

/// LLVM code generation, its -O2 pipeline and the JIT; nullptr after an
/// internal error (verified loop IR must compile).
std::unique_ptr<codegen::Program> jit(Compilation &c, const loop::Module &m);

} // namespace keel::pipeline

#endif // KEEL_PIPELINE_PIPELINE_H
