//===- Output.h - What every command shares: diagnostics output ----------===//
//
// --json and --color auto|always|never, parsed the same way by every
// command, and one routine that prints a command's diagnostics in source
// order (text or JSON, on stderr).
//
//===----------------------------------------------------------------------===//
#ifndef KEEL_DRIVER_OUTPUT_H
#define KEEL_DRIVER_OUTPUT_H

#include "keel/support/Diagnostics.h"
#include "keel/pipeline/Pipeline.h"

#include <optional>
#include <string>
#include <string_view>
#include <vector>

namespace keel::driver {

struct OutputOptions {
  bool json = false;
  std::string color = "auto";
  /// --max-nesting N, --print-after[-all], --time-passes, --exit, --test-pass,
  /// --fuse/--no-fuse, --explain-fusion, --stats
  pipeline::Options pipeline;
  /// Colour: always, or auto on a terminal without NO_COLOR or TERM=dumb.
  bool useColor() const;
};

enum class OptionResult { NotMine, Taken, Bad };

/// Takes `--json`, `--color WHEN`, `--color=WHEN`, `--max-nesting N` or a
/// pipeline option (`--print-after=STEP`, `--print-after-all`,
/// `--time-passes`, `--exit reference|cpu`, `--test-pass=NAME`, `--fuse`,
/// `--no-fuse`, `--explain-fusion`, `--stats`; a value may
/// also follow as the next argument) at args[i] (advancing i past a value);
/// Bad sets `error`.
OptionResult parseOutputOption(const std::vector<std::string_view> &args, size_t &i, OutputOptions &options,
                               std::string &error);

/// Prints the diagnostics in source order.
void report(const SourceManager &sources, const DiagnosticEngine &diags, const OutputOptions &options);

/// `keel ir` and `keel opt`'s output: the --dot file when asked (all or
/// nothing), then the tensor IR text on stdout; the exit status.
int printTensorIr(std::string_view command, const pipeline::Compiled &compiled, const std::string &dotPath);

/// Loads a file, or prints "keel COMMAND: error: ..." and returns nullopt.
std::optional<FileId> loadOrComplain(SourceManager &sources, const std::string &path, std::string_view command);

} // namespace keel::driver

#endif // KEEL_DRIVER_OUTPUT_H
