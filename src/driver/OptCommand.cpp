//===- OptCommand.cpp - `keel opt`: parse, verify and print tensor IR ----===//
//
//   keel opt [--locations] [--keep-names] [--json] [--color WHEN]
//            [--print-after=STEP,...] [--print-before=STEP,...] [--print-changed]
//            [--passes=P,...] [--time-passes] [--fuse] [--explain-fusion]
//            [--stats] [--dot FILE] [--exit TARGET] [--split-input-file]
//            [--verify-diagnostics] [-o FILE] IRFILE|-
//
// Reads tensor IR text, verifies it, runs the tensor IR passes
// (pipeline::runPasses) and prints the module in canonical form. With
// --split-input-file each `// -----` case is a module of its own, printed
// in turn; --verify-diagnostics compares each case's diagnostics with the
// `expected-error {{...}}` comments beside it (VerifyDiagnostics.h). Exit
// status: 0 valid (or every diagnostic as expected), 1 malformed or invalid
// IR, an unmet or unexpected diagnostic, or an internal error; 2 usage.
//
//===----------------------------------------------------------------------===//
#include "Commands.h"
#include "Options.h"
#include "Output.h"
#include "VerifyDiagnostics.h"

#include "keel/pipeline/Pipeline.h"

#include <algorithm>
#include <cstdio>
#include <string>

namespace keel::driver {

namespace {

/// One module: compiled, reported (or checked against its expectations),
/// printed; the exit status.
int optimize(SourceManager &sources, FileId file, pipeline::Request request, const OutputOptions &output,
             const std::string &dotPath, bool verify, std::string *sink) {
  DiagnosticEngine diags(sources);
  pipeline::Compiled compiled;
  {
    pipeline::Compilation c(sources, diags, output.pipeline);
    if (std::shared_ptr<const pipeline::Loaded> loaded = pipeline::load(c, file, pipeline::FileKind::TensorIr))
      compiled = pipeline::compile(c, *loaded, std::move(request));
  }
  if (!compiled.error.empty())
    std::fprintf(stderr, "keel opt: error: %s\n", compiled.error.c_str());
  if (verify) {
    if (!verifyDiagnostics(sources, file, diags) || !compiled.error.empty())
      return 1;
    return compiled.ok() ? printTensorIr("opt", compiled, dotPath, sink) : 0;
  }
  report(sources, diags, output);
  if (!compiled.ok() || diags.errorCount() > 0)
    return 1;
  return printTensorIr("opt", compiled, dotPath, sink);
}

} // namespace

int runOpt(const std::vector<std::string_view> &args) {
  pipeline::Request request;
  request.product = pipeline::Product::TensorIr;
  request.fuseByDefault = false;
  OutputOptions output;
  std::string path, dotPath;
  bool split = false, verify = false;
  for (size_t i = 0; i < args.size(); ++i) {
    std::string_view a = args[i];
    switch (classifyOption("opt", a)) {
    case OptionClass::Help: std::fputs(helpText("opt").c_str(), stdout); return 0;
    case OptionClass::Unknown: return 2;
    case OptionClass::NotAnOption: case OptionClass::Known: break;
    }
    std::string optionError;
    OptionResult common = parseOutputOption(args, i, output, optionError);
    if (common == OptionResult::Bad)
      return usageError("opt", optionError);
    if (common == OptionResult::Taken) continue;
    if (a == "--locations") request.locations = true;
    else if (a == "--split-input-file") split = true;
    else if (a == "--verify-diagnostics") verify = true;
    else if (a == "--dot") {
      if (i + 1 == args.size())
        return usageError("opt", "--dot needs a file");
      dotPath = std::string(args[++i]);
    }
    else if (classifyOption("opt", a) == OptionClass::Known)
      return usageError("opt", "internal error: Options.def gives opt '" + std::string(a) +
                                   "', which its parser does not take");
    else if (path.empty()) path = std::string(a);
    else
      return usageError("opt", "one IR file at a time");
  }
  if (path.empty())
    return usageError("opt", "no input file");
  if (split && !dotPath.empty())
    return usageError("opt", "--dot writes one module's graph: not with --split-input-file");
  SourceManager sources;
  std::optional<FileId> file = loadOrComplain(sources, path, "opt");
  if (!file)
    return 2;
  request.dot = !dotPath.empty();
  // With -o, the text is collected and written once at the end.
  std::string collected;
  std::string *sink = output.outputPath.empty() || output.outputPath == "-" ? nullptr : &collected;
  int status = 0;
  if (!split) {
    status = optimize(sources, *file, request, output, dotPath, verify, sink);
  } else {
    std::vector<InputCase> cases = splitInput(sources.text(*file));
    for (size_t i = 0; i < cases.size(); ++i) {
      if (i && sink)
        collected += "// -----\n";
      else if (i)
        std::fputs("// -----\n", stdout);
      std::fflush(stdout);
      FileId part = sources.add(std::string(sources.name(*file)), std::move(cases[i].text));
      status = std::max(status, optimize(sources, part, request, output, dotPath, verify, sink));
    }
  }
  if (sink && (status == 0 || !collected.empty()))
    status = std::max(status, writeOutput("opt", collected, output));
  return status;
}

} // namespace keel::driver
