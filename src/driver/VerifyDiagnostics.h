//===- VerifyDiagnostics.h - `keel opt --split-input-file --verify-diagnostics` ===//
//
// MLIR's test conventions for IR files. `// -----` on a line of its own
// splits a file into cases, each compiled as a module of its own (its lines
// keep their numbers in the file). In a case, a comment
//
//   // expected-error {{a part of the message}}
//   // expected-warning@+1 {{...}}      (on the next line; @-2: two above)
//   // expected-note {{...}}
//
// says that a diagnostic of that severity whose message contains the text
// is reported at that line. With --verify-diagnostics, every diagnostic
// must be expected and every expectation met; the mismatches are the
// command's errors.
//
//===----------------------------------------------------------------------===//
#ifndef KEEL_DRIVER_VERIFYDIAGNOSTICS_H
#define KEEL_DRIVER_VERIFYDIAGNOSTICS_H

#include "keel/support/Diagnostics.h"

#include <string>
#include <string_view>
#include <vector>

namespace keel::driver {

/// One case of a split file: its text, with the lines before it blank so
/// that line numbers are the file's.
struct InputCase {
  std::string text;
  uint32_t firstLine = 1;
};
/// The cases of `text` (one, without a `// -----` line).
std::vector<InputCase> splitInput(std::string_view text);

/// Compares the diagnostics of `file` with the expectations written in it;
/// prints each mismatch (`PATH:LINE: error: ...`) to stderr. Whether all
/// matched.
bool verifyDiagnostics(const SourceManager &sources, FileId file, const DiagnosticEngine &diags);

} // namespace keel::driver

#endif // KEEL_DRIVER_VERIFYDIAGNOSTICS_H
