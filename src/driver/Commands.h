//===- Commands.h - The subcommands of `keel` -----------------*- C++ -*-===//
//
// Each subcommand takes its arguments (the subcommand's own name excluded)
// and returns the process exit status: 0 success, 1 the input has errors,
// 2 a usage error.
//
//===----------------------------------------------------------------------===//
#ifndef KEEL_DRIVER_COMMANDS_H
#define KEEL_DRIVER_COMMANDS_H

#include "Output.h"

#include <cstdint>
#include <cstdio>
#include <map>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

namespace keel::driver {

/// `keel check FILE...`: parse and check source files, report diagnostics.
int runCheck(const std::vector<std::string_view> &args);

/// `keel ir FILE --entry F --bind ...`: the tensor IR of an instantiation.
int runIr(const std::vector<std::string_view> &args);

/// `keel opt IRFILE`: parse, verify and print tensor IR text.
int runOpt(const std::vector<std::string_view> &args);

/// `keel run FILE`, `keel test FILE`, `keel emit --llvm|--loop FILE`.
int runRun(const std::vector<std::string_view> &args);
int runTest(const std::vector<std::string_view> &args);
int runEmit(const std::vector<std::string_view> &args);
/// `keel cache [--clear]`: the compile cache's directory and size; clears it.
int runCache(const std::vector<std::string_view> &args);

/// `keel run FILE --entry F --arg NAME=SPEC... [--bind N=4] [--out DIR]`:
/// a tensor function on the CPU oracle (RunTensor.cpp).
struct TensorRunOptions {
  OutputOptions output;
  std::string path, entry, outDir;
  std::vector<std::pair<std::string, std::string>> args; ///< NAME, then a .npy path or random:SEED
  std::map<std::string, int64_t> bindings;
  int repeat = 0; ///< --repeat N: time N runs (compilation excluded)
  std::string command = "run"; ///< for messages: `keel run: error: ...`
  bool argumentsRequired = true; ///< every parameter needs an --arg
  std::vector<std::string> grad; ///< --grad P,...: the value and these gradients
};
/// The parameter names of `--grad P1,P2`; nullopt with `error` set when
/// the list is empty or has an empty name.
std::optional<std::vector<std::string>> parseGradList(std::string_view text, std::string &error);
int runTensorEntry(const TensorRunOptions &options);

/// `keel emit --linalg FILE --entry F [--bind ...] [--keel-math]
/// [--main --arg NAME=SPEC...]`: the MLIR linalg exit (exits/Linalg.h);
/// `keel emit --stablehlo FILE --entry F [--bind ...] [--main --arg ...]`:
/// the StableHLO exit (exits/StableHlo.h).
struct ExitEmitOptions {
  bool stablehlo = false; ///< which exit: StableHLO, else linalg
  bool main = false;      ///< a @main that runs the entry on --arg's values and gives the results' bits
  bool keelMath = false;  ///< linalg: transcendentals call libkeel_math.so
  bool allowReorder = false; ///< stablehlo: `order = tree` sums may be emitted in the consumer's order
  std::string targetVersion; ///< StableHLO: --target-version V (checked), empty for the default
};
int emitExitEntry(const TensorRunOptions &options, const ExitEmitOptions &exit);

/// `keel fp ...`: the numerics library at the command line.
/// Messages go to `errors` (stderr; the fuzz target passes a sink).
int runFp(const std::vector<std::string_view> &args, std::FILE *errors = stderr);

} // namespace keel::driver

#endif // KEEL_DRIVER_COMMANDS_H
