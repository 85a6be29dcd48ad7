//===- Output.cpp ---------------------------------------------------------===//
#include "Output.h"

#include <algorithm>
#include <charconv>
#include <cstdio>
#include <cstdlib>
#include <unistd.h>

namespace keel::driver {

bool OutputOptions::useColor() const {
  if (color == "always")
    return true;
  const char *term = std::getenv("TERM");
  return color == "auto" && isatty(STDERR_FILENO) && !std::getenv("NO_COLOR") &&
         std::string_view(term ? term : "dumb") != "dumb";
}

namespace {

/// `--NAME=VALUE` or `--NAME VALUE` at args[i]: the value, advancing i past
/// a separate one; nullopt when args[i] is not --NAME; `missing` when the
/// value is absent.
std::optional<std::string_view> optionValue(const std::vector<std::string_view> &args, size_t &i, std::string_view name,
                                            bool &missing) {
  std::string_view a = args[i];
  missing = false;
  if (a == name) {
    if (i + 1 == args.size() || args[i + 1].empty()) {
      missing = true;
      return std::string_view();
    }
    return args[++i];
  }
  if (a.size() > name.size() && a.substr(0, name.size()) == name && a[name.size()] == '=')
    return a.substr(name.size() + 1);
  return std::nullopt;
}

std::string joined(const std::vector<std::string_view> &names) {
  std::string out;
  for (std::string_view n : names)
    out += (out.empty() ? "" : ", ") + std::string(n);
  return out;
}

OptionResult parsePipelineOption(const std::vector<std::string_view> &args, size_t &i, pipeline::Options &options,
                                 std::string &error) {
  std::string_view a = args[i];
  if (a == "--print-after-all" || a == "--print-before-all" || a == "--print-changed") {
    (a == "--print-after-all" ? options.printAfterAll : a == "--print-before-all" ? options.printBeforeAll
                                                                                 : options.printChanged) = true;
    return OptionResult::Taken;
  }
  if (a == "--time-passes" || a == "--explain-fusion" || a == "--stats" || a == "--fuse" || a == "--no-fuse" ||
      a == "--keep-names") {
    if (a == "--time-passes") options.timePasses = true;
    else if (a == "--keep-names") options.keepNames = true;
    else if (a == "--explain-fusion") options.explainFusion = true;
    else if (a == "--stats") options.stats = true;
    else options.fuse = a == "--fuse";
    return OptionResult::Taken;
  }
  bool missing = false;
  // `--NAME=V,W,...` where each is one of `names` (or a test pass, accepted
  // but not listed to users), appended to `out`.
  std::vector<std::string_view> tests = pipeline::testPassNames();
  auto oneOf = [&](std::string_view name, const std::vector<std::string_view> &names, std::vector<std::string> &out) {
    std::optional<std::string_view> v = optionValue(args, i, name, missing);
    if (!v)
      return OptionResult::NotMine;
    std::string_view rest = missing ? std::string_view() : *v;
    do {
      std::string_view item = rest.substr(0, rest.find(','));
      rest = item.size() < rest.size() ? rest.substr(item.size() + 1) : std::string_view();
      if (missing || (std::find(names.begin(), names.end(), item) == names.end() &&
                      std::find(tests.begin(), tests.end(), item) == tests.end())) {
        error = std::string(name) + " takes one of " + joined(names) + " (or a comma list of them)" +
                (missing ? "" : ", not '" + std::string(item) + "'");
        return OptionResult::Bad;
      }
      out.emplace_back(item);
    } while (!rest.empty());
    return OptionResult::Taken;
  };
  if (OptionResult r = oneOf("--print-after", pipeline::stepNames(), options.printAfter); r != OptionResult::NotMine)
    return r;
  if (OptionResult r = oneOf("--print-before", pipeline::stepsReadingIr(), options.printBefore);
      r != OptionResult::NotMine)
    return r;
  std::vector<std::string> passes;
  if (OptionResult r = oneOf("--passes", pipeline::passNames(), passes); r != OptionResult::NotMine) {
    if (r == OptionResult::Taken)
      options.passes = std::move(passes);
    return r;
  }
  if (auto v = optionValue(args, i, "--exit", missing)) {
    if (*v == "cpu")
      options.target = pipeline::Target::Cpu;
    else if (*v == "reference")
      options.target = pipeline::Target::CpuReference;
    else if (*v == "linalg") // keel ir / opt: the tensor IR that exit receives
      options.target = pipeline::Target::Linalg;
    else if (*v == "stablehlo")
      options.target = pipeline::Target::StableHlo;
    else {
      error = "--exit takes cpu (the default), reference, linalg or stablehlo" +
              (missing ? "" : ", not '" + std::string(*v) + "'");
      return OptionResult::Bad;
    }
    return OptionResult::Taken;
  }
  if (std::optional<std::string_view> v = optionValue(args, i, "--test-pass", missing)) {
    if (missing || std::find(tests.begin(), tests.end(), *v) == tests.end()) {
      error = "--test-pass takes the name of a test pass (tests/transforms)" +
              (missing ? std::string() : ", not '" + std::string(*v) + "'");
      return OptionResult::Bad;
    }
    options.testPasses.emplace_back(*v);
    return OptionResult::Taken;
  }
  if (std::optional<std::string_view> v = optionValue(args, i, "--default-order", missing)) {
    std::optional<SumOrder> order = missing ? std::nullopt : parseSumOrder(*v);
    if (!order) {
      error = "--default-order takes sequential (the default) or tree" +
              (missing ? std::string() : ", not '" + std::string(*v) + "'");
      return OptionResult::Bad;
    }
    options.defaultOrder = *order;
    return OptionResult::Taken;
  }
  if (std::optional<std::string_view> v = optionValue(args, i, "--threaded-work", missing)) {
    int64_t n = 0;
    auto [end, ec] = std::from_chars(v->data(), v->data() + v->size(), n);
    if (missing || ec != std::errc() || end != v->data() + v->size() || n < 0) {
      error = "--threaded-work takes a count of element operations" +
              (missing ? std::string() : ", not '" + std::string(*v) + "'");
      return OptionResult::Bad;
    }
    options.threadedWork = n;
    return OptionResult::Taken;
  }
  if (std::optional<std::string_view> v = optionValue(args, i, "--vector-bits", missing)) {
    if (missing || (*v != "128" && *v != "256" && *v != "512")) {
      error = "--vector-bits takes 128, 256 or 512" + (missing ? std::string() : ", not '" + std::string(*v) + "'");
      return OptionResult::Bad;
    }
    options.vectorBits = static_cast<unsigned>(std::stoi(std::string(*v)));
    return OptionResult::Taken;
  }
  return OptionResult::NotMine;
}

} // namespace

OptionResult parseOutputOption(const std::vector<std::string_view> &args, size_t &i, OutputOptions &options,
                               std::string &error) {
  std::string_view a = args[i];
  if (a == "--json") {
    options.json = true;
    return OptionResult::Taken;
  }
  if (a == "--max-nesting") {
    uint32_t n = 0;
    std::string_view v = i + 1 < args.size() ? args[i + 1] : std::string_view();
    auto [end, ec] = std::from_chars(v.data(), v.data() + v.size(), n);
    if (v.empty() || ec != std::errc() || end != v.data() + v.size() || n < 1 || n > pipeline::kMaxNestingLimit) {
      error = "--max-nesting takes a depth from 1 to " + std::to_string(pipeline::kMaxNestingLimit) + ", not '" +
              std::string(v) + "'";
      return OptionResult::Bad;
    }
    ++i;
    options.pipeline.maxNesting = n;
    return OptionResult::Taken;
  }
  if (a == "-o") {
    if (i + 1 == args.size() || args[i + 1].empty()) {
      error = "-o needs a file (- for standard output)";
      return OptionResult::Bad;
    }
    options.outputPath = std::string(args[++i]);
    return OptionResult::Taken;
  }
  if (OptionResult r = parsePipelineOption(args, i, options.pipeline, error); r != OptionResult::NotMine)
    return r;
  if (a != "--color" && a.substr(0, 8) != "--color=")
    return OptionResult::NotMine;
  if (a == "--color") {
    if (i + 1 == args.size()) {
      error = "--color needs auto, always or never";
      return OptionResult::Bad;
    }
    options.color = std::string(args[++i]);
  } else {
    options.color = std::string(a.substr(8));
  }
  if (options.color != "auto" && options.color != "always" && options.color != "never") {
    error = "--color takes auto, always or never, not '" + options.color + "'";
    return OptionResult::Bad;
  }
  return OptionResult::Taken;
}

void report(const SourceManager &sources, const DiagnosticEngine &diags, const OutputOptions &options) {
  // In source order: the lexer reports before the parser has started.
  std::vector<const Diagnostic *> ordered;
  for (const Diagnostic &d : diags.diagnostics())
    ordered.push_back(&d);
  std::stable_sort(ordered.begin(), ordered.end(), [](const Diagnostic *a, const Diagnostic *b) {
    return a->span.file == b->span.file && a->span.begin < b->span.begin;
  });
  bool color = options.useColor();
  for (const Diagnostic *d : ordered)
    std::fputs((options.json ? renderJson(sources, *d) + "\n" : renderText(sources, *d, color)).c_str(), stderr);
}

int printTensorIr(std::string_view command, const pipeline::Compiled &compiled, const std::string &dotPath,
                  std::string *sink) {
  if (!dotPath.empty()) { // the dataflow graph, fusion regions as clusters
    std::string error;
    if (!writeFileAtomically(dotPath, compiled.dot, error)) {
      std::fprintf(stderr, "keel %.*s: error: --dot: %s\n", static_cast<int>(command.size()), command.data(),
                   error.c_str());
      return 1;
    }
  }
  if (sink)
    *sink += compiled.text;
  else
    std::fputs(compiled.text.c_str(), stdout);
  return 0;
}

int writeOutput(std::string_view command, const std::string &text, const OutputOptions &options) {
  if (options.outputPath.empty() || options.outputPath == "-") {
    std::fputs(text.c_str(), stdout);
    return 0;
  }
  std::string error;
  if (writeFileAtomically(options.outputPath, text, error))
    return 0;
  std::fprintf(stderr, "keel %.*s: error: -o: %s\n", static_cast<int>(command.size()), command.data(), error.c_str());
  return 1;
}

std::optional<FileId> loadOrComplain(SourceManager &sources, const std::string &path, std::string_view command) {
  std::string error;
  if (path == "-") { // standard input, bounded as a file is
    std::string text;
    char buffer[65536];
    size_t n = 0;
    while ((n = std::fread(buffer, 1, sizeof buffer, stdin)) > 0 && text.size() <= kMaxSourceBytes)
      text.append(buffer, n);
    if (std::ferror(stdin) || text.size() > kMaxSourceBytes) {
      std::fprintf(stderr, "keel %.*s: error: standard input: %s\n", static_cast<int>(command.size()),
                   command.data(), std::ferror(stdin) ? "cannot be read" : "longer than a source may be (2 GiB)");
      return std::nullopt;
    }
    return sources.add("<stdin>", std::move(text));
  }
  std::optional<FileId> file = sources.load(path, error);
  if (!file)
    std::fprintf(stderr, "keel %.*s: error: %s\n", static_cast<int>(command.size()), command.data(), error.c_str());
  return file;
}

} // namespace keel::driver
