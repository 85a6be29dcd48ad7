//===- Output.cpp ---------------------------------------------------------===//
#include "Output.h"

#include <charconv>

#include <algorithm>
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
    if (v.empty() || ec != std::errc() || end != v.data() + v.size() || n < 1 || n > syntax::kMaxNestingLimit) {
      error = "--max-nesting takes a depth from 1 to " + std::to_string(syntax::kMaxNestingLimit) + ", not '" +
              std::string(v) + "'";
      return OptionResult::Bad;
    }
    ++i;
    options.limits.maxNesting = n;
    return OptionResult::Taken;
  }
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

std::optional<FileId> loadOrComplain(SourceManager &sources, const std::string &path, std::string_view command) {
  std::string error;
  std::optional<FileId> file = sources.load(path, error);
  if (!file)
    std::fprintf(stderr, "keel %.*s: error: %s\n", static_cast<int>(command.size()), command.data(), error.c_str());
  return file;
}

} // namespace keel::driver
