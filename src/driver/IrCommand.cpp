//===- IrCommand.cpp - `keel ir`: the tensor IR of an instantiation ------===//
//
//   keel ir FILE --entry F [--bind B=2,S=8]... [--grad P,...] [--locations] [--json] [--color WHEN]
//           [--fuse] [--explain-fusion] [--stats] [--dot FILE]
//           [--print-after=STEP] [--print-after-all] [--time-passes]
//
// Checks FILE, instantiates F at the bound sizes and runs the tensor IR
// passes (pipeline::runPasses), then prints the IR. A verifier failure here
// is Keel's bug: an internal compiler error naming the step, with its IR.
//
//===----------------------------------------------------------------------===//
#include "Commands.h"
#include "Options.h"
#include "Output.h"

#include "keel/pipeline/Pipeline.h"

#include <cstdio>
#include <string>

namespace keel::driver {

int runIr(const std::vector<std::string_view> &args) {
  pipeline::Request request;
  request.product = pipeline::Product::TensorIr;
  request.fuseByDefault = false;
  request.argumentsRequired = false;
  OutputOptions output;
  std::string path, dotPath;
  auto usage = [&](const std::string &message) { return usageError("ir", message); };
  for (size_t i = 0; i < args.size(); ++i) {
    std::string_view a = args[i];
    switch (classifyOption("ir", a)) {
    case OptionClass::Help: std::fputs(helpText("ir").c_str(), stdout); return 0;
    case OptionClass::Unknown: return 2;
    case OptionClass::NotAnOption: case OptionClass::Known: break;
    }
    std::string optionError;
    OptionResult common = parseOutputOption(args, i, output, optionError);
    if (common == OptionResult::Bad)
      return usage(optionError);
    if (common == OptionResult::Taken) continue;
    if (a == "--locations") request.locations = true;
    else if ((a == "--entry" || a == "--bind" || a == "--dot" || a == "--grad") && i + 1 == args.size())
      return usage(std::string(a) + " needs a value");
    else if (a == "--entry") request.entry = std::string(args[++i]);
    else if (a == "--dot") dotPath = std::string(args[++i]);
    else if (a == "--grad") {
      std::string error;
      std::optional<std::vector<std::string>> names = parseGradList(args[++i], error);
      if (!names)
        return usage("--grad " + error);
      request.gradient.insert(request.gradient.end(), names->begin(), names->end());
    }
    else if (a == "--bind") {
      std::string error;
      auto bindings = pipeline::parseBindings(args[++i], error);
      if (!bindings)
        return usage("--bind " + error);
      for (const auto &[name, value] : *bindings)
        if (!request.bindings.emplace(name, value).second)
          return usage("--bind: '" + name + "' is bound twice");
    } else if (classifyOption("ir", a) == OptionClass::Known)
      return usage("internal error: Options.def gives ir '" + std::string(a) + "', which its parser does not take");
    else if (path.empty()) path = std::string(a);
    else return usage("one source file at a time");
  }
  if (path.empty() || request.entry.empty())
    return usage(path.empty() ? "no input file" : "--entry F names the function to build");
  SourceManager sources;
  std::optional<FileId> file = loadOrComplain(sources, path, "ir");
  if (!file)
    return 2;
  DiagnosticEngine diags(sources);
  request.dot = !dotPath.empty();
  pipeline::Compiled compiled;
  {
    pipeline::Compilation c(sources, diags, output.pipeline);
    if (std::shared_ptr<const pipeline::Loaded> loaded = pipeline::load(c, *file, pipeline::FileKind::Source))
      compiled = pipeline::compile(c, *loaded, std::move(request));
  }
  if (!compiled.error.empty())
    std::fprintf(stderr, "keel ir: error: %s\n", compiled.error.c_str());
  report(sources, diags, output); // errors, or warnings
  if (!compiled.ok() || diags.errorCount() > 0)
    return 1;
  std::string text;
  if (int status = printTensorIr("ir", compiled, dotPath, &text))
    return status;
  return writeOutput("ir", text, output);
}

} // namespace keel::driver
