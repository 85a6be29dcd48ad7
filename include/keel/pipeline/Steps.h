//===- keel/pipeline/Steps.h - The pipeline's steps, in order ---*- C++ -*-===//
//
// The steps behind pipeline::compile (Pipeline.h), for the pipeline itself
// and for tests that drive one step at a time. Tools call compile().
//
//   source (.sfn)   frontEnd:      parse -> check
//                   instantiate:   the entry at static sizes (tensor IR),
//                                  or a whole program (loop IR for scalar
//                                  code, tensor IR for its tensor
//                                  expressions) -> verify
//   IR text (.kir)  readIr:        parse -> verify (user errors: E0301)
//   tensor IR       gradient:      --grad: the entry's value and gradient
//                                  (autodiff) -> verify
//                   runPasses:     each pass, then the verifier
//   one exit        lowerForCpu:   schedule -> lower -> verify loop IR
//                                  (Target::CpuReference: the reference
//                                  lowering alone)
//                   emitLinalg:    the MLIR linalg exit (text; E0915 for
//                                  what it cannot express)
//                   emitStableHlo: the StableHLO exit (text; E0915, and
//                                  E0120 for an entry without ![gpu])
//   loop IR         jit:           LLVM IR, then the compile cache's objects
//                                  (a hit) or LLVM's -O2 and machine code,
//                                  in parts on threads (stored); ORC JIT
//
// Each step is timed under its name, printed after when asked, and
// verified; a verifier failure after a step is Keel's bug: an internal
// compiler error naming the step, with the IR it produced as a note.
//
//===----------------------------------------------------------------------===//
#ifndef KEEL_PIPELINE_STEPS_H
#define KEEL_PIPELINE_STEPS_H

#include "keel/codegen/Codegen.h"
#include "keel/exits/Linalg.h"
#include "keel/exits/StableHlo.h"
#include "keel/instantiate/Builder.h"
#include "keel/ir/IR.h"
#include "keel/loop/LoopIR.h"
#include "keel/pipeline/Pipeline.h"
#include "keel/sema/Checker.h"
#include "keel/syntax/AST.h"

#include <memory>
#include <optional>
#include <string>

namespace keel::pipeline {

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

/// The entry of `m` made its value-and-gradient function with respect to
/// the parameters at `wrt` (autodiff::valueAndGradient), then verified;
/// false after reporting why not (E0600 at the operation, or an internal
/// error).
bool gradient(Compilation &c, ir::Module &m, const std::string &entry, const std::vector<size_t> &wrt);

/// The tensor IR passes (fusion, when on: `fuseByDefault` unless --fuse or
/// --no-fuse said; then --test-pass's), each followed by the verifier.
/// False after an internal error.
bool runPasses(Compilation &c, ir::Module &m, bool fuseByDefault);

/// The CPU exit: the schedule and the lowering that realizes it (for
/// Target::CpuReference, the reference lowering alone) of every function
/// of `m` into `into`, then the loop IR verifier.
std::optional<loop::Module> lowerForCpu(Compilation &c, const ir::Module &m, loop::Module into = {});

/// The MLIR linalg exit: the module's text, or nullopt after reporting
/// what it cannot express (E0915, at the operation's source location).
std::optional<std::string> emitLinalg(Compilation &c, const ir::Module &m, const exits::LinalgOptions &options);

/// The StableHLO exit: the module's text, or nullopt after reporting what
/// it cannot express (E0915) or an entry that does not declare `![gpu]`
/// (E0120, with the signature that declares it as help).
std::optional<std::string> emitStableHlo(Compilation &c, const ir::Module &m, const exits::StableHloOptions &options);

/// A whole program (scalar functions, tests and their tensor expressions,
/// from `roots`): frontEnd, then lowerProgram.
std::optional<loop::Module> compileProgram(Compilation &c, FileId file, ProgramRoots roots);
/// A checked program's instantiation from `roots` (what they reach),
/// runPasses (fusion on by default) and lowerForCpu.
std::optional<loop::Module> lowerProgram(Compilation &c, const Checked &source, ProgramRoots roots);

/// LLVM code generation, its -O2 pipeline and the JIT; nullptr after an
/// internal error (verified loop IR must compile).
std::unique_ptr<codegen::Program> jit(Compilation &c, const loop::Module &m);

} // namespace keel::pipeline

#endif // KEEL_PIPELINE_STEPS_H
