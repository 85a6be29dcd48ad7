//===- Text.cpp -----------------------------------------------------------===//
#include "keel/support/Text.h"

#include <algorithm>
#include <cctype>
#include <charconv>

namespace keel {

std::optional<int64_t> parseByteSize(std::string_view text) {
  uint64_t n = 0;
  auto [end, ec] = std::from_chars(text.data(), text.data() + text.size(), n);
  if (ec != std::errc() || end == text.data())
    return std::nullopt;
  std::string unit(end, text.data() + text.size());
  for (char &c : unit)
    c = static_cast<char>(std::toupper(static_cast<unsigned char>(c)));
  int shift = 0;
  if (!unit.empty()) {
    size_t at = std::string_view("KMGT").find(unit[0]);
    if (at == std::string_view::npos || !(unit.size() == 1 || unit.substr(1) == "B" || unit.substr(1) == "IB"))
      return std::nullopt;
    shift = 10 * static_cast<int>(at + 1);
  }
  if (n == 0 || n > (uint64_t{1} << (62 - shift)))
    return std::nullopt;
  return static_cast<int64_t>(n << shift);
}


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

size_t utf8Length(std::string_view text, size_t i) {
  auto byte = [&](size_t k) { return k < text.size() ? static_cast<unsigned char>(text[k]) : 0u; };
  unsigned lead = byte(i);
  if (lead < 0x80)
    return 1;
  size_t n = lead >= 0xC2 && lead <= 0xDF ? 2 : lead >= 0xE0 && lead <= 0xEF ? 3 : lead >= 0xF0 && lead <= 0xF4 ? 4 : 0;
  if (n == 0 || i + n > text.size())
    return 0;
  for (size_t k = 1; k < n; ++k)
    if ((byte(i + k) & 0xC0) != 0x80)
      return 0;
  unsigned second = byte(i + 1);
  if ((lead == 0xE0 && second < 0xA0) || (lead == 0xED && second > 0x9F) || // overlong; surrogates
      (lead == 0xF0 && second < 0x90) || (lead == 0xF4 && second > 0x8F))   // overlong; past U+10FFFF
    return 0;
  return n;
}

uint32_t utf8CodePoint(std::string_view text, size_t i) {
  size_t n = utf8Length(text, i);
  auto byte = [&](size_t k) { return static_cast<uint32_t>(static_cast<unsigned char>(text[k])); };
  if (n <= 1)
    return n == 1 ? byte(i) : 0xFFFD;
  uint32_t cp = byte(i) & (0x7Fu >> n);
  for (size_t k = 1; k < n; ++k)
    cp = (cp << 6) | (byte(i + k) & 0x3F);
  return cp;
}

std::string validUtf8(std::string_view text) {
  std::string out;
  out.reserve(text.size());
  for (size_t i = 0; i < text.size();) {
    size_t n = utf8Length(text, i);
    if (n == 0) {
      out += "\xEF\xBF\xBD"; // U+FFFD
      ++i;
    } else {
      out.append(text.substr(i, n));
      i += n;
    }
  }
  return out;
}

size_t displayWidth(std::string_view text) {
  size_t width = 0;
  for (size_t i = 0; i < text.size(); ++width)
    i += std::max<size_t>(1, utf8Length(text, i));
  return width;
}

std::string countOf(uint64_t n, std::string_view noun) {
  return std::to_string(n) + " " + std::string(noun) + (n == 1 ? "" : "s");
}

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
