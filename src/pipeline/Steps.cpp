//===- Steps.cpp - The pipeline's steps, top to bottom --------------------===//
//
// Each step below is one call (into the layer that does the work), then its
// instrumentation: timed under its name, printed after when asked, and
// verified, with a failure reported as an internal compiler error naming
// the step. Subcommands call these steps in this order and assemble nothing
// themselves.
//
//===----------------------------------------------------------------------===//
#include "keel/pipeline/Steps.h"

#include "keel/autodiff/Gradient.h"
#include "keel/codegen/Codegen.h"
#include "keel/instantiate/LowerScalar.h"
#include "keel/ir/Text.h"
#include "keel/ir/Verifier.h"
#include "keel/sema/Solver.h"
#include "keel/syntax/Parser.h"
#include "keel/exits/cpu/Lower.h"
#include "keel/exits/cpu/Schedule.h"
#include "keel/support/Codes.h"
#include "keel/exits/Linalg.h"
#include "keel/exits/StableHlo.h"
#include "keel/transforms/Fusion.h"
#include "keel/transforms/Legalize.h"
#include "keel/transforms/TestPasses.h"

#include <algorithm>
#include <cctype>
#include <functional>
#include <map>
#include <unordered_map>
#include <exception>
#include <stdexcept>

namespace keel::pipeline {

namespace {

/// A tensor IR pass: rewrites the module in place, returns whether it
/// changed it.
struct TensorPass {
  std::string_view name;
  bool (*run)(Compilation &, ir::Module &);
};

/// Fusion (transforms/Fusion.h) with the options' reports: --explain-fusion
/// lists every edge considered, --stats the regions and bytes.
bool fusion(Compilation &c, ir::Module &m) {
  transforms::FusionReport report;
  bool changed = transforms::fuse(m, {}, &report);
  if (c.options.explainFusion) {
    // Named in the fused function, as its printed IR, --dot and exits are.
    std::map<std::string, std::unordered_map<ir::ValueId, std::string>> names;
    for (const ir::Function &f : m.functions)
      names.emplace(f.name, ir::displayNames(f));
    auto end = [&](const std::string &function, const std::vector<ir::ValueId> &results, const std::string &op) {
      std::string s;
      for (ir::ValueId r : results) {
        auto it = names[function].find(r);
        s += (s.empty() ? "" : ", ") + (it != names[function].end() ? it->second : "%?");
      }
      return s.empty() ? op : s + " = " + op;
    };
    for (const transforms::FusionReport::Edge &e : report.edges)
      std::fprintf(stderr, "fusion @%s: %s -> %s: %s\n", e.function.c_str(),
                   end(e.function, e.producerResults, e.producerOp).c_str(),
                   end(e.function, e.consumerResults, e.consumerOp).c_str(),
                   e.fused ? "fused" : ("not fused: " + e.reason).c_str());
  }
  if (c.options.stats)
    std::fprintf(stderr,
                 "fusion: %zu region%s formed; intermediate tensors materialized: %lld bytes unfused, %lld bytes "
                 "fused\n",
                 report.regions, report.regions == 1 ? "" : "s", static_cast<long long>(report.bytesUnfused),
                 static_cast<long long>(report.bytesFused));
  return changed;
}

/// The capability record of the exit the options name.
const transforms::Capabilities &capabilities(Target t) {
  switch (t) {
  case Target::Cpu: case Target::CpuReference: return cpu::cpuCapabilities();
  case Target::Linalg: return exits::linalgCapabilities();
  case Target::StableHlo: return exits::stableHloCapabilities();
  }
  return cpu::cpuCapabilities();
}

/// Legalization (transforms/Legalize.h) for the target's exit: what it
/// does not provide natively, written out as tensor IR ops, before fusion
/// packs them with their neighbours.
bool legalization(Compilation &c, ir::Module &m) { return transforms::legalize(m, capabilities(c.options.target)); }

/// The passes of the default pipeline, in order.
constexpr TensorPass kDefaultPasses[] = {
    {"legalize", legalization},
    {"fuse", fusion},
};
/// Passes that exist for the pipeline's tests (--test-pass=NAME).
constexpr TensorPass kTestPasses[] = {
    {"test-insert-copies", [](Compilation &, ir::Module &m) { return transforms::testInsertCopies(m); }},
    {"test-break-verifier", [](Compilation &, ir::Module &m) { return transforms::testBreakVerifier(m); }},
    {"test-change-silently", [](Compilation &, ir::Module &m) { return !transforms::testInsertCopies(m); }},
    {"test-throw", [](Compilation &, ir::Module &) -> bool { throw std::out_of_range("an index out of range"); }},
};
/// The steps that produce IR, besides the passes.
constexpr std::string_view kSteps[] = {"instantiate", "gradient", "schedule", "lower"};

/// Verifies tensor IR a step produced; an internal compiler error naming
/// the step, with the function's IR, when it fails.
bool verifyAfter(Compilation &c, std::string_view step, const ir::Module &m) {
  std::vector<ir::VerifierError> problems = ir::verify(m);
  for (const ir::VerifierError &e : problems) {
    Diagnostic &d = c.diags.internalError(
        Span{}, "the tensor IR after `" + std::string(step) + "` fails verification: " + e.message);
    if (e.function)
      d.note("`" + std::string(step) + "` produced this IR:\n" + ir::print(*e.function, {true}));
  }
  return problems.empty();
}

/// Runs `step`'s work; a C++ exception out of it (a missing table entry, an
/// index out of range: Keel's own bug) becomes an internal compiler error
/// that names the step, not a crash. False then.
template <typename F> bool guarded(Compilation &c, std::string_view step, F &&work) {
  try {
    work();
    return true;
  } catch (const std::exception &e) {
    c.diags.internalError(Span{}, "`" + std::string(step) + "` failed: " + e.what());
    return false;
  }
}

bool verifyLoops(Compilation &c, std::string_view step, const loop::Module &m) {
  std::vector<std::string> problems = loop::verify(m);
  for (const std::string &p : problems)
    c.diags.internalError(Span{}, "the loop IR after `" + std::string(step) + "` fails verification: " + p);
  return problems.empty();
}

} // namespace

std::vector<std::string_view> stepNames() {
  // In pipeline order: instantiate, gradient, the passes, the CPU exit's steps.
  std::vector<std::string_view> out{kSteps[0], kSteps[1]};
  for (const TensorPass &p : kDefaultPasses)
    out.push_back(p.name);
  out.insert(out.end(), std::begin(kSteps) + 2, std::end(kSteps));
  return out;
}

std::vector<std::string_view> stepsReadingIr() {
  std::vector<std::string_view> out = stepNames();
  out.erase(out.begin()); // instantiate reads the source
  return out;
}

std::vector<std::string_view> passNames() {
  std::vector<std::string_view> out;
  for (const TensorPass &p : kDefaultPasses)
    out.push_back(p.name);
  return out;
}

std::vector<std::string_view> testPassNames() {
  std::vector<std::string_view> out;
  for (const TensorPass &p : kTestPasses)
    out.push_back(p.name);
  return out;
}

//===-- Instrumentation ---------------------------------------------------===//

bool Compilation::wantsPrint(bool all, const std::vector<std::string> &names, std::string_view name) {
  return all || std::find(names.begin(), names.end(), name) != names.end();
}

void Compilation::dump(std::string_view when, std::string_view name, const std::string &ir) const {
  std::fprintf(stderr, "// -----// IR Dump %.*s %.*s //----- //\n%s\n", static_cast<int>(when.size()), when.data(),
               static_cast<int>(name.size()), name.data(), ir.c_str());
}

void Compilation::addTime(std::string_view name, double seconds) {
  for (auto &[n, s] : times_)
    if (n == name) {
      s += seconds;
      return;
    }
  times_.emplace_back(std::string(name), seconds);
}

Compilation::~Compilation() { finish(); }

void Compilation::finish() {
  if (finished_)
    return;
  finished_ = true;
  if (!options.timePasses || times_.empty())
    return;
  double total = 0;
  for (const auto &[name, s] : times_)
    total += s;
  std::fprintf(stderr,
               "===-------------------------------------------------------------------------===\n"
               "                      ... Pass execution timing report ...\n"
               "===-------------------------------------------------------------------------===\n"
               "  Total Execution Time: %.4f seconds\n\n"
               "   ---Wall Time---  --- Name ---\n",
               total);
  for (const auto &[name, s] : times_)
    std::fprintf(stderr, "   %7.4f (%5.1f%%)  %s\n", s, total > 0 ? 100.0 * s / total : 0.0, name.c_str());
  std::fprintf(stderr, "   %7.4f (100.0%%)  Total\n", total);
}

//===-- The steps, in order -----------------------------------------------===//

Checked frontEnd(Compilation &c, FileId file) {
  Checked out;
  size_t before = c.diags.errorCount();
  static_assert(kMaxNestingLimit == syntax::kMaxNestingLimit);
  syntax::ParseLimits limits;
  limits.maxNesting = c.options.maxNesting;
  out.program = c.timed("parse", [&] { return syntax::parse(c.sources, file, c.diags, limits); });
  if (c.diags.errorCount() > before)
    return out;
  out.checked = c.timed("check", [&] {
    return c.options.proofs ? sema::check(c.sources, out.program, c.diags, c.options.proofs->solver())
                            : sema::check(c.sources, out.program, c.diags);
  });
  out.ok = c.diags.errorCount() == before;
  return out;
}

std::optional<ir::Module> instantiateEntry(Compilation &c, const Checked &source,
                                           const instantiate::BuildRequest &request) {
  instantiate::BuildRequest ordered = request;
  ordered.defaultOrder = c.options.defaultOrder;
  std::optional<ir::Module> m = c.timed(
      "instantiate", [&] { return instantiate::build(c.sources, source.program, source.checked, ordered, c.diags); });
  if (!m)
    return std::nullopt;
  c.printAfter("instantiate", true, [&] { return ir::print(*m, {false, c.options.keepNames}); });
  if (!c.timed("verify", [&] { return verifyAfter(c, "instantiate", *m); }))
    return std::nullopt;
  return m;
}

std::optional<ir::Module> readIr(Compilation &c, FileId file) {
  std::optional<ir::Module> m = c.timed("parse", [&] { return ir::parse(c.sources, file, c.diags); });
  if (!m)
    return std::nullopt;
  bool valid = c.timed("verify", [&] {
    std::vector<ir::VerifierError> problems = ir::verify(*m);
    for (const ir::VerifierError &e : problems)
      c.diags.error(code::E0301, e.where(), e.message); // the input's problem, not Keel's
    return problems.empty();
  });
  if (!valid)
    return std::nullopt;
  return m;
}

bool gradient(Compilation &c, ir::Module &m, const std::string &entry, const std::vector<size_t> &wrt) {
  c.printBefore("gradient", [&] { return ir::print(m, {false, c.options.keepNames}); });
  std::optional<autodiff::Problem> problem =
      c.timed("gradient", [&] { return autodiff::valueAndGradient(m, entry, wrt); });
  if (problem) {
    Span at = problem->loc.known() ? c.sources.spanAt(problem->loc.file, problem->loc.line, problem->loc.column)
                                   : Span{};
    constexpr std::string_view kInternal = "internal compiler error: ";
    if (problem->message.rfind(kInternal, 0) == 0)
      c.diags.internalError(at, problem->message.substr(kInternal.size()));
    else
      c.diags.error(code::E0600, at, problem->message);
    return false;
  }
  // The callees were inlined: those the entry no longer calls go.
  std::vector<const ir::Function *> reached = ir::reachableFrom(m, entry);
  std::vector<ir::Function> kept;
  for (ir::Function &f : m.functions)
    if (std::find(reached.begin(), reached.end(), &f) != reached.end())
      kept.push_back(std::move(f));
  m.functions = std::move(kept);
  c.printAfter("gradient", true, [&] { return ir::print(m, {false, c.options.keepNames}); });
  return c.timed("verify", [&] { return verifyAfter(c, "gradient", m); });
}

bool runPasses(Compilation &c, ir::Module &m, bool fuseByDefault) {
  auto run = [&](const TensorPass &p) {
    // A pass that says it changed nothing must have changed nothing (as
    // XLA checks): its module is compared with a copy of the text before.
    std::string before = ir::print(m);
    c.printBefore(p.name, [&] { return ir::print(m, {false, c.options.keepNames}); });
    bool changed = false;
    if (!guarded(c, p.name, [&] { changed = c.timed(p.name, [&] { return p.run(c, m); }); }))
      return false;
    if (!changed && ir::print(m) != before) {
      c.diags.internalError(Span{}, "the pass `" + std::string(p.name) + "` changed the tensor IR but reported no change")
          .note("`" + std::string(p.name) + "` produced this IR:\n" + ir::print(m));
      return false;
    }
    c.printAfter(p.name, changed, [&] { return ir::print(m, {false, c.options.keepNames}); });
    return !changed || c.timed("verify", [&] { return verifyAfter(c, p.name, m); });
  };
  auto byName = [&](const std::string &name) {
    for (const TensorPass &p : kDefaultPasses)
      if (p.name == name)
        return run(p);
    for (const TensorPass &p : kTestPasses)
      if (p.name == name)
        return run(p);
    c.diags.internalError(Span{}, "--passes names `" + name + "`, which is not a pass"); // the driver checked
    return false;
  };
  bool fused = false;
  if (c.options.passes) { // exactly the passes asked for, in order
    for (const std::string &name : *c.options.passes) {
      fused = fused || name == "fuse";
      if (!byName(name))
        return false;
    }
  } else {
    fused = c.options.fuse.value_or(fuseByDefault);
    for (const TensorPass &p : kDefaultPasses)
      if ((p.run != fusion || fused) && !run(p))
        return false;
  }
  for (const std::string &name : c.options.testPasses)
    if (!byName(name))
      return false;
  // What reports on fusion has nothing to say when it did not run.
  if (!fused && c.options.explainFusion)
    std::fprintf(stderr, "warning: --explain-fusion: fusion did not run, so there is nothing to explain (give --fuse)\n");
  if (!fused && c.options.stats)
    std::fprintf(stderr, "warning: --stats: fusion did not run, so there are no fusion figures (give --fuse)\n");
  return true;
}

std::optional<loop::Module> lowerForCpu(Compilation &c, const ir::Module &m, loop::Module into) {
  switch (c.options.target) {
  case Target::Cpu: {
    c.printBefore("schedule", [&] { return ir::print(m, {false, c.options.keepNames}); });
    c.printBefore("lower", [&] { return ir::print(m, {false, c.options.keepNames}); });
    cpu::Schedule schedule;
    codegen::HostVectors host = codegen::hostVectors();
    cpu::Machine machine{host.bits, host.registers};
    if (c.options.vectorBits) // (tests) tiles for another machine's vectors: 32 registers with AVX-512
      machine = {*c.options.vectorBits, *c.options.vectorBits == 512 ? 32u : 16u};
    if (!guarded(c, "schedule", [&] { schedule = c.timed("schedule", [&] { return cpu::cpuSchedule(m, c.options.threadedWork.value_or(cpu::kThreadedWork), machine); }); }))
      return std::nullopt;
    c.printAfter("schedule", true, [&] { return cpu::printSchedule(m, schedule); });
    if (!guarded(c, "lower", [&] { c.timed("lower", [&] { cpu::lowerScheduled(m, schedule, into); }); }))
      return std::nullopt;
    break;
  }
  case Target::CpuReference:
    c.printBefore("lower", [&] { return ir::print(m, {false, c.options.keepNames}); });
    if (!guarded(c, "lower", [&] { c.timed("lower", [&] { cpu::lowerReference(m, into); }); }))
      return std::nullopt;
    break;
  case Target::Linalg: case Target::StableHlo:
    c.diags.internalError(Span{}, "the CPU exit was asked to lower for the " + std::string(targetName(c.options.target)) +
                                      " target");
    return std::nullopt;
  }
  c.printAfter("lower", true, [&] { return loop::print(into); });
  if (!c.timed("verify", [&] { return verifyLoops(c, "lower", into); }))
    return std::nullopt;
  return into;
}

namespace {

/// The function's signature as its source spells it, declaring `effects`
/// (`![gpu, io]`) in place of whatever it declared: `fn f(...) -> T ![gpu, io]
/// requires ...` (the parameters elided), from the text between its
/// location and its body's `{`; empty when that text is not a signature.
std::string withEffects(const SourceManager &sources, Span at, const std::vector<std::string> &effects) {
  if (!at.valid())
    return "";
  std::string_view text = sources.text(at.file);
  size_t begin = text.rfind('\n', at.begin);
  begin = begin == std::string_view::npos ? 0 : begin + 1;
  size_t open = text.find('(', at.begin);
  if (open == std::string_view::npos)
    return "";
  size_t close = open;
  for (int depth = 0; close < text.size(); ++close)
    if (text[close] == '(')
      ++depth;
    else if (text[close] == ')' && --depth == 0)
      break;
  // The body's `{`: not a layout, which IR text writes right after a
  // type's `]` (`f32[2,2]{0,1}`), in the parameters or the result.
  size_t brace = close + 1;
  while (brace < text.size() && !(text[brace] == '{' && text[brace - 1] != ']'))
    ++brace;
  if (close >= text.size() || brace >= text.size())
    return "";
  std::string tail;
  for (char ch : text.substr(close + 1, brace - close - 1)) // whitespace runs as one space
    if (!std::isspace(static_cast<unsigned char>(ch)))
      tail += ch;
    else if (!tail.empty() && tail.back() != ' ')
      tail += ' ';
  // What follows the effects (`requires ...`) stays after them.
  std::string after;
  size_t bang = tail.find("!["), end = bang == std::string::npos ? bang : tail.find(']', bang);
  if (end != std::string::npos) {
    after = tail.substr(end + 1);
    tail = tail.substr(0, bang);
  } else if (size_t req = tail.find("requires"); req != std::string::npos) {
    after = " " + tail.substr(req);
    tail = tail.substr(0, req);
  }
  while (!after.empty() && after.back() == ' ')
    after.pop_back();
  while (!tail.empty() && tail.back() == ' ')
    tail.pop_back();
  std::string list;
  for (const std::string &e : effects)
    list += (list.empty() ? "" : ", ") + e;
  std::string head(text.substr(begin, open - begin));
  head.erase(0, head.find_first_not_of(" \t"));
  return head + "(...)" + (tail.empty() ? "" : " " + tail) + " ![" + list + "]" + after;
}

/// Reports an exit's refusals (nothing is printed then); its text.
std::optional<std::string> exitText(Compilation &c, std::string_view step, const std::function<exits::ExitOutput()> &emit) {
  exits::ExitOutput out;
  if (!guarded(c, step, [&] { out = c.timed(step, emit); }))
    return std::nullopt;
  for (const exits::Refusal &r : out.refusals) {
    Span at = r.loc.known() ? c.sources.spanAt(r.loc.file, r.loc.line, r.loc.column) : Span{};
    if (!at.valid()) // no location, or one in a file not loaded: where it is in the IR text
      at = r.textSpan;
    if (r.missingEffect.empty()) {
      c.diags.error("E0915", at, r.message);
      continue;
    }
    Diagnostic &d = c.diags.error("E0120", at, r.message);
    std::string signature = withEffects(c.sources, at, r.effectsToDeclare);
    d.help(signature.empty() ? "declare it: `![" + r.missingEffect + "]` after the function's result type"
                             : "declare it: `" + signature + "`");
  }
  if (!out.refusals.empty())
    return std::nullopt;
  return out.text;
}

} // namespace

std::optional<std::string> emitLinalg(Compilation &c, const ir::Module &m, const exits::LinalgOptions &options) {
  return exitText(c, "linalg", [&] { return exits::emitLinalg(m, options); });
}

std::optional<std::string> emitStableHlo(Compilation &c, const ir::Module &m, const exits::StableHloOptions &options) {
  return exitText(c, "stablehlo", [&] { return exits::emitStableHlo(m, options); });
}

std::optional<loop::Module> compileProgram(Compilation &c, FileId file, ProgramRoots roots) {
  Checked source = frontEnd(c, file);
  if (!source.ok)
    return std::nullopt;
  return lowerProgram(c, source, roots);
}

std::optional<loop::Module> lowerProgram(Compilation &c, const Checked &source, ProgramRoots roots) {
  std::optional<instantiate::ScalarProgram> program = c.timed("instantiate", [&] {
    return instantiate::lowerScalarProgram(c.sources, source.program, source.checked, c.diags, roots,
                                           c.options.defaultOrder);
  });
  if (!program)
    return std::nullopt;
  c.printAfter("instantiate", true, [&] { return loop::print(program->scalar) + "\n" + ir::print(program->tensors); });
  // (The scalar loop IR calls tensor functions lowered below: it is
  // verified whole after `lower`.)
  if (!c.timed("verify", [&] { return verifyAfter(c, "instantiate", program->tensors); }) ||
      !runPasses(c, program->tensors, true))
    return std::nullopt;
  return lowerForCpu(c, program->tensors, std::move(program->scalar));
}

std::unique_ptr<codegen::Program> jit(Compilation &c, const loop::Module &m) {
  std::string error;
  std::vector<std::string> warnings;
  std::optional<codegen::ObjectCache> cache;
  if (!c.options.cacheDir.empty())
    cache.emplace(c.options.cacheDir, c.options.cacheMaxBytes, warnings);
  codegen::CompileTimes times;
  std::unique_ptr<codegen::Program> program =
      codegen::Program::compile(m, error, &times, cache ? &*cache : nullptr, &warnings);
  c.addTime("llvm-ir", times.emit);
  if (times.cacheHit != true) {
    c.addTime("llvm-O2", times.optimize);
    c.addTime("machine-code", times.machineCode);
  }
  if (times.cacheHit)
    c.addTime(*times.cacheHit ? "compile-cache (hit)" : "compile-cache (miss)", times.cache);
  for (std::string &w : warnings)
    c.diags.warning("W0510", Span{}, std::move(w));
  if (!program)
    c.diags.internalError(Span{}, "LLVM code generation failed: " + error);
  return program;
}

} // namespace keel::pipeline
