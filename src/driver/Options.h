//===- Options.h - The option table of the subcommands ------------*- C++ -*-===//
//
// Options.def is the one list of options: classifyOption() admits only its
// rows for a subcommand, and helpText() writes each subcommand's --help
// from them, so that an option cannot be accepted without being documented.
// usageError() is how every usage error ends: with a pointer to --help.
//
//===----------------------------------------------------------------------===//
#ifndef KEEL_DRIVER_OPTIONS_H
#define KEEL_DRIVER_OPTIONS_H

#include <string>
#include <string_view>

namespace keel::driver {

enum class OptionClass {
  NotAnOption, ///< a file name (or `-`)
  Help,        ///< --help or -h: print helpText(command) on stdout, exit 0
  Known,       ///< a row of Options.def for this command: the command parses it
  Unknown,     ///< already reported with usageError: exit 2
};

/// What args[i] is to `command` (check, run, test, emit, ir, opt).
OptionClass classifyOption(std::string_view command, std::string_view arg);

/// `keel COMMAND --help`: the synopsis, what the command does, and every
/// option of Options.def it takes, with its value and help.
std::string helpText(std::string_view command);

/// Prints "keel COMMAND: error: MESSAGE" and a pointer to `keel COMMAND
/// --help` on stderr; returns 2, the usage-error exit status.
int usageError(std::string_view command, const std::string &message);

} // namespace keel::driver

#endif // KEEL_DRIVER_OPTIONS_H
