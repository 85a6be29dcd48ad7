//===- main.cpp - The keel command -------------------------------------===//
#include "Commands.h"

#include "keel/runtime/Npy.h"
#include "keel/support/Stack.h"

#include <cstdio>
#include <string_view>
#include <vector>

namespace {
constexpr std::string_view kUsage =
    "usage: keel COMMAND [ARGS...]\n"
    "\n"
    "commands (keel COMMAND --help for each one's options):\n"
    "  check     parse and check .sfn files, proving every shape rule; report every error\n"
    "  run       run a program's main, or a tensor function on .npy or random\n"
    "            inputs (--entry F --arg x=x.npy --out DIR)\n"
    "  test      run a program's test blocks, each reported by name\n"
    "  emit      print the loop IR (--loop) or LLVM IR (--llvm, --llvm-opt) of a program,\n"
    "            or a tensor function as MLIR linalg (--linalg --entry F) or\n"
    "            StableHLO (--stablehlo --entry F)\n"
    "  ir        the tensor IR of a function at given sizes\n"
    "  opt       parse, verify and print tensor IR text\n"
    "  cache     the compile cache's size (--clear: empty it)\n"
    "  fp        how values round in f16, bf16, tf32, fp8e4m3fn, fp8e5m2, f32, f64\n"
    "            (keel fp --help for its subcommands)\n"
    "\n"
    "options:\n"
    "  --help, -h  this text\n"
    "  --version   the version of Keel\n";
} // namespace

static int dispatch(int argc, char **argv) {
  std::vector<std::string_view> args(argv + 1, argv + argc);
  if (args.empty()) {
    std::fputs(kUsage.data(), stderr);
    return 2;
  }
  std::string_view command = args[0];
  if (command == "--help" || command == "-h") {
    std::fputs(kUsage.data(), stdout);
    return 0;
  }
  if (command == "--version") {
    std::puts("keel 0.1.0");
    return 0;
  }
  std::vector<std::string_view> rest(args.begin() + 1, args.end());
  if (command == "check")
    return keel::driver::runCheck(rest);
  if (command == "run")
    return keel::driver::runRun(rest);
  if (command == "test")
    return keel::driver::runTest(rest);
  if (command == "emit")
    return keel::driver::runEmit(rest);
  if (command == "ir")
    return keel::driver::runIr(rest);
  if (command == "opt")
    return keel::driver::runOpt(rest);
  if (command == "cache")
    return keel::driver::runCache(rest);
  if (command == "fp")
    return keel::driver::runFp(rest);
  std::fprintf(stderr, "keel: error: unknown command '%.*s'\nsee 'keel --help'\n",
               static_cast<int>(command.size()), command.data());
  return 2;
}

// Every command runs on a thread with a large stack: the passes recurse over
// expression trees as deep as the parser allows (docs/reliability.md).
// An allocation that fails is an error, never an abort: a host tensor's
// (rt::AllocationFailure names it), or the compiler's own. Output files are
// written last, to temporaries renamed into place, so none is half-written.
int main(int argc, char **argv) {
  return keel::runWithStack(keel::kCompilerStackBytes, [&] {
    try {
      return dispatch(argc, argv);
    } catch (const std::bad_alloc &e) {
      std::fflush(stdout);
      if (dynamic_cast<const keel::rt::AllocationFailure *>(&e))
        std::fprintf(stderr, "keel: error: %s\n", e.what());
      else
        std::fprintf(stderr, "keel: error: out of memory: the compiler could not allocate what it needed "
                             "(raise ulimit -v or the memory limit of the cgroup)\n");
      return 1;
    }
  });
}
