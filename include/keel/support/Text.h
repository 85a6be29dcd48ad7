//===- keel/support/Text.h - Small text utilities -------------*- C++ -*-===//
//
// Parsing and printing helpers shared by the driver's commands. They know
// nothing of the language, the IR or the numeric formats.
//
//===----------------------------------------------------------------------===//
#ifndef KEEL_SUPPORT_TEXT_H
#define KEEL_SUPPORT_TEXT_H

#include <cstdint>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

namespace keel {

/// Parses `0x` followed by exactly `digits` hex digits (either case).
/// Anything else, including a different number of digits, is nullopt.
std::optional<uint64_t> parseFixedHex(std::string_view text, int digits);

/// `0x` and `value` as exactly `digits` lowercase hex digits.
std::string formatFixedHex(uint64_t value, int digits);

/// Removes leading and trailing spaces, tabs and carriage returns.
std::string_view trim(std::string_view text);

/// Splits on runs of spaces and tabs; no empty fields.
std::vector<std::string_view> splitFields(std::string_view text);

} // namespace keel

#endif // KEEL_SUPPORT_TEXT_H
