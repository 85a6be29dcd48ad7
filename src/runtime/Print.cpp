//===- Print.cpp - Printing and stopping for generated code --------------===//
#include "keel/runtime/Print.h"

#include "keel/numerics/Format.h"

#include <algorithm>
#include <charconv>
#include <cstdio>
#include <cstdlib>
#include <string>

namespace {

FILE *out = stdout; // stderr while an assertion failure is being reported

void write(std::string_view s) { std::fwrite(s.data(), 1, s.size(), out); }

/// The shortest decimal that reads back as `bits` in `f`.
std::string shortest(keel::fp::Format f, uint64_t bits) {
  switch (keel::fp::classify(f, bits)) {
  case keel::fp::FpClass::NaN: return "nan";
  case keel::fp::FpClass::Infinity: return keel::fp::signBit(f, bits) ? "-inf" : "inf";
  default: break;
  }
  double v = keel::fp::toF64(f, bits);
  char buf[400];
  for (int digits = 1; digits <= 17; ++digits) {
    auto [end, ec] = std::to_chars(buf, buf + sizeof buf, v, std::chars_format::scientific, digits - 1);
    std::string text(buf, end);
    if (keel::fp::fromDecimal(f, text) != std::optional<uint64_t>(bits))
      continue;
    // The same digits without an exponent when that stays short: 448, 0.1.
    int exponent = std::stoi(text.substr(text.find('e') + 1));
    if (exponent >= -5 && exponent < 17) {
      auto [fixedEnd, fixedEc] = std::to_chars(buf, buf + sizeof buf, v, std::chars_format::fixed,
                                               std::max(0, digits - 1 - exponent));
      return std::string(buf, fixedEnd);
    }
    return text;
  }
  return keel::fp::exactDecimal(f, bits);
}

} // namespace

extern "C" {

void keel_rt_print_text(const char *text, int64_t length) { write(std::string_view(text, static_cast<size_t>(length))); }
void keel_rt_print_bool(int8_t v) { write(v ? "true" : "false"); }
void keel_rt_print_i64(int64_t v) { write(std::to_string(v)); }
void keel_rt_print_u64(uint64_t v) { write(std::to_string(v)); }
void keel_rt_print_f32(float v) {
  uint32_t bits;
  __builtin_memcpy(&bits, &v, 4);
  write(shortest(keel::fp::Format::F32, bits));
}
void keel_rt_print_f64(double v) {
  uint64_t bits;
  __builtin_memcpy(&bits, &v, 8);
  write(shortest(keel::fp::Format::F64, bits));
}
void keel_rt_print_lowp(int32_t format, uint64_t bits) {
  write(shortest(static_cast<keel::fp::Format>(format), bits));
}
void keel_rt_print_end(void) { write("\n"); }

void keel_rt_assert_begin(const char *file, int32_t line, int32_t column, int8_t hasMessage) {
  std::fflush(stdout);
  out = stderr;
  write(std::string("assertion failed at ") + file + ":" + std::to_string(line) + ":" + std::to_string(column) +
        (hasMessage ? ": " : ""));
}
void keel_rt_assert_fail(void) {
  write("\n");
  std::fflush(stderr);
  std::exit(1);
}
void keel_rt_internal_error(const char *what) {
  std::fflush(stdout);
  std::fprintf(stderr, "internal compiler error in generated code: %s (a bug in Keel)\n", what);
  std::exit(70);
}

} // extern "C"
