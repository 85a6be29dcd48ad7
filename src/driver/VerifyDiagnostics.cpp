//===- VerifyDiagnostics.cpp - Expected diagnostics beside their cases ---===//
#include "VerifyDiagnostics.h"

#include <cstdio>
#include <optional>

namespace keel::driver {

namespace {

/// `// -----`, alone on its line (spaces around allowed).
bool isSeparator(std::string_view line) {
  size_t b = line.find_first_not_of(" \t"), e = line.find_last_not_of(" \t\r");
  return b != std::string_view::npos && line.substr(b, e - b + 1) == "// -----";
}

struct Expectation {
  Severity severity;
  uint32_t line;        ///< where the diagnostic must be
  uint32_t writtenAt;   ///< where the expectation is
  std::string text;
  bool met = false;
};

/// The expectations written in `file`; malformed ones are reported and
/// make `ok` false.
std::vector<Expectation> expectationsIn(const SourceManager &sources, FileId file, bool &ok) {
  std::vector<Expectation> out;
  std::string_view path = sources.name(file);
  for (uint32_t line = 1; line <= sources.lineCount(file); ++line) {
    std::string_view text = sources.lineText(file, line);
    for (size_t at = text.find("expected-"); at != std::string_view::npos; at = text.find("expected-", at + 1)) {
      std::string_view rest = text.substr(at + 9);
      std::optional<Severity> severity;
      for (Severity s : {Severity::Error, Severity::Warning, Severity::Note})
        if (rest.substr(0, severityName(s).size()) == severityName(s)) {
          severity = s;
          rest.remove_prefix(severityName(s).size());
        }
      if (!severity)
        continue; // prose that mentions `expected-`
      auto malformed = [&](const char *why) {
        std::fprintf(stderr, "%.*s:%u: error: malformed expectation: %s\n", static_cast<int>(path.size()), path.data(),
                     line, why);
        ok = false;
      };
      int64_t target = line;
      if (!rest.empty() && rest[0] == '@') {
        size_t n = 1;
        bool negative = n < rest.size() && rest[n] == '-';
        if (n < rest.size() && (rest[n] == '+' || rest[n] == '-'))
          ++n;
        int64_t offset = 0;
        size_t digits = n;
        while (n < rest.size() && rest[n] >= '0' && rest[n] <= '9')
          offset = offset * 10 + (rest[n++] - '0');
        if (n == digits || digits == 1) {
          malformed("`@` takes a line offset, as in @+1 or @-2");
          continue;
        }
        target += negative ? -offset : offset;
        rest.remove_prefix(n);
      }
      size_t open = rest.find("{{"), close = rest.find("}}");
      if (open == std::string_view::npos || close == std::string_view::npos || close < open ||
          rest.substr(0, open).find_first_not_of(" \t") != std::string_view::npos) {
        malformed("the expected text goes in {{...}} after the severity");
        continue;
      }
      if (target < 1 || target > sources.lineCount(file)) {
        malformed("the line it names is outside the file");
        continue;
      }
      out.push_back({*severity, static_cast<uint32_t>(target), line,
                     std::string(rest.substr(open + 2, close - open - 2))});
    }
  }
  return out;
}

} // namespace

std::vector<InputCase> splitInput(std::string_view text) {
  std::vector<InputCase> cases(1);
  uint32_t line = 1;
  size_t start = 0;
  while (start <= text.size()) {
    size_t end = text.find('\n', start);
    std::string_view l = text.substr(start, end == std::string_view::npos ? std::string_view::npos : end - start);
    if (isSeparator(l)) {
      cases.push_back({std::string(line, '\n'), line + 1});
    } else {
      cases.back().text += l;
      if (end != std::string_view::npos)
        cases.back().text += '\n';
    }
    if (end == std::string_view::npos)
      break;
    start = end + 1;
    ++line;
  }
  return cases;
}

bool verifyDiagnostics(const SourceManager &sources, FileId file, const DiagnosticEngine &diags) {
  bool ok = true;
  std::vector<Expectation> expected = expectationsIn(sources, file, ok);
  std::string_view path = sources.name(file);
  auto meet = [&](Severity s, Span span, const std::string &message) {
    uint32_t line = span.valid() && span.file == file ? sources.lineColumn(file, span.begin).line : 0;
    for (Expectation &e : expected)
      if (!e.met && e.severity == s && e.line == line && message.find(e.text) != std::string::npos) {
        e.met = true;
        return;
      }
    std::fprintf(stderr, "%.*s:%u: error: unexpected %.*s: %s\n", static_cast<int>(path.size()), path.data(), line,
                 static_cast<int>(severityName(s).size()), severityName(s).data(), message.c_str());
    ok = false;
  };
  for (const Diagnostic &d : diags.diagnostics()) {
    meet(d.severity, d.span, d.message);
    for (const DiagNote &n : d.notes)
      if (n.span.valid()) // a note without a location cannot be expected at a line
        meet(Severity::Note, n.span, n.message);
  }
  for (const Expectation &e : expected)
    if (!e.met) {
      std::fprintf(stderr, "%.*s:%u: error: expected %.*s at line %u was not produced: %s\n",
                   static_cast<int>(path.size()), path.data(), e.writtenAt,
                   static_cast<int>(severityName(e.severity).size()), severityName(e.severity).data(), e.line,
                   e.text.c_str());
      ok = false;
    }
  return ok;
}

} // namespace keel::driver
