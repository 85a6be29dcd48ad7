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

/// A byte count: digits, optionally followed by K, M, G or T (powers of
/// 1024; `KiB`, `KB` and `k` are read the same way); nullopt for anything
/// else, zero, or more than 2^62 bytes.
std::optional<int64_t> parseByteSize(std::string_view text);

/// Parses `0x` followed by exactly `digits` hex digits (either case).
/// Anything else, including a different number of digits, is nullopt.
std::optional<uint64_t> parseFixedHex(std::string_view text, int digits);

/// `0x` and `value` as exactly `digits` lowercase hex digits.
std::string formatFixedHex(uint64_t value, int digits);

/// The length of the well-formed UTF-8 sequence starting at text[i] (1 to 4),
/// or 0 when the bytes there are not one (a stray continuation byte, an
/// overlong form, a surrogate, a code point past U+10FFFF, a cut sequence).
size_t utf8Length(std::string_view text, size_t i);

/// The code point of the well-formed sequence at text[i].
uint32_t utf8CodePoint(std::string_view text, size_t i);

/// `text` with each byte that is not part of well-formed UTF-8 replaced by
/// U+FFFD, so that terminals and JSON readers get valid text.
std::string validUtf8(std::string_view text);

/// Columns on a terminal: one per code point (and per invalid byte).
size_t displayWidth(std::string_view text);

/// `1 operand`, `2 operands`: a count and its noun, plural unless one
/// (the noun's plural is `noun` + "s").
std::string countOf(uint64_t n, std::string_view noun);

/// Removes leading and trailing spaces, tabs and carriage returns.
std::string_view trim(std::string_view text);

/// Splits on runs of spaces and tabs; no empty fields.
std::vector<std::string_view> splitFields(std::string_view text);

} // namespace keel

#endif // KEEL_SUPPORT_TEXT_H
