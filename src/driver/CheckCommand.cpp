//===- CheckCommand.cpp - `keel check` -----------------------------------===//
//
//   keel check [--dump-ast] [--json] [--color auto|always|never] [--verify]
//              [--stats] [--smt-timeout MS] [--max-nesting N] FILE...
//
// Parses (and, as the front end grows, type-checks) each file and reports
// every diagnostic. Exit status: 0 clean, 1 errors in the input, 2 usage.
//
// --verify compares the diagnostics with annotations in the file itself, in
// the spirit of MLIR's -verify-diagnostics:
//   let c = a + b;  // expected-error@:13 {{E0911}}
//   // expected-error@+1:13 {{E0911 mixed low-precision}}
// `@:C` is this line, `@+N:C` / `@-N:C` N lines below / above, `@L:C` line
// L; C is the column. Inside {{ }} come the code (optional: E#### or W####)
// and, optionally, text the
// diagnostic must contain (its message, or a note without a location such
// as a counterexample, or a help line). expected-note matches notes that
// have a location.
// Every diagnostic must be expected and every expectation met.
//
//===----------------------------------------------------------------------===//
#include "Commands.h"
#include "Options.h"
#include "Output.h"

#include "keel/pipeline/Pipeline.h"
#include "keel/support/Diagnostics.h"

#include <algorithm>
#include <chrono>
#include <charconv>
#include <cstdio>
#include <cstdlib>
#include <optional>
#include <string>

namespace keel::driver {
namespace {


struct Expectation {
  std::string kind; // "error", "warning", "note"
  uint32_t line, column;
  std::string code, text;
  uint32_t annotationLine;
  bool met = false;
};

/// Reads the `expected-...` annotations of a file. Malformed ones are
/// reported as errors of the annotation itself.
std::vector<Expectation> readExpectations(const SourceManager &sources, FileId file,
                                          std::vector<std::string> &problems) {
  std::vector<Expectation> out;
  for (uint32_t line = 1; line <= sources.lineCount(file); ++line) {
    std::string_view text = sources.lineText(file, line);
    size_t at = 0;
    while ((at = text.find("expected-", at)) != std::string_view::npos) {
      std::string_view rest = text.substr(at + 9);
      at += 9;
      Expectation e;
      e.annotationLine = line;
      for (std::string_view kind : {"error", "warning", "note"})
        if (rest.substr(0, kind.size()) == kind)
          e.kind = kind;
      if (e.kind.empty())
        continue;
      rest.remove_prefix(e.kind.size());
      auto bad = [&](const std::string &why) {
        problems.push_back(std::string(sources.name(file)) + ":" + std::to_string(line) +
                           ": malformed expectation: " + why);
      };
      if (rest.empty() || rest[0] != '@') {
        bad("expected `@` and a location, e.g. expected-error@+1:5 {{E0010}}");
        continue;
      }
      rest.remove_prefix(1);
      long target = line;
      size_t colon = rest.find(':');
      if (colon == std::string_view::npos) {
        bad("missing `:COLUMN`");
        continue;
      }
      std::string lineSpec(rest.substr(0, colon));
      if (!lineSpec.empty()) {
        char *end = nullptr;
        long v = std::strtol(lineSpec.c_str(), &end, 10);
        if (*end) {
          bad("bad line `" + lineSpec + "`");
          continue;
        }
        target = (lineSpec[0] == '+' || lineSpec[0] == '-') ? line + v : v;
      }
      rest.remove_prefix(colon + 1);
      char *end = nullptr;
      std::string colText(rest.substr(0, rest.find(' ')));
      long column = std::strtol(colText.c_str(), &end, 10);
      if (colText.empty() || *end || column < 1) {
        bad("bad column `" + colText + "`");
        continue;
      }
      size_t open = rest.find("{{"), close = rest.find("}}");
      if (open == std::string_view::npos || close == std::string_view::npos || close < open) {
        bad("missing {{CODE}}");
        continue;
      }
      std::string body(rest.substr(open + 2, close - open - 2));
      // A leading E#### or W#### is the code; the rest is text to find.
      size_t space = body.find(' ');
      std::string first = body.substr(0, space);
      bool isCode = first.size() == 5 && (first[0] == 'E' || first[0] == 'W') &&
                    std::all_of(first.begin() + 1, first.end(), [](char ch) { return ch >= '0' && ch <= '9'; });
      e.code = isCode ? first : "";
      e.text = isCode ? (space == std::string::npos ? "" : body.substr(space + 1)) : body;
      e.line = static_cast<uint32_t>(target);
      e.column = static_cast<uint32_t>(column);
      out.push_back(std::move(e));
    }
  }
  return out;
}

bool matches(Expectation &e, const SourceManager &sources, std::string_view kind, Span span,
             std::string_view code, std::string_view message) {
  if (e.met || e.kind != kind || !span.valid())
    return false;
  LineColumn lc = sources.lineColumn(span.file, span.begin);
  if (lc.line != e.line || lc.column != e.column)
    return false;
  if (!e.code.empty() && e.code != code)
    return false;
  if (!e.text.empty() && message.find(e.text) == std::string_view::npos)
    return false;
  e.met = true;
  return true;
}

/// Returns true when the diagnostics of `file` are exactly the expected ones.
bool verify(const SourceManager &sources, FileId file, const DiagnosticEngine &diags) {
  std::vector<std::string> problems;
  std::vector<Expectation> expected = readExpectations(sources, file, problems);
  auto where = [&](Span s) {
    LineColumn lc = sources.lineColumn(s.file, s.begin);
    return std::string(sources.name(s.file)) + ":" + std::to_string(lc.line) + ":" +
           std::to_string(lc.column);
  };
  for (const Diagnostic &d : diags.diagnostics()) {
    std::string_view kind = d.severity == Severity::Warning ? "warning" : "error";
    bool found = false;
    // The text to match: the message with the notes that have no location
    // of their own (counterexamples) and the help lines.
    std::string full = d.message;
    for (const DiagNote &n : d.notes)
      if (!n.span.valid())
        full += "\n" + n.message;
    for (const std::string &h : d.helps)
      full += "\n" + h;
    for (Expectation &e : expected)
      if ((found = matches(e, sources, kind, d.span, d.code, full)))
        break;
    if (!found)
      problems.push_back(where(d.span) + ": unexpected " + std::string(kind) +
                         (d.code.empty() ? "" : "[" + d.code + "]") + ": " + d.message);
    for (const DiagNote &n : d.notes) {
      if (!n.span.valid())
        continue;
      bool noteFound = false;
      for (Expectation &e : expected)
        if ((noteFound = matches(e, sources, "note", n.span, d.code, n.message)))
          break;
      if (!noteFound)
        problems.push_back(where(n.span) + ": unexpected note: " + n.message);
    }
  }
  for (const Expectation &e : expected)
    if (!e.met)
      problems.push_back(std::string(sources.name(file)) + ":" + std::to_string(e.annotationLine) +
                         ": expected " + e.kind + " {{" + e.code + (e.text.empty() ? "" : " " + e.text) +
                         "}} at " + std::to_string(e.line) + ":" + std::to_string(e.column) +
                         " was not reported");
  for (const std::string &p : problems)
    std::fprintf(stderr, "%s\n", p.c_str());
  return problems.empty();
}

} // namespace

int runCheck(const std::vector<std::string_view> &args) {
  bool dumpAst = false, verifyMode = false;
  OutputOptions output;
  unsigned smtTimeoutMs = 2000;
  std::vector<std::string> files;
  for (size_t i = 0; i < args.size(); ++i) {
    std::string_view a = args[i];
    switch (classifyOption("check", a)) {
    case OptionClass::Help: std::fputs(helpText("check").c_str(), stdout); return 0;
    case OptionClass::Unknown: return 2;
    case OptionClass::NotAnOption: case OptionClass::Known: break;
    }
    std::string optionError;
    OptionResult common = parseOutputOption(args, i, output, optionError);
    if (common == OptionResult::Bad)
      return usageError("check", optionError);
    if (common == OptionResult::Taken) continue;
    if (a == "--dump-ast") dumpAst = true;
    else if (a == "--verify") verifyMode = true;
    else if (a == "--smt-timeout") {
      unsigned long v = 0;
      std::string_view text = i + 1 < args.size() ? args[i + 1] : std::string_view();
      auto [end, ec] = std::from_chars(text.data(), text.data() + text.size(), v);
      if (text.empty() || ec != std::errc() || end != text.data() + text.size() || v == 0 || v > 3600000)
        return usageError("check", "--smt-timeout needs milliseconds (1 to 3600000)");
      smtTimeoutMs = static_cast<unsigned>(v);
      ++i;
    }
    else if (classifyOption("check", a) == OptionClass::Known) {
      return usageError("check", "internal error: Options.def gives check '" + std::string(a) +
                                     "', which its parser does not take");
    } else {
      files.emplace_back(a);
    }
  }
  if (files.empty())
    return usageError("check", "no input files");
  SourceManager sources;
  pipeline::ProofCache proofs(smtTimeoutMs);
  output.pipeline.proofs = &proofs;
  auto started = std::chrono::steady_clock::now();
  bool anyErrors = false, allVerified = true;
  for (const std::string &path : files) {
    std::optional<FileId> file = loadOrComplain(sources, path, "check");
    if (!file)
      return 2;
    DiagnosticEngine diags(sources);
    pipeline::Compiled checked;
    {
      pipeline::Compilation c(sources, diags, output.pipeline);
      if (std::shared_ptr<const pipeline::Loaded> loaded = pipeline::load(c, *file, pipeline::FileKind::Source, true)) {
        pipeline::Request request;
        request.product = pipeline::Product::Checked;
        request.dumpAst = dumpAst;
        checked = pipeline::compile(c, *loaded, std::move(request));
      }
    }
    if (dumpAst)
      std::fputs(checked.text.c_str(), stdout);
    if (verifyMode) {
      allVerified &= verify(sources, *file, diags);
      continue;
    }
    report(sources, diags, output);
    anyErrors |= diags.errorCount() > 0;
  }
  if (output.pipeline.stats) { // --stats, parsed with the shared options
    const pipeline::ProofCache::Stats st = proofs.stats();
    double total = std::chrono::duration<double>(std::chrono::steady_clock::now() - started).count();
    auto share = [&](size_t n) { return st.obligations ? 100.0 * static_cast<double>(n) / static_cast<double>(st.obligations) : 0.0; };
    std::fprintf(stderr,
                 "shape obligations: %zu\n"
                 "  settled by the normal form: %zu (%.1f%%)\n"
                 "  answered from the cache:    %zu (%.1f%%)\n"
                 "  sent to Z3:                 %zu (%.1f%%), %.3f s\n"
                 "total time: %.3f s\n",
                 st.obligations, st.normalForm, share(st.normalForm), st.cached, share(st.cached), st.z3Calls,
                 share(st.z3Calls), st.z3Seconds, total);
  }
  if (verifyMode)
    return allVerified ? 0 : 1;
  return anyErrors ? 1 : 0;
}

} // namespace keel::driver
