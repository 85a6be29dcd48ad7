//===- Text.cpp -----------------------------------------------------------===//
#include "keel/support/Text.h"

namespace keel {

std::optional<uint64_t> parseFixedHex(std::string_view text, int digits) {
  if (digits < 1 || digits > 16 || text.size() != static_cast<size_t>(digits) + 2 ||
      text[0] != '0' || (text[1] != 'x' && text[1] != 'X'))
    return std::nullopt;
  uint64_t value = 0;
  for (char c : text.substr(2)) {
    int d;
    if (c >= '0' && c <= '9')
      d = c - '0';
    else if (c >= 'a' && c <= 'f')
      d = c - 'a' + 10;
    else if (c >= 'A' && c <= 'F')
      d = c - 'A' + 10;
    else
      return std::nullopt;
    value = (value << 4) | static_cast<uint64_t>(d);
  }
  return value;
}

std::string formatFixedHex(uint64_t value, int digits) {
  static constexpr char kDigits[] = "0123456789abcdef";
  std::string out(static_cast<size_t>(digits) + 2, '0');
  out[1] = 'x';
  for (int i = digits + 1; i >= 2; --i, value >>= 4)
    out[static_cast<size_t>(i)] = kDigits[value & 15];
  return out;
}

static bool isBlank(char c) { return c == ' ' || c == '\t' || c == '\r'; }

std::string_view trim(std::string_view text) {
  while (!text.empty() && isBlank(text.front()))
    text.remove_prefix(1);
  while (!text.empty() && isBlank(text.back()))
    text.remove_suffix(1);
  return text;
}

std::vector<std::string_view> splitFields(std::string_view text) {
  std::vector<std::string_view> fields;
  size_t i = 0;
  while (i < text.size()) {
    while (i < text.size() && isBlank(text[i]))
      ++i;
    size_t start = i;
    while (i < text.size() && !isBlank(text[i]))
      ++i;
    if (i > start)
      fields.push_back(text.substr(start, i - start));
  }
  return fields;
}

} // namespace keel
