//===- RunCommand.cpp - `keel run`, `keel test`, `keel emit`, `keel cache` ===//
//
//   keel run FILE            runs main; exit status: main's int (0 for void)
//   keel test FILE           runs each test block in a child process and
//                            reports each by name, then "N passed, M failed"
//   keel emit --llvm FILE    the LLVM IR (--llvm-opt: after -O2); --loop: the loop IR
//   keel emit --linalg FILE --entry F [--bind N=4] [--keel-math]
//             [--main --arg NAME=FILE.npy|NAME=random:SEED...]
//                            the MLIR linalg exit of a tensor function (RunTensor.cpp)
//   keel emit --stablehlo FILE --entry F [--bind N=4] [--main --arg ...]
//                            its StableHLO exit (an entry declaring ![gpu])
//   keel cache [--clear]     the compile cache's directory, entries and size
//                            (keel run and keel test keep compiled code there:
//                            --cache-dir DIR, $KEEL_CACHE_DIR, --no-cache)
//
//===----------------------------------------------------------------------===//
#include "Commands.h"
#include "Options.h"
#include "Output.h"

#include "keel/pipeline/Pipeline.h"
#include "keel/runtime/Print.h"
#include "keel/runtime/Threads.h"
#include "keel/support/Text.h"

#include <cctype>
#include <cerrno>
#include <charconv>
#include <cstdlib>
#include <cstring>
#include <cstdio>
#include <filesystem>
#include <sys/wait.h>
#include <unistd.h>

namespace keel::driver {

namespace {

/// What `keel run`, `keel test` and `keel emit` compile: FILE's whole
/// program from `roots` through the pipeline to `product` (compiled code,
/// or loop or LLVM IR text). Prints diagnostics (and --time-passes's
/// report); nullopt on errors.
std::optional<pipeline::Compiled> compileFile(const std::string &command, const std::string &path,
                                              const OutputOptions &output, pipeline::Product product,
                                              ProgramRoots roots) {
  SourceManager sources;
  std::optional<FileId> file = loadOrComplain(sources, path, command);
  if (!file)
    return std::nullopt;
  DiagnosticEngine diags(sources);
  pipeline::Compiled out;
  {
    pipeline::Compilation c(sources, diags, output.pipeline);
    if (std::shared_ptr<const pipeline::Loaded> loaded = pipeline::load(c, *file)) {
      pipeline::Request request;
      request.product = product;
      request.roots = roots;
      out = pipeline::compile(c, *loaded, std::move(request));
    }
  }
  if (!out.error.empty())
    std::fprintf(stderr, "keel %s: error: %s\n", command.c_str(), out.error.c_str());
  report(sources, diags, output);
  if (!out.ok() || diags.errorCount() > 0)
    return std::nullopt;
  return out;
}

struct Parsed {
  OutputOptions output;
  std::string path, emit;
  TensorRunOptions tensor; ///< keel run --entry, keel emit --linalg / --stablehlo
  ExitEmitOptions exit;    ///< keel emit --linalg / --stablehlo, --main, --keel-math
  std::optional<int64_t> maxMemory; ///< keel run --max-memory
  std::optional<int32_t> threads;   ///< keel run / test --threads
  std::optional<std::string> cacheDir; ///< --cache-dir DIR
  bool noCache = false;                ///< --no-cache
  bool clear = false;                  ///< keel cache --clear
  bool help = false;                   ///< --help was printed: exit 0
};

/// A thread count, 1 to KEEL_MAX_THREADS.
std::optional<int32_t> parseThreads(std::string_view text) {
  int32_t n = 0;
  auto [end, ec] = std::from_chars(text.data(), text.data() + text.size(), n);
  if (ec != std::errc() || end != text.data() + text.size() || n < 1 || n > KEEL_MAX_THREADS)
    return std::nullopt;
  return n;
}

/// Sets the runtime's thread count from --threads, else $KEEL_THREADS;
/// false (after the message) when KEEL_THREADS is not a thread count.
bool setThreads(const std::string &command, std::optional<int32_t> threads) {
  if (!threads)
    if (const char *env = std::getenv("KEEL_THREADS"); env && *env) {
      threads = parseThreads(env);
      if (!threads) {
        usageError(command, "KEEL_THREADS must be a thread count from 1 to " + std::to_string(KEEL_MAX_THREADS) +
                                ", not '" + env + "'");
        return false;
      }
    }
  keel_rt_set_threads(threads.value_or(0));
  return true;
}

/// The compile cache's directory and bound (pipeline::cacheSettings): none
/// with --no-cache, else --cache-dir or the environment's; false (after
/// the message) when a setting is not usable.
bool setCache(const std::string &command, Parsed &p) {
  std::string error;
  if (!pipeline::cacheSettings(p.output.pipeline, p.noCache, p.cacheDir.value_or(""), error)) {
    usageError(command, error);
    return false;
  }
  return true;
}

} // namespace

std::optional<std::vector<std::string>> parseGradList(std::string_view text, std::string &error) {
  std::vector<std::string> names;
  size_t start = 0;
  while (true) {
    size_t comma = text.find(',', start);
    std::string_view name = text.substr(start, comma == std::string_view::npos ? std::string_view::npos : comma - start);
    if (name.empty()) {
      error = "takes the names of the parameters to differentiate with respect to, P1,P2, not '" + std::string(text) +
              "'";
      return std::nullopt;
    }
    names.emplace_back(name);
    if (comma == std::string_view::npos)
      return names;
    start = comma + 1;
  }
}

namespace {

std::optional<Parsed> parseArgs(const std::string &command, const std::vector<std::string_view> &args, bool emit) {
  Parsed p;
  auto usage = [&](const std::string &message) -> std::optional<Parsed> {
    usageError(command, message);
    return std::nullopt;
  };
  for (size_t i = 0; i < args.size(); ++i) {
    switch (classifyOption(command, args[i])) {
    case OptionClass::Help:
      std::fputs(helpText(command).c_str(), stdout);
      p.help = true;
      return p;
    case OptionClass::Unknown: return std::nullopt;
    case OptionClass::NotAnOption: case OptionClass::Known: break;
    }
    std::string error;
    OptionResult common = parseOutputOption(args, i, p.output, error);
    std::string_view a = args[i];
    if (common == OptionResult::Taken)
      continue;
    if (common == OptionResult::Bad)
      return usage(error);
    bool run = command == "run";
    if (emit && (a == "--llvm" || a == "--loop" || a == "--llvm-opt" || a == "--linalg" || a == "--stablehlo"))
      p.emit = std::string(a.substr(2));
    else if (emit && a == "--main")
      p.exit.main = true;
    else if (emit && a == "--keel-math")
      p.exit.keelMath = true;
    else if (!emit && a == "--print-full")
      keel_rt_set_print_full(1);
    else if (!emit && a == "--no-cache")
      p.noCache = true;
    else if (a == "--clear")
      p.clear = true;
    else if (!emit && a == "--cache-dir") {
      if (i + 1 == args.size() || args[i + 1].empty())
        return usage("--cache-dir needs a directory");
      p.cacheDir = std::string(args[++i]);
    }
    else if (!emit && a == "--threads") {
      if (i + 1 == args.size() || args[i + 1].empty())
        return usage("--threads needs a thread count");
      std::string value(args[++i]);
      p.threads = parseThreads(value);
      if (!p.threads)
        return usage("--threads takes a thread count from 1 to " + std::to_string(KEEL_MAX_THREADS) + ", not '" +
                     value + "'");
    }
    else if (emit && a == "--allow-reorder")
      p.exit.allowReorder = true;
    else if (emit && a == "--target-version") {
      if (i + 1 == args.size() || args[i + 1].empty())
        return usage("--target-version needs a StableHLO version");
      p.exit.targetVersion = std::string(args[++i]);
      if (!pipeline::stableHloVersionSupported(p.exit.targetVersion))
        return usage("--target-version takes a StableHLO version from " + pipeline::stableHloVersionRange() +
                     " (what the pinned StableHLO release serializes to), not '" + p.exit.targetVersion + "'");
    }
    else if ((run && (a == "--entry" || a == "--arg" || a == "--out" || a == "--bind" || a == "--repeat" ||
                      a == "--max-memory" || a == "--grad")) ||
             (emit && (a == "--entry" || a == "--arg" || a == "--bind" || a == "--grad"))) {
      if (i + 1 == args.size() || args[i + 1].empty())
        return usage(std::string(a) + " needs a value");
      std::string value(args[++i]);
      if (a == "--entry")
        p.tensor.entry = value;
      else if (a == "--grad") {
        std::optional<std::vector<std::string>> names = parseGradList(value, error);
        if (!names)
          return usage("--grad " + error);
        p.tensor.grad.insert(p.tensor.grad.end(), names->begin(), names->end());
      }
      else if (a == "--max-memory") {
        p.maxMemory = parseByteSize(value);
        if (!p.maxMemory)
          return usage("--max-memory takes a size such as 512M, 4G or 1073741824, not '" + value + "'");
      }
      else if (a == "--repeat") {
        auto [end, ec] = std::from_chars(value.data(), value.data() + value.size(), p.tensor.repeat);
        if (ec != std::errc() || end != value.data() + value.size() || p.tensor.repeat < 1)
          return usage("--repeat takes a positive count, not '" + value + "'");
      }
      else if (a == "--out")
        p.tensor.outDir = value;
      else if (a == "--arg") {
        size_t eq = value.find('=');
        if (eq == std::string::npos || eq == 0 || eq + 1 == value.size())
          return usage("--arg takes NAME=FILE.npy or NAME=random:SEED, not '" + value + "'");
        p.tensor.args.emplace_back(value.substr(0, eq), value.substr(eq + 1));
      } else {
        auto bindings = pipeline::parseBindings(value, error);
        if (!bindings)
          return usage("--bind " + error);
        for (const auto &[name, size] : *bindings)
          if (!p.tensor.bindings.emplace(name, size).second)
            return usage("--bind: '" + name + "' is bound twice");
      }
    }
    else if (classifyOption(command, a) == OptionClass::Known)
      return usage("internal error: Options.def gives " + command + " '" + std::string(a) +
                   "', which its parser does not take");
    else if (p.path.empty())
      p.path = std::string(a);
    else
      return usage("one file at a time");
  }
  bool tensorOptions = !p.tensor.args.empty() || !p.tensor.outDir.empty() || !p.tensor.bindings.empty() ||
                       p.tensor.repeat || !p.tensor.grad.empty();
  if (tensorOptions && p.tensor.entry.empty())
    return usage("--arg, --bind, --grad, --out and --repeat go with --entry F");
  bool exitEmit = p.emit == "linalg" || p.emit == "stablehlo";
  if (emit && !exitEmit && (!p.tensor.entry.empty() || p.exit.main || p.exit.keelMath))
    return usage("--entry and --main go with --linalg or --stablehlo, --keel-math with --linalg");
  if (emit && !p.exit.targetVersion.empty() && p.emit != "stablehlo")
    return usage("--target-version goes with --stablehlo");
  if (emit && p.exit.allowReorder && p.emit != "stablehlo")
    return usage("--allow-reorder goes with --stablehlo: the other exits keep every order");
  if (emit && p.emit == "stablehlo" && p.exit.keelMath)
    return usage("--keel-math goes with --linalg: the StableHLO exit calls no library");
  if (emit && exitEmit && p.tensor.entry.empty())
    return usage("--" + p.emit + " emits one tensor function and its callees: name it with --entry F");
  if (emit && !p.tensor.args.empty() && !p.exit.main)
    return usage("--arg gives the values @main runs on: add --main");
  if (p.noCache && p.cacheDir)
    return usage("--cache-dir and --no-cache do not go together");
  if (!emit && !setCache(command, p))
    return std::nullopt;
  if (command == "cache")
    return p.path.empty() ? std::optional<Parsed>(p)
                          : usage("keel cache takes no file: it shows the compile cache, not a program's entries "
                                  "(--cache-dir DIR names another cache)");
  if (p.path.empty())
    return usage("no input file");
  if (emit && p.emit.empty())
    return usage("say what to emit: --loop, --llvm, --llvm-opt, --linalg or --stablehlo");
  return p;
}

} // namespace

int runRun(const std::vector<std::string_view> &args) {
  std::optional<Parsed> p = parseArgs("run", args, false);
  if (!p || p->help)
    return p ? 0 : 2;
  if (p->maxMemory)
    keel_rt_set_memory_limit(*p->maxMemory);
  if (!setThreads("run", p->threads))
    return 2;
  if (!p->tensor.entry.empty()) {
    p->tensor.path = p->path;
    p->tensor.output = p->output;
    return runTensorEntry(p->tensor);
  }
  std::optional<pipeline::Compiled> compiled = compileFile("run", p->path, p->output, pipeline::Product::Executable,
                                                                   ProgramRoots::Main);
  if (!compiled)
    return 1;
  pipeline::Executable *program = compiled->executable.get();
  if (!program->has("main")) {
    std::fprintf(stderr, "keel run: error: %s has no `fn main`\n", p->path.c_str());
    return 1;
  }
  std::string error;
  std::optional<int64_t> status = program->run("main", error);
  std::fflush(stdout);
  if (!status) {
    std::fprintf(stderr, "keel run: error: %s\n", error.c_str());
    return 1;
  }
  return static_cast<int>(*status & 0xFF);
}

int runTest(const std::vector<std::string_view> &args) {
  std::optional<Parsed> p = parseArgs("test", args, false);
  if (!p || p->help)
    return p ? 0 : 2;
  if (!setThreads("test", p->threads))
    return 2;
  std::optional<pipeline::Compiled> compiled = compileFile("test", p->path, p->output, pipeline::Product::Executable,
                                                                   ProgramRoots::Tests);
  if (!compiled)
    return 1;
  pipeline::Executable *program = compiled->executable.get();
  std::string error;
  size_t passed = 0, failed = 0;
  for (const auto &[name, function] : program->tests()) {
    std::fflush(stdout);
    std::fflush(stderr);
    pid_t child = fork();
    if (child == 0) { // the test, alone: an assert ends only this process
      std::optional<int64_t> r = program->run(function, error);
      std::fflush(stdout);
      _exit(r ? 0 : 1);
    }
    int status = 0;
    if (child < 0 || waitpid(child, &status, 0) != child) {
      std::fprintf(stderr, "keel test: error: cannot run test %s: %s\n", name.c_str(), std::strerror(errno));
      return 1;
    }
    bool ok = WIFEXITED(status) && WEXITSTATUS(status) == 0;
    std::string why; // how a failed test ended, when not by a failed assert (exit status 1)
    if (WIFSIGNALED(status))
      why = std::string(" (killed by signal ") + std::to_string(WTERMSIG(status)) + ": " + strsignal(WTERMSIG(status)) +
            ")";
    else if (WIFEXITED(status) && WEXITSTATUS(status) > 1)
      why = " (exit status " + std::to_string(WEXITSTATUS(status)) + ")";
    std::printf("test %s ... %s%s\n", name.c_str(), ok ? "ok" : "FAILED", why.c_str());
    (ok ? passed : failed) += 1;
  }
  std::printf("%zu passed, %zu failed\n", passed, failed);
  return failed ? 1 : 0;
}

int runEmit(const std::vector<std::string_view> &args) {
  std::optional<Parsed> p = parseArgs("emit", args, true);
  if (!p || p->help)
    return p ? 0 : 2;
  if (p->emit == "linalg" || p->emit == "stablehlo") {
    p->tensor.path = p->path;
    p->tensor.output = p->output;
    p->tensor.command = "emit";
    p->tensor.argumentsRequired = p->exit.main;
    p->exit.stablehlo = p->emit == "stablehlo";
    return emitExitEntry(p->tensor, p->exit);
  }
  pipeline::Product product = p->emit == "loop"  ? pipeline::Product::LoopIr
                             : p->emit == "llvm" ? pipeline::Product::LlvmIr
                                                 : pipeline::Product::LlvmIrOptimized;
  std::optional<pipeline::Compiled> compiled = compileFile("emit", p->path, p->output, product, ProgramRoots::MainAndTests);
  if (!compiled)
    return 1;
  return writeOutput("emit", compiled->text, p->output);
}

int runCache(const std::vector<std::string_view> &args) {
  std::optional<Parsed> p = parseArgs("cache", args, false);
  if (!p || p->help)
    return p ? 0 : 2;
  const std::string &dir = p->output.pipeline.cacheDir;
  if (dir.empty())
    return usageError("cache", "there is no compile cache to show (--no-cache, or no home directory)");
  std::string warning;
  if (p->clear) {
    std::optional<uint64_t> removed = pipeline::clearCache(dir, warning);
    if (!removed) {
      std::fprintf(stderr, "keel cache: error: %s\n", warning.c_str());
      return 1;
    }
    std::printf("%s: removed %llu entries\n", dir.c_str(), static_cast<unsigned long long>(*removed));
    return 0;
  }
  std::optional<pipeline::CacheUsage> usage = pipeline::cacheUsage(dir, warning);
  if (!usage) {
    std::fprintf(stderr, "keel cache: error: %s\n", warning.c_str());
    return 1;
  }
  std::printf("%s: %llu entries, %.1f MiB of %.1f MiB\n", dir.c_str(), static_cast<unsigned long long>(usage->entries),
              static_cast<double>(usage->bytes) / (1 << 20),
              static_cast<double>(p->output.pipeline.cacheMaxBytes) / (1 << 20));
  return 0;
}

} // namespace keel::driver
