//===- keel/support/Diagnostics.h - Errors, notes, rendering --*- C++ -*-===//
//
// The one diagnostics engine of every stage. A diagnostic has a severity, a
// code (E0911, ...; listed in docs/diagnostics.md), a message, a primary
// span, notes (with or without a span of their own) and help lines. Internal
// compiler errors are their own severity: they are Keel's bugs, never the
// user's, and say so.
//
// Rendering follows rustc/Sailfin:
//
//   error[E0911]: mixed low-precision formats `f16` and `bf16` in `+`
//     --> model.sfn:3:13
//      |
//    3 |     let c = a + b;
//      |             ^^^^^
//      = help: convert explicitly, e.g. `(a as f32) + (b as f32)`
//
// and, for tools, one JSON object per line with the fields code, severity,
// message, file, line, column, end_line, end_column (1-based, end exclusive),
// notes and help.
//
//===----------------------------------------------------------------------===//
#ifndef KEEL_SUPPORT_DIAGNOSTICS_H
#define KEEL_SUPPORT_DIAGNOSTICS_H

#include "keel/support/Source.h"

#include <string>
#include <vector>

namespace keel {

enum class Severity { Error, Warning, Note, Internal };

struct DiagNote {
  Span span; ///< may be invalid: a note without a location
  std::string message;
};

struct Diagnostic {
  Severity severity = Severity::Error;
  std::string code; ///< empty for internal errors
  std::string message;
  Span span;
  std::vector<DiagNote> notes;
  std::vector<std::string> helps;

  Diagnostic &note(Span at, std::string text) {
    notes.push_back({at, std::move(text)});
    return *this;
  }
  Diagnostic &note(std::string text) { return note(Span{}, std::move(text)); }
  Diagnostic &help(std::string text) {
    helps.push_back(std::move(text));
    return *this;
  }
};

class DiagnosticEngine {
public:
  explicit DiagnosticEngine(const SourceManager &sources) : sources_(sources) {}

  Diagnostic &error(std::string code, Span span, std::string message);
  Diagnostic &warning(std::string code, Span span, std::string message);
  /// A bug in Keel, reported as such.
  Diagnostic &internalError(Span span, std::string message);

  const std::vector<Diagnostic> &diagnostics() const { return diags_; }
  size_t errorCount() const;
  const SourceManager &sources() const { return sources_; }

private:
  Diagnostic &add(Severity s, std::string code, Span span, std::string message);
  const SourceManager &sources_;
  std::vector<Diagnostic> diags_;
};

/// Human-readable rendering, with ANSI colours when `color` is set.
std::string renderText(const SourceManager &sources, const Diagnostic &d, bool color);
/// One JSON object, no trailing newline.
std::string renderJson(const SourceManager &sources, const Diagnostic &d);
std::string_view severityName(Severity s);

} // namespace keel

#endif // KEEL_SUPPORT_DIAGNOSTICS_H
