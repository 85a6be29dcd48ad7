//===- FuzzDecimal.cpp - libFuzzer: decimal strings through the numerics --===//
//
// Any text through fromDecimal for every format. Where the text is a plain
// decimal that glibc's strtod (correctly rounded) reads whole, the f64
// result must be strtod's, bit for bit; every other format must equal the
// exact decimal rounded once, which for text that f64 holds exactly is
// convert(f64 -> format).
//
//===----------------------------------------------------------------------===//
#include "keel/numerics/Format.h"

#include <cctype>
#include <cmath>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <string>

namespace {
using keel::fp::Format;

/// [+-]digits[.digits][(e|E)[+-]digits], nothing else.
bool plainDecimal(const std::string &s) {
  size_t i = 0, n = s.size();
  if (i < n && (s[i] == '+' || s[i] == '-'))
    ++i;
  size_t digits = 0;
  while (i < n && std::isdigit(static_cast<unsigned char>(s[i])))
    ++i, ++digits;
  if (i < n && s[i] == '.') {
    ++i;
    while (i < n && std::isdigit(static_cast<unsigned char>(s[i])))
      ++i, ++digits;
  }
  if (digits == 0)
    return false;
  if (i < n && (s[i] == 'e' || s[i] == 'E')) {
    ++i;
    if (i < n && (s[i] == '+' || s[i] == '-'))
      ++i;
    size_t exp = 0;
    while (i < n && std::isdigit(static_cast<unsigned char>(s[i])))
      ++i, ++exp;
    if (exp == 0)
      return false;
  }
  return i == n;
}
} // namespace

extern "C" int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size) {
  std::string text(reinterpret_cast<const char *>(data), size);
  constexpr Format kAll[] = {Format::F16, Format::BF16, Format::TF32, Format::FP8E4M3FN, Format::FP8E5M2,
                             Format::F32, Format::F64};
  for (Format f : kAll)
    (void)keel::fp::fromDecimal(f, text);
  if (!plainDecimal(text) || text.size() > 200)
    return 0;
  bool inexact = false;
  std::optional<uint64_t> keel = keel::fp::fromDecimal(Format::F64, text, &inexact);
  double d = std::strtod(text.c_str(), nullptr);
  uint64_t bits;
  std::memcpy(&bits, &d, 8);
  if (!keel || *keel != bits) {
    std::fprintf(stderr, "'%s': strtod gives 0x%016llx, Keel %s\n", text.c_str(),
                 static_cast<unsigned long long>(bits), keel ? std::to_string(*keel).c_str() : "nothing");
    std::abort();
  }
  if (!inexact) // f64 holds the decimal exactly: each format is one rounding of it
    for (Format f : kAll)
      if (keel::fp::fromDecimal(f, text) != std::optional<uint64_t>(keel::fp::convert(Format::F64, f, bits))) {
        std::fprintf(stderr, "'%s' rounds differently from its exact f64 value in format %d\n", text.c_str(),
                     static_cast<int>(f));
        std::abort();
      }
  return 0;
}
