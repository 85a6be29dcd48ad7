//===- Diagnostics.cpp ----------------------------------------------------===//
#include "keel/support/Diagnostics.h"

#include "keel/support/Text.h"

#include <algorithm>
#include <cstdio>

namespace keel {

Diagnostic &DiagnosticEngine::add(Severity s, std::string code, Span span,
                                  std::string message) {
  diags_.push_back(Diagnostic{s, std::move(code), std::move(message), span, {}, {}});
  return diags_.back();
}

Diagnostic &DiagnosticEngine::error(std::string code, Span span, std::string message) {
  return add(Severity::Error, std::move(code), span, std::move(message));
}
Diagnostic &DiagnosticEngine::warning(std::string code, Span span, std::string message) {
  return add(Severity::Warning, std::move(code), span, std::move(message));
}
Diagnostic &DiagnosticEngine::internalError(Span span, std::string message) {
  return add(Severity::Internal, "", span, std::move(message))
      .note("this is a bug in Keel, not in your program; please report it with the input "
            "that caused it");
}

size_t DiagnosticEngine::errorCount() const {
  return static_cast<size_t>(std::count_if(diags_.begin(), diags_.end(), [](const Diagnostic &d) {
    return d.severity == Severity::Error || d.severity == Severity::Internal;
  }));
}

std::string_view severityName(Severity s) {
  switch (s) {
  case Severity::Error: return "error";
  case Severity::Warning: return "warning";
  case Severity::Note: return "note";
  case Severity::Internal: return "internal compiler error";
  }
  return "error";
}

namespace {

struct Palette {
  bool on;
  std::string paint(std::string_view code, std::string_view text) const {
    if (!on)
      return std::string(text);
    return "\x1b[" + std::string(code) + "m" + std::string(text) + "\x1b[0m";
  }
  std::string severity(Severity s, std::string_view text) const {
    switch (s) {
    case Severity::Error:
    case Severity::Internal: return paint("1;31", text);
    case Severity::Warning: return paint("1;33", text);
    case Severity::Note: return paint("1;32", text);
    }
    return std::string(text);
  }
  std::string gutter(std::string_view text) const { return paint("1;34", text); }
  std::string bold(std::string_view text) const { return paint("1", text); }
};

/// The "  --> file:line:col", source line and carets of one span.
void renderSnippet(std::string &out, const SourceManager &sources, Span span,
                   const Palette &p, Severity caretSeverity) {
  LineColumn begin = sources.lineColumn(span.file, span.begin);
  LineColumn end = sources.lineColumn(span.file, span.end);
  // The gutter is the line number with a space on each side.
  std::string lineNo = " " + std::to_string(begin.line);
  std::string pad(lineNo.size(), ' ');
  out += pad + p.gutter("--> ") + std::string(sources.name(span.file)) + ":" +
         std::to_string(begin.line) + ":" + std::to_string(begin.column) + "\n";
  std::string_view text = sources.lineText(span.file, begin.line);
  out += pad + " " + p.gutter("|") + "\n";
  // Very long lines (generated code) are shown around the span only.
  constexpr uint32_t kContext = 60;
  uint32_t shownFrom = begin.column - 1 > kContext * 2 ? begin.column - 1 - kContext : 0;
  uint32_t shownTo = static_cast<uint32_t>(std::min<size_t>(text.size(), size_t{begin.column - 1} + kContext * 2));
  while (shownFrom > 0 && shownFrom < text.size() && (static_cast<unsigned char>(text[shownFrom]) & 0xC0) == 0x80)
    --shownFrom; // not inside a UTF-8 sequence
  while (shownTo < text.size() && (static_cast<unsigned char>(text[shownTo]) & 0xC0) == 0x80)
    ++shownTo;
  std::string_view before = text.substr(shownFrom, begin.column - 1 - shownFrom);
  std::string head = shownFrom > 0 ? "..." : "";
  std::string tail = shownTo < text.size() ? "..." : "";
  // Invalid UTF-8 is shown as U+FFFD, one column per code point.
  out += p.gutter(lineNo + " |") + " " + head + validUtf8(text.substr(shownFrom, shownTo - shownFrom)) + tail + "\n";
  // Carets under the span's part on its first line; at least one.
  uint32_t last = end.line == begin.line ? end.column : static_cast<uint32_t>(text.size()) + 1;
  std::string_view spanned = text.substr(std::min<size_t>(begin.column - 1, text.size()),
                                         last > begin.column ? last - begin.column : 0);
  size_t width = std::max<size_t>(1, std::min<size_t>(displayWidth(spanned), kContext * 2));
  std::string marks(head.size() + displayWidth(before), ' ');
  // Keep tabs so the carets line up under tabbed source.
  for (size_t i = 0, column = head.size(); i < before.size(); ++column) {
    if (before[i] == '\t')
      marks[column] = '\t';
    i += std::max<size_t>(1, utf8Length(before, i));
  }
  out += pad + " " + p.gutter("|") + " " + marks + p.severity(caretSeverity, std::string(width, '^')) +
         "\n";
}

void appendJsonString(std::string &out, std::string_view text) {
  out += '"';
  std::string valid = validUtf8(text); // JSON text is UTF-8: invalid bytes become U+FFFD
  for (unsigned char c : valid) {
    switch (c) {
    case '"': out += "\\\""; break;
    case '\\': out += "\\\\"; break;
    case '\n': out += "\\n"; break;
    case '\t': out += "\\t"; break;
    case '\r': out += "\\r"; break;
    default:
      if (c < 0x20) {
        char buf[8];
        std::snprintf(buf, sizeof buf, "\\u%04x", c);
        out += buf;
      } else {
        out += static_cast<char>(c); // `valid` is well-formed UTF-8
      }
    }
  }
  out += '"';
}

void appendJsonLocation(std::string &out, const SourceManager &sources, Span span) {
  if (!span.valid()) {
    out += "\"file\":null,\"line\":null,\"column\":null,\"end_line\":null,\"end_column\":null";
    return;
  }
  LineColumn b = sources.lineColumn(span.file, span.begin);
  LineColumn e = sources.lineColumn(span.file, span.end);
  out += "\"file\":";
  appendJsonString(out, sources.name(span.file));
  out += ",\"line\":" + std::to_string(b.line) + ",\"column\":" + std::to_string(b.column) +
         ",\"end_line\":" + std::to_string(e.line) + ",\"end_column\":" + std::to_string(e.column);
}

} // namespace

std::string renderText(const SourceManager &sources, const Diagnostic &d, bool color) {
  Palette p{color};
  std::string out = p.severity(d.severity, std::string(severityName(d.severity)));
  if (!d.code.empty())
    out += p.severity(d.severity, "[" + d.code + "]");
  out += p.bold(": " + d.message) + "\n";
  size_t gutterWidth = 2;
  if (d.span.valid()) {
    renderSnippet(out, sources, d.span, p, d.severity);
    gutterWidth = 1 + std::to_string(sources.lineColumn(d.span.file, d.span.begin).line).size();
  }
  std::string pad(gutterWidth, ' ');
  for (const DiagNote &n : d.notes) {
    if (n.span.valid()) {
      out += p.severity(Severity::Note, "note") + ": " + n.message + "\n";
      renderSnippet(out, sources, n.span, p, Severity::Note);
    } else {
      out += pad + " " + p.gutter("=") + " " + p.bold("note") + ": " + n.message + "\n";
    }
  }
  for (const std::string &h : d.helps)
    out += pad + " " + p.gutter("=") + " " + p.bold("help") + ": " + h + "\n";
  return out;
}

std::string renderJson(const SourceManager &sources, const Diagnostic &d) {
  std::string out = "{\"code\":";
  if (d.code.empty())
    out += "null";
  else
    appendJsonString(out, d.code);
  out += ",\"severity\":";
  appendJsonString(out, d.severity == Severity::Internal ? "internal" : severityName(d.severity));
  out += ",\"message\":";
  appendJsonString(out, d.message);
  out += ",";
  appendJsonLocation(out, sources, d.span);
  out += ",\"notes\":[";
  for (size_t i = 0; i < d.notes.size(); ++i) {
    out += i ? ",{\"message\":" : "{\"message\":";
    appendJsonString(out, d.notes[i].message);
    out += ",";
    appendJsonLocation(out, sources, d.notes[i].span);
    out += "}";
  }
  out += "],\"help\":[";
  for (size_t i = 0; i < d.helps.size(); ++i) {
    if (i)
      out += ",";
    appendJsonString(out, d.helps[i]);
  }
  out += "]}";
  return out;
}

} // namespace keel
