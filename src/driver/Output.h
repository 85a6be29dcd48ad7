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
  /// -o FILE: where the command's text goes (empty or `-`: stdout).
  std::string outputPath;
  /// Colour: always, or auto on a terminal without NO_COLOR or TERM=dumb.
  bool useColor() const;
};

enum class OptionResult { NotMine, Taken, Bad };

/// Takes `--json`, `--color WHEN`, `--color=WHEN`, `--max-nesting N`, `-o
/// FILE` or a pipeline option (`--print-after=STEP,...`, `--print-after-all`,
/// `--print-before=STEP,...`, `--print-before-all`, `--print-changed`,
/// `--passes=P,...`, `--keep-names`,
/// `--time-passes`, `--exit reference|cpu`, `--test-pass=NAME`, `--fuse`,
/// `--no-fuse`, `--explain-fusion`, `--stats`; a value may
/// also follow as the next argument) at args[i] (advancing i past a value);
/// Bad sets `error`.
OptionResult parseOutputOption(const std::vector<std::string_view> &args, size_t &i, OutputOptions &options,
                               std::string &error);

/// Prints the diagnostics in source order.
void report(const SourceManager &sources, const DiagnosticEngine &diags, const OutputOptions &options);

/// `keel ir` and `keel opt`'s output: the --dot file when asked (all or
/// nothing), then the tensor IR text, appended to `sink` when given (-o
/// writes it at the end), else on stdout; the exit status.
int printTensorIr(std::string_view command, const pipeline::Compiled &compiled, const std::string &dotPath,
                  std::string *sink = nullptr);

/// The command's text to -o's file, all or nothing (else on stdout); the
/// exit status (1, with "keel COMMAND: error: -o: ...", when it cannot be
/// written).
int writeOutput(std::string_view command, const std::string &text, const OutputOptions &options);

/// Loads a file (`-`: standard input, named `<stdin>`), or prints "keel
/// COMMAND: error: ..." and returns nullopt.
std::optional<FileId> loadOrComplain(SourceManager &sources, const std::string &path, std::string_view command);

} // namespace keel::driver

#endif // KEEL_DRIVER_OUTPUT_H
