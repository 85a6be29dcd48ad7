//===- keel/pipeline/Pipeline.h - Keel's one compile entry ------*- C++ -*-===//
//
// What a tool that compiles Keel calls (the `keel` command, the Python
// module): load a file once, then compile requests against it, each to one
// target and one product.
//
//   Compilation c(sources, diags, options);       // instrumentation, diagnostics
//   std::shared_ptr<const Loaded> m = load(c, file);       // parse, check / verify
//   Compiled r = compile(c, *m, request);          // instantiate ... one exit
//
// Every step in between is the pipeline's (keel/pipeline/Steps.h, in this
// order): the front end or the IR reader, instantiation at the sizes the
// request binds or its arguments' shapes give, the tensor IR passes (each
// verified), then the target's exit: the CPU exit (schedule, lowering,
// LLVM, the JIT), or the MLIR linalg or StableHLO text.
//
// Errors are values: problems in the source or IR are diagnostics in the
// Compilation's engine; problems with the request itself (an argument that
// does not fit) are `Compiled::error`; Keel's own bugs are internal-error
// diagnostics (`Compiled::status` says which). Nothing here is global: two
// compilations on two threads share nothing but what the caller shares
// (a ProofCache is not safe to share between threads). A loaded module is
// immutable and may be compiled from several threads at once, each with its
// own Compilation.
//
// This header uses only the runtime's and support's types, so that a tool
// built on it needs no other layer's headers.
//
//===----------------------------------------------------------------------===//
#ifndef KEEL_PIPELINE_PIPELINE_H
#define KEEL_PIPELINE_PIPELINE_H

#include "keel/runtime/Buffer.h"
#include "keel/runtime/Npy.h"
#include "keel/support/Diagnostics.h"
#include "keel/support/ProgramRoots.h"
#include "keel/support/Source.h"
#include "keel/support/SumOrder.h"

#include <chrono>
#include <cstdint>
#include <map>
#include <memory>
#include <optional>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

namespace keel::sema {
class ShapeSolver;
}

namespace keel::pipeline {

/// Where a compilation ends: Keel's targets.
enum class Target : uint8_t {
  Cpu,          ///< the CPU exit: its schedule realized (the default)
  CpuReference, ///< the CPU exit's reference lowering alone (--exit reference): the definition
  Linalg,       ///< MLIR linalg on tensors, as text
  StableHlo,    ///< StableHLO 1.13, as text
};
/// `cpu`, `reference`, `linalg`, `stablehlo`.
std::string_view targetName(Target t);
bool isCpu(Target t);

/// What a request asks back.
enum class Product : uint8_t {
  Checked,         ///< the front end alone (diagnostics; `Request::dumpAst`)
  TensorIr,        ///< the tensor IR after the passes (`keel ir`, `keel opt`)
  LoopIr,          ///< CPU targets: the loop IR (`keel emit --loop`)
  LlvmIr,          ///< CPU targets: the LLVM IR, before (`--llvm`) ...
  LlvmIrOptimized, ///< ... or after LLVM's -O2 (`--llvm-opt`)
  Executable,      ///< CPU targets: compiled code to call (`keel run`, `keel test`)
  ExitText,        ///< Linalg, StableHlo: the exit's module text
};

/// The largest `maxNesting` (deeper nesting could overflow the stack).
inline constexpr uint32_t kMaxNestingLimit = 4096;

/// Shape-proof state kept across compilations: Z3's answers, cached, and
/// the counts `keel check --stats` prints. Not for two threads at once.
class ProofCache {
public:
  explicit ProofCache(unsigned timeoutMs);
  ~ProofCache();
  ProofCache(const ProofCache &) = delete;
  ProofCache &operator=(const ProofCache &) = delete;

  struct Stats {
    size_t obligations = 0, normalForm = 0, cached = 0, z3Calls = 0;
    double z3Seconds = 0;
  };
  Stats stats() const;
  sema::ShapeSolver &solver() { return *solver_; }

private:
  std::unique_ptr<sema::ShapeSolver> solver_;
};

/// The compile cache's default bound (Options::cacheMaxBytes).
inline constexpr uint64_t kDefaultCacheBytes = uint64_t{1} << 30;

/// How to compile (what to compile is a Request).
struct Options {
  uint32_t maxNesting = 256; ///< --max-nesting N (E0013), at most kMaxNestingLimit
  Target target = Target::Cpu; ///< --exit reference|cpu; `keel emit --linalg`, `--stablehlo`
  bool printAfterAll = false;
  std::vector<std::string> printAfter; ///< --print-after=STEP,... (may repeat): after each run of STEP
  bool printBeforeAll = false;
  std::vector<std::string> printBefore; ///< --print-before=STEP,...: before each run of STEP
  bool printChanged = false;            ///< --print-changed: after every step that changed the IR
  /// --passes=P,...: exactly these tensor passes, in order, instead of the
  /// default pipeline (legalize, then fuse when fusing); test passes too.
  std::optional<std::vector<std::string>> passes;
  bool timePasses = false;
  /// --test-pass=NAME: passes that exist only to test the pipeline, run
  /// after the default passes.
  std::vector<std::string> testPasses;
  /// --fuse / --no-fuse; unset: the request's default (on for running and
  /// emitting; off for showing tensor IR as written).
  std::optional<bool> fuse;
  bool explainFusion = false; ///< --explain-fusion: every edge considered, on stderr
  bool stats = false;         ///< --stats: what the passes did (regions, bytes)
  /// --keep-names: printed IR names values as the IR file did
  /// (ir::PrintOptions::keepNames).
  bool keepNames = false;
  /// --threaded-work=N (tests): the CPU schedule runs an operation's
  /// independent loops on threads from N element operations on; unset:
  /// cpu::kThreadedWork.
  std::optional<int64_t> threadedWork;
  /// --vector-bits=N (tests): the CPU schedule sizes register tiles for
  /// vectors of N bits (128, 256 or 512) instead of the host's.
  std::optional<unsigned> vectorBits;
  /// --default-order=ORDER: the order of the `sum`, `mean` and `matmul`
  /// calls in source that give no `order:` (IR text says its own).
  SumOrder defaultOrder = SumOrder::Sequential;
  /// Kept across compilations (`keel check` of several files); null: a
  /// fresh solver, 2 s timeout.
  ProofCache *proofs = nullptr;
  /// The compile cache of machine code (Product::Executable): its directory
  /// (--cache-dir, KEEL_CACHE_DIR, else defaultCacheDir()); empty: none
  /// (--no-cache). Problems with it are W0510 warnings, never errors.
  std::string cacheDir;
  uint64_t cacheMaxBytes = kDefaultCacheBytes; ///< its bound (KEEL_CACHE_MAX_SIZE)
};

/// The compile cache's default directory: $XDG_CACHE_HOME/keel, else
/// ~/.cache/keel (empty when there is no home directory).
std::string defaultCacheDir();
/// Sets `o.cacheDir` and `o.cacheMaxBytes` as every tool does: no cache
/// when `noCache`, else `dir`, else $KEEL_CACHE_DIR, else defaultCacheDir()
/// (a relative directory made absolute), bounded by $KEEL_CACHE_MAX_SIZE
/// (`512M`, `2G`); false with `error` set when that is not a size.
bool cacheSettings(Options &o, bool noCache, const std::string &dir, std::string &error);
/// What the cache in `dir` holds, and clearing it (`keel cache`); nullopt
/// with `warning` set when the directory cannot be used.
struct CacheUsage {
  uint64_t entries = 0, bytes = 0;
};
std::optional<CacheUsage> cacheUsage(const std::string &dir, std::string &warning);
/// Removes every entry; how many, or nullopt with `warning` set.
std::optional<uint64_t> clearCache(const std::string &dir, std::string &warning);

/// The steps --print-after names (every step that produces IR, in pipeline
/// order), and those --print-before names (every step that reads IR). Test
/// passes are accepted too, but not listed to users.
std::vector<std::string_view> stepNames();
std::vector<std::string_view> stepsReadingIr();
/// The tensor passes --passes names (test passes accepted, not listed).
std::vector<std::string_view> passNames();
/// The test passes --test-pass accepts.
std::vector<std::string_view> testPassNames();

/// Parses `B=2,S=8` (--bind); nullopt with `error` set when malformed.
std::optional<std::map<std::string, int64_t>> parseBindings(std::string_view text, std::string &error);

/// Whether `version` (MAJOR.MINOR.PATCH) is a StableHLO version the
/// StableHLO exit writes for (Request::stableHloVersion); the range, as
/// "0.9.0 to 1.13.8", for messages.
bool stableHloVersionSupported(const std::string &version);
std::string stableHloVersionRange();

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
  /// (--print-after=NAME, --print-after-all; --print-changed when
  /// `changed`).
  template <typename F> void printAfter(std::string_view name, bool changed, F &&text) {
    if (wantsPrint(options.printAfterAll, options.printAfter, name) || (changed && options.printChanged))
      dump("After", name, text());
  }
  /// Prints `text()` as the IR before `name` when --print-before asks.
  template <typename F> void printBefore(std::string_view name, F &&text) {
    if (wantsPrint(options.printBeforeAll, options.printBefore, name))
      dump("Before", name, text());
  }
  /// Prints the --time-passes report now (once), as the end would.
  void finish();

private:
  static bool wantsPrint(bool all, const std::vector<std::string> &names, std::string_view name);
  void dump(std::string_view when, std::string_view name, const std::string &ir) const;
  std::vector<std::pair<std::string, double>> times_; ///< in first-run order
  bool finished_ = false;
};

/// A loaded file: checked source (.sfn) or verified tensor IR (.kir, by the
/// file's name). Opaque; immutable once loaded.
struct Loaded;

/// What a file holds.
enum class FileKind : uint8_t {
  ByName,   ///< tensor IR text when its name ends in `.kir`, else source
  Source,   ///< `.sfn` source (`keel check`, `keel ir`)
  TensorIr, ///< tensor IR text (`keel opt`)
};

/// Parses and checks (or verifies) `file`; null after reporting why. With
/// `keepProgram`, a source file whose check failed is still returned (for
/// `keel check --dump-ast`; `loadedOk` tells).
std::shared_ptr<const Loaded> load(Compilation &c, FileId file, FileKind kind = FileKind::ByName,
                                   bool keepProgram = false);
/// Whether `m` passed its checks.
bool loadedOk(const Loaded &m);
/// The AST of a loaded source file, as `keel check --dump-ast` prints it.
std::string dumpAst(const Compilation &c, const Loaded &m);
/// The parameter names of function `entry` (a source's names; tensor IR's
/// as written), or nullopt when there is no such function.
std::optional<std::vector<std::string>> parameterNames(const Loaded &m, std::string_view entry);

/// A tensor, in the runtime's terms: dtype, static shape and layout.
struct TensorSpec {
  KeelDType dtype = KEEL_F32;
  std::vector<int64_t> shape, minorToMajor;
  /// `f32[2,3]`, `bf16[4,4]{0,1}` (the tensor IR's spelling).
  std::string text() const;
  /// Bytes its elements take as the runtime stores them.
  uint64_t bytes() const;
};

/// A compiled tensor function's interface.
struct Signature {
  std::string name;
  std::vector<std::string> paramNames;
  std::vector<TensorSpec> params, results;
  std::string location; ///< `file:line:column`, or empty
};

/// One argument of a tensor entry: its values, `random:SEED` (made by the
/// pipeline at the parameter's type, as `random(...)` in source), or its
/// dtype and shape alone (`type`: the caller brings the data when it calls,
/// as the Python module does; checked as a tensor would be, no input made).
struct Argument {
  std::string name;
  std::optional<rt::Tensor> tensor; ///< any layout (a .npy file's)
  std::optional<uint64_t> seed;
  std::string origin; ///< what the caller wrote, for messages: `x.npy`, `random:7`
  std::optional<TensorSpec> type; ///< dtype and shape (its layout is not read)
};

/// A source function's interface as written, for tools that call it by
/// name (the Python module's signatures and argument checks).
struct FunctionInfo {
  struct Param {
    std::string name;
    std::string type;              ///< as written: `Tensor<f32, [S, D]>`, `i64`
    bool tensor = false;
    std::optional<KeelDType> dtype; ///< a tensor's element type
    std::vector<std::string> dims;  ///< a tensor's dimensions as written: `S`, `C / H`, `2`
  };
  std::string name;
  std::vector<std::string> dimParams; ///< `<H, KV>`: given by name
  std::vector<Param> params;
  std::string result;                ///< as written (`void` when none)
  std::vector<std::string> refinements; ///< each predicate of `requires`, as written
  std::string location;              ///< `file:line:column`
};
/// The functions of a loaded source file, in declaration order (IR text: none).
std::vector<FunctionInfo> functions(const Compilation &c, const Loaded &m);

/// What to compile from a loaded file.
struct Request {
  /// A tensor function (its callees come along); empty: the whole program
  /// from `roots` (and the functions and tensor functions they call).
  std::string entry;
  ProgramRoots roots = ProgramRoots::MainAndTests;
  std::map<std::string, int64_t> bindings; ///< shape variables and dimension parameters
  /// Named as the entry's parameters. Their shapes bind its shape
  /// variables (with `bindings`); their dtypes, shapes and layouts are
  /// checked against its parameter types before anything runs.
  std::vector<Argument> arguments;
  /// Every parameter needs an argument (else arguments are optional and
  /// sizes may come from `bindings` alone).
  bool argumentsRequired = true;
  /// How messages name an argument (`--arg x`, `argument x`), and what a
  /// message about a missing one adds (how to give it).
  std::string argumentFlag = "argument", missingArgumentHelp;
  /// Messages show sizes as keyword arguments (`H=8`), not `--bind H=8`.
  bool keywordSizes = false;
  /// --grad P1,P2: the entry becomes its value-and-gradient function with
  /// respect to these parameters (docs/autodiff.md): its result, then the
  /// gradient for each, in this order.
  std::vector<std::string> gradient;
  Product product = Product::Executable;
  bool fuseByDefault = true;     ///< unless Options::fuse says
  bool mainFunction = false;     ///< ExitText: a `@main` that runs the entry on the arguments' values
  bool keelMath = false;         ///< Linalg: transcendentals call Keel's own library
  std::string stableHloVersion;  ///< StableHlo: --target-version (valid), empty for the default
  bool allowReorder = false;     ///< StableHlo: --allow-reorder (exits::StableHloOptions::allowReorder)
  bool dumpAst = false;          ///< Checked: the AST in `text`
  bool locations = false;        ///< TensorIr: print locations
  bool dot = false;              ///< TensorIr: the Graphviz picture in `dot`
  /// Executable: the tensor memory the arguments and results may take
  /// together (0: no limit), and how messages name the setting.
  uint64_t memoryLimit = 0;
  std::string memoryLimitSetting = "the memory limit";
};

/// Compiled code: a whole program's functions and tests, or a tensor
/// entry. Keeps what it was compiled from alive.
class Executable {
public:
  ~Executable();
  /// Whether the program has function `name` (`main`).
  bool has(std::string_view name) const;
  /// The test blocks, by name, and the functions that run them.
  const std::vector<std::pair<std::string, std::string>> &tests() const;
  /// Runs a function of no arguments (main, a test); its i64 result, or
  /// nullopt with `error` set.
  std::optional<int64_t> run(const std::string &function, std::string &error);
  /// The host entry of a tensor function: takes one KeelBuffer pointer per
  /// parameter, then per result (keel/runtime/Buffer.h), each checked
  /// against the static type; null with `error` set.
  using Entry = void (*)(KeelBuffer **);
  Entry entry(const std::string &function, std::string &error);

  struct Impl;
  explicit Executable(std::unique_ptr<Impl> impl);

private:
  std::unique_ptr<Impl> impl_;
};

/// What a request gives back.
struct Compiled {
  enum class Status : uint8_t {
    Ok,
    Error,    ///< diagnostics in the engine, or `error`
    Internal, ///< Keel's bug, reported as an internal-error diagnostic
  };
  Status status = Status::Error;
  std::string error; ///< a problem with the request (an argument), not the source
  /// What `error` is about, for callers that sort problems (the Python
  /// module's exception types).
  enum class Problem : uint8_t {
    Request,  ///< the request itself (a product the target lacks, no such function)
    Argument, ///< an argument named wrongly, given twice or missing
    Shape,    ///< a rank or size that does not fit the parameter's shape
    DType,    ///< an element type other than the parameter's
    Memory,   ///< more tensor memory than the request's limit
  };
  Problem problem = Problem::Request;
  std::string text;  ///< TensorIr, LoopIr, LlvmIr(Optimized), ExitText, Checked with dumpAst
  std::string dot;   ///< TensorIr with `dot`
  std::optional<Signature> signature;  ///< a tensor entry's
  std::vector<rt::Tensor> inputs;      ///< Executable: the arguments in the entry's parameter types and layouts
  uint64_t hostBytes = 0;              ///< Executable: what the arguments and results take (under memoryLimit)
  std::shared_ptr<Executable> executable;
  bool ok() const { return status == Status::Ok; }
};

/// Compiles `request` from `m`, to `c.options.target`.
Compiled compile(Compilation &c, const Loaded &m, Request request);

} // namespace keel::pipeline

#endif // KEEL_PIPELINE_PIPELINE_H
