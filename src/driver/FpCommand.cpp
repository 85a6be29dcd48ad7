//===- FpCommand.cpp - `keel fp`: how values round in each format --------===//
//
//   keel fp encode  FORMAT [DECIMAL...]      decimal -> encoding
//   keel fp decode  FORMAT [HEXBITS...]      encoding -> exact decimal, class
//   keel fp convert FROM TO [HEXBITS...]     encoding -> encoding
//   keel fp arith   FORMAT OP [HEXA HEXB]    OP: add sub mul div
//   keel fp table   FORMAT                   boundary values of the format
//   keel fp show    [DECIMAL...]             one value in every format
//
// With no values on the command line, values come from standard input, one
// per line (arith: two encodings per line), so millions can be checked in one
// process. Every result is one line, in input order. A bad argument or line
// stops the command with a message naming it and exit status 2; only whole
// result lines are ever written. Command-line values are all checked before
// anything is printed.
//
//===----------------------------------------------------------------------===//
#include "Commands.h"

#include "keel/numerics/Format.h"
#include "keel/support/Text.h"

#include <cmath>
#include <cstdio>
#include <cstdlib>
#include <functional>
#include <iostream>
#include <string>
#include <vector>

namespace keel::driver {
namespace {

using fp::Format;

constexpr std::string_view kUsage =
    "usage: keel fp encode  FORMAT [DECIMAL...]\n"
    "       keel fp decode  FORMAT [HEXBITS...]\n"
    "       keel fp convert FROM TO [HEXBITS...]\n"
    "       keel fp arith   FORMAT OP [HEXA HEXB]      OP: add sub mul div\n"
    "       keel fp table   FORMAT\n"
    "       keel fp show    [DECIMAL...]        (encoding, relative error, exact value)\n"
    "\n"
    "FORMAT: f16 bf16 tf32 fp8e4m3fn fp8e5m2 f32 f64. Encodings are 0x and a\n"
    "fixed number of hex digits: 4 for f16 and bf16, 8 for tf32 (its f32\n"
    "carrier) and f32, 2 for the fp8 formats, 16 for f64. Without values on\n"
    "the command line, values are read from standard input, one per line\n"
    "(arith: two encodings per line). Rounding is to nearest, ties to even,\n"
    "once, from the exact value; see docs/numerics.md.\n";

/// A user error: the message is printed after "keel fp: error: ".
struct UsageError {
  std::string message;
};

/// Where an input came from, for messages: "argument 3" or "<stdin>:12".
std::string place(bool fromStdin, size_t index) {
  return fromStdin ? "<stdin>:" + std::to_string(index)
                   : "argument " + std::to_string(index);
}

Format parseFormatArg(std::string_view text) {
  if (auto f = fp::parseFormat(text))
    return *f;
  std::string hint;
  if (text == "fp8" || text == "fp8e4m3" || text == "fp8e5" || text == "e4m3" ||
      text == "e5m2")
    hint = " (fp8 needs its full name: fp8e4m3fn or fp8e5m2)";
  else if (text == "half" || text == "float16")
    hint = " (did you mean f16?)";
  else if (text == "bfloat16")
    hint = " (did you mean bf16?)";
  else if (text == "float" || text == "float32")
    hint = " (did you mean f32?)";
  else if (text == "double" || text == "float64")
    hint = " (did you mean f64?)";
  throw UsageError{"unknown format '" + std::string(text) + "'" + hint +
                   "; expected one of f16 bf16 tf32 fp8e4m3fn fp8e5m2 f32 f64"};
}

uint64_t parseEncoding(Format f, std::string_view text, const std::string &where) {
  const fp::FormatInfo &fi = fp::info(f);
  std::optional<uint64_t> bits = parseFixedHex(text, fi.hexDigits());
  if (!bits)
    throw UsageError{where + ": '" + std::string(text) + "' is not an encoding of " +
                     std::string(fi.name) + " (expected 0x and " +
                     std::to_string(fi.hexDigits()) + " hex digits)"};
  if (!fp::isValidEncoding(f, *bits))
    throw UsageError{where + ": '" + std::string(text) +
                     "' is not a tf32 value: the 13 low bits of its f32 carrier "
                     "must be zero (round it with 'keel fp convert f32 tf32')"};
  return *bits;
}

uint64_t parseDecimalArg(Format f, std::string_view text, const std::string &where) {
  if (auto bits = fp::fromDecimal(f, text))
    return *bits;
  throw UsageError{where + ": '" + std::string(text) +
                   "' is not a decimal number (expected e.g. 0.1, -2.5e-3, 1e400, "
                   "inf, nan)"};
}

std::string hex(Format f, uint64_t bits) {
  return formatFixedHex(bits, fp::info(f).hexDigits());
}

/// Runs `perLine` on each value, from the command line (all checked first)
/// or from standard input (streamed). `perLine` appends one result line.
/// `fieldsPerValue` is 2 for arith.
int forEachValue(const std::vector<std::string_view> &args, size_t firstArgIndex,
                 size_t fieldsPerValue,
                 const std::function<std::string(std::span<const std::string_view>,
                                                 const std::string &)> &perLine) {
  std::string out;
  if (!args.empty()) {
    if (args.size() % fieldsPerValue != 0)
      throw UsageError{"expected values in groups of " + std::to_string(fieldsPerValue) +
                       ", got " + std::to_string(args.size())};
    for (size_t i = 0; i < args.size(); i += fieldsPerValue)
      out += perLine(std::span(args).subspan(i, fieldsPerValue),
                     place(false, firstArgIndex + i));
    std::fwrite(out.data(), 1, out.size(), stdout);
    return 0;
  }
  std::string line;
  size_t lineNo = 0;
  auto flush = [&] {
    std::fwrite(out.data(), 1, out.size(), stdout);
    out.clear();
  };
  try {
    while (std::getline(std::cin, line)) {
      ++lineNo;
      std::vector<std::string_view> fields = splitFields(line);
      std::string where = place(true, lineNo);
      if (fields.size() != fieldsPerValue)
        throw UsageError{where + ": expected " + std::to_string(fieldsPerValue) +
                         (fieldsPerValue == 1 ? " value" : " values") + ", got " +
                         std::to_string(fields.size())};
      out += perLine(fields, where);
      if (out.size() >= (1u << 16))
        flush();
    }
  } catch (const UsageError &) {
    flush(); // the complete lines before the bad one stand
    throw;
  }
  flush();
  return 0;
}

std::vector<std::string_view> rest(const std::vector<std::string_view> &args, size_t from) {
  return from < args.size() ? std::vector<std::string_view>(args.begin() + from, args.end())
                            : std::vector<std::string_view>{};
}

void expectArgs(const std::vector<std::string_view> &args, size_t count,
                std::string_view what) {
  if (args.size() < count)
    throw UsageError{"'" + std::string(args[0]) + "' needs " + std::string(what)};
}

int encodeCmd(const std::vector<std::string_view> &args) {
  expectArgs(args, 2, "a FORMAT");
  Format f = parseFormatArg(args[1]);
  return forEachValue(rest(args, 2), 3, 1, [&](auto v, const std::string &where) {
    return hex(f, parseDecimalArg(f, v[0], where)) + "\n";
  });
}

int decodeCmd(const std::vector<std::string_view> &args) {
  expectArgs(args, 2, "a FORMAT");
  Format f = parseFormatArg(args[1]);
  return forEachValue(rest(args, 2), 3, 1, [&](auto v, const std::string &where) {
    uint64_t bits = parseEncoding(f, v[0], where);
    return fp::exactDecimal(f, bits) + " " +
           std::string(fp::className(fp::classify(f, bits))) + "\n";
  });
}

int convertCmd(const std::vector<std::string_view> &args) {
  expectArgs(args, 3, "FROM and TO formats");
  Format from = parseFormatArg(args[1]), to = parseFormatArg(args[2]);
  return forEachValue(rest(args, 3), 4, 1, [&](auto v, const std::string &where) {
    return hex(to, fp::convert(from, to, parseEncoding(from, v[0], where))) + "\n";
  });
}

int arithCmd(const std::vector<std::string_view> &args) {
  expectArgs(args, 3, "a FORMAT and an OP (add, sub, mul or div)");
  Format f = parseFormatArg(args[1]);
  std::optional<fp::ArithOp> op = fp::parseArithOp(args[2]);
  if (!op)
    throw UsageError{"unknown operation '" + std::string(args[2]) +
                     "'; expected add, sub, mul or div"};
  if (!fp::hasArithmetic(f))
    throw UsageError{std::string(fp::info(f).name) +
                     " has no scalar arithmetic (SFEP-0054 section 3.5); convert "
                     "the operands to f32, compute there, and convert back"};
  std::vector<std::string_view> values = rest(args, 3);
  if (!values.empty() && values.size() != 2)
    throw UsageError{"arith takes exactly two encodings, got " +
                     std::to_string(values.size())};
  return forEachValue(values, 4, 2, [&](auto v, const std::string &where) {
    uint64_t a = parseEncoding(f, v[0], where), b = parseEncoding(f, v[1], where);
    return hex(f, fp::arith(f, *op, a, b)) + "\n";
  });
}

std::string tableLine(std::string_view label, Format f, uint64_t bits) {
  std::string head = std::string(label);
  head.resize(20, ' ');
  return head + hex(f, bits) + "  " + fp::exactDecimal(f, bits) + "\n";
}

int tableCmd(const std::vector<std::string_view> &args) {
  expectArgs(args, 2, "a FORMAT");
  if (args.size() > 2)
    throw UsageError{"'table' takes one FORMAT"};
  Format f = parseFormatArg(args[1]);
  const fp::FormatInfo &fi = fp::info(f);
  std::string out = std::string(fi.name) + ": 1 sign, " + std::to_string(fi.exponentBits) +
                    " exponent, " + std::to_string(fi.fractionBits) + " fraction bits; bias " +
                    std::to_string(fi.bias);
  if (f == Format::TF32)
    out += "; stored in an f32 carrier with the 13 low bits zero";
  out += "\n";
  out += tableLine("largest finite", f, fp::largestFinite(f));
  out += tableLine("smallest normal", f, fp::smallestNormal(f));
  out += tableLine("smallest subnormal", f, fp::smallestSubnormal(f));
  out += tableLine("epsilon", f, fp::epsilon(f));
  std::string label = "canonical nan";
  label.resize(20, ' ');
  out += label + hex(f, fp::canonicalNaN(f, false)) + " / " + hex(f, fp::canonicalNaN(f, true)) +
         "\n";
  label = "infinity";
  label.resize(20, ' ');
  if (fi.hasInfinity)
    out += label + hex(f, fp::infinity(f, false)) + " / " + hex(f, fp::infinity(f, true)) +
           "\n";
  else
    out += label + "none: overflow and infinity saturate to +-" +
           fp::exactDecimal(f, fp::largestFinite(f)) + "\n";
  std::fwrite(out.data(), 1, out.size(), stdout);
  return 0;
}

/// How far `bits` is from the decimal `text`, for people: "0" when exact,
/// else the relative error to two digits (through long double: "~0" when
/// it is below what long double resolves), or what happened instead.
std::string roundingNote(Format f, uint64_t bits, bool inexact, std::string_view text) {
  if (!inexact)
    return fp::classify(f, bits) == fp::FpClass::NaN ? "" : "0";
  long double x = std::strtold(std::string(text).c_str(), nullptr);
  fp::FpClass cls = fp::classify(f, bits);
  if (std::isnan(x) || cls == fp::FpClass::NaN)
    return "";
  if (std::isinf(x))
    return cls == fp::FpClass::Infinity ? "" : "saturated";
  if (cls == fp::FpClass::Infinity)
    return "overflow";
  long double value = fp::toF64(f, bits);
  if (!fp::info(f).hasInfinity && std::fabs(x) > std::fabs(value) &&
      bits == fp::largestFinite(f, fp::signBit(f, bits)))
    return "saturated";
  if (value == x)
    return "~0";
  char buf[32];
  std::snprintf(buf, sizeof buf, "%+.1Le", (value - x) / x);
  return buf;
}

int showCmd(const std::vector<std::string_view> &args) {
  return forEachValue(rest(args, 1), 2, 1, [&](auto v, const std::string &where) {
    // Checked once against f64 so a malformed value is reported before any
    // of its lines; every format then rounds from the same exact decimal.
    parseDecimalArg(Format::F64, v[0], where);
    std::string block = std::string(v[0]) + "\n";
    for (Format f : fp::allFormats()) {
      bool inexact = false;
      uint64_t bits = *fp::fromDecimal(f, v[0], &inexact);
      std::string name = "  " + std::string(fp::info(f).name);
      name.resize(13, ' ');
      std::string code = hex(f, bits);
      code.resize(20, ' ');
      std::string note = roundingNote(f, bits, inexact, v[0]);
      note.resize(11, ' ');
      block += name + code + note + fp::exactDecimal(f, bits) + "\n";
    }
    return block;
  });
}

} // namespace

int runFp(const std::vector<std::string_view> &args, std::FILE *errors) {
  if (args.empty()) {
    std::fputs(kUsage.data(), errors);
    return 2;
  }
  if (args[0] == "--help" || args[0] == "-h") {
    std::fputs(kUsage.data(), stdout);
    return 0;
  }
  try {
    if (args[0] == "encode") return encodeCmd(args);
    if (args[0] == "decode") return decodeCmd(args);
    if (args[0] == "convert") return convertCmd(args);
    if (args[0] == "arith") return arithCmd(args);
    if (args[0] == "table") return tableCmd(args);
    if (args[0] == "show") return showCmd(args);
    throw UsageError{"unknown subcommand '" + std::string(args[0]) +
                     "'; expected encode, decode, convert, arith, table or show"};
  } catch (const UsageError &e) {
    std::fflush(stdout);
    std::fprintf(errors, "keel fp: error: %s\nsee 'keel fp --help'\n", e.message.c_str());
    return 2;
  }
}

} // namespace keel::driver
