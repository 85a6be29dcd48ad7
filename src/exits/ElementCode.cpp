//===- ElementCode.cpp - Keel's element semantics in MLIR arith and math ===//
#include "ElementCode.h"

#include "keel/exits/MlirText.h"

#include <cmath>
#include <limits>
#include <stdexcept>

namespace keel::exits::detail {

using ir::DType;

namespace {

std::string ty(DType t) { return mlirElementType(t); }

bool isNativeFloat(DType t) { return t == DType::F32 || t == DType::F64; }

/// The f32 or f64 type a float dtype computes in.
DType computeWidth(DType t) { return t == DType::F64 ? DType::F64 : DType::F32; }

/// `t`, a float dtype the exit computes in (linalgCapabilities): what
/// legalization leaves for arithmetic, compare and the math functions.
DType nativeFloat(DType t) {
  if (!isNativeFloat(t))
    throw std::logic_error("arithmetic on " + std::string(ir::dtypeName(t)) +
                           " reached the linalg exit's element code (legalization computes it in f32)");
  return t;
}

uint64_t encodingOf(DType t, double v) { return fp::fromF64(*ir::formatOf(t), v); }

/// The format a low-precision helper rounds to, by name (`fp8e4m3fn`).
std::string formatName(DType t) { return std::string(keel::elementName(t)); }

std::optional<DType> lowPrecisionByName(const std::string &name) {
  for (DType t : {DType::F16, DType::BF16, DType::TF32, DType::FP8E4M3FN, DType::FP8E5M2})
    if (formatName(t) == name)
      return t;
  return std::nullopt;
}

bool startsWith(const std::string &s, const std::string &prefix) { return s.rfind(prefix, 0) == 0; }

std::string i64(Block &b, uint64_t v) { return b.constant(DType::I64, v); }

/// `@keel.round.FORMAT(%neg: i1, %nan: i1, %sig: i64, %exp: i64)`: the
/// value (-1)^neg * sig * 2^exp (or a NaN) rounded once to nearest, ties to
/// even, into FORMAT: subnormals, overflow to infinity, and fp8e4m3fn's
/// saturation to +-448 (every infinity too), as the numerics library does.
std::string roundHelper(DType t, Helpers &h) {
  const fp::FormatInfo &f = fp::info(*ir::formatOf(t));
  fp::Format fmt = f.format;
  SsaNames names;
  Block b(names, "  ", h);
  std::string zero = i64(b, 0), one = i64(b, 1), c63 = i64(b, 63);
  std::string lz = b.op("math.ctlz %sig : i64");
  std::string p = b.op("arith.subi " + c63 + ", " + lz + " : i64"); // the top bit of sig
  std::string e = b.op("arith.addi " + p + ", %exp : i64");       // the value's binary exponent
  std::string biased = b.op("arith.addi " + e + ", " + i64(b, static_cast<uint64_t>(f.bias)) + " : i64");
  // Bits of sig below the format's last fraction bit: more for subnormals.
  std::string under = b.op("arith.maxsi " + b.op("arith.subi " + one + ", " + biased + " : i64") + ", " + zero + " : i64");
  std::string d = b.op("arith.addi " + b.op("arith.subi " + p + ", " + i64(b, static_cast<uint64_t>(f.fractionBits)) + " : i64") +
                       ", " + under + " : i64");
  std::string drops = b.op("arith.cmpi sgt, " + d + ", " + zero + " : i64");
  std::string tiny = b.op("arith.cmpi sgt, " + d + ", " + c63 + " : i64"); // far below half the smallest subnormal
  std::string ds = b.op("arith.minsi " + b.op("arith.maxsi " + d + ", " + one + " : i64") + ", " + c63 + " : i64");
  std::string kept = b.op("arith.shrui %sig, " + ds + " : i64");
  std::string mask = b.op("arith.subi " + b.op("arith.shli " + one + ", " + ds + " : i64") + ", " + one + " : i64");
  std::string rest = b.op("arith.andi %sig, " + mask + " : i64");
  std::string half = b.op("arith.shli " + one + ", " + b.op("arith.subi " + ds + ", " + one + " : i64") + " : i64");
  std::string above = b.op("arith.cmpi ugt, " + rest + ", " + half + " : i64");
  std::string tie = b.op("arith.cmpi eq, " + rest + ", " + half + " : i64");
  std::string odd = b.op("arith.trunci " + kept + " : i64 to i1");
  std::string up = b.op("arith.ori " + above + ", " + b.op("arith.andi " + tie + ", " + odd + " : i1") + " : i1");
  std::string rounded = b.op("arith.addi " + kept + ", " + b.op("arith.extui " + up + " : i1 to i64") + " : i64");
  rounded = b.op("arith.select " + tiny + ", " + zero + ", " + rounded + " : i64");
  // Fewer bits than the format holds: exact, shifted up.
  std::string left = b.op("arith.minsi " + b.op("arith.maxsi " + b.op("arith.subi " + zero + ", " + d + " : i64") + ", " +
                                                zero + " : i64") + ", " + c63 + " : i64");
  std::string exact = b.op("arith.shli %sig, " + left + " : i64");
  std::string q = b.op("arith.select " + drops + ", " + rounded + ", " + exact + " : i64");
  // The encoding without its sign: (max(biased, 1) - 1) << M, plus q with
  // its hidden bit (a carry out of the fraction steps the exponent).
  std::string field = b.op("arith.subi " + b.op("arith.maxsi " + biased + ", " + one + " : i64") + ", " + one + " : i64");
  std::string enc = b.op("arith.addi " + b.op("arith.shli " + field + ", " + i64(b, static_cast<uint64_t>(f.fractionBits)) +
                                              " : i64") + ", " + q + " : i64");
  uint64_t shift = static_cast<uint64_t>(f.fractionShift);
  uint64_t largest = fp::largestFinite(fmt) >> shift;
  uint64_t overflow = f.hasInfinity ? fp::infinity(fmt) >> shift : largest; // fp8e4m3fn saturates
  std::string over = b.op("arith.cmpi sgt, " + enc + ", " + i64(b, largest) + " : i64");
  std::string mag = b.op("arith.select " + over + ", " + i64(b, overflow) + ", " + enc + " : i64");
  mag = b.op("arith.select " + b.op("arith.cmpi eq, %sig, " + zero + " : i64") + ", " + zero + ", " + mag + " : i64");
  mag = b.op("arith.select %nan, " + i64(b, fp::canonicalNaN(fmt) >> shift) + ", " + mag + " : i64");
  if (shift)
    mag = b.op("arith.shli " + mag + ", " + i64(b, shift) + " : i64");
  std::string sign = b.op("arith.select %neg, " + i64(b, f.signMask()) + ", " + zero + " : i64");
  std::string bits = b.op("arith.ori " + mag + ", " + sign + " : i64");
  std::string storage = "i" + std::to_string(f.storageBits);
  std::string narrow = b.op("arith.trunci " + bits + " : i64 to " + storage);
  std::string r = b.op("arith.bitcast " + narrow + " : " + storage + " to " + ty(t));
  b.line("return " + r + " : " + ty(t));
  return "func.func private @keel.round." + formatName(t) + "(%neg: i1, %nan: i1, %sig: i64, %exp: i64) -> " + ty(t) +
         " {\n" + b.text() + "}\n";
}

/// `@keel.from_f64.FORMAT(%x: f64)`: one rounding from f64.
std::string fromF64Helper(DType t, Helpers &h) {
  SsaNames names;
  Block b(names, "  ", h);
  std::string bits = b.op("arith.bitcast %x : f64 to i64");
  std::string neg = b.op("arith.cmpi slt, " + bits + ", " + i64(b, 0) + " : i64");
  std::string mag = b.op("arith.andi " + bits + ", " + i64(b, 0x7FFFFFFFFFFFFFFFull) + " : i64");
  std::string nan = b.op("arith.cmpi ugt, " + mag + ", " + i64(b, 0x7FF0000000000000ull) + " : i64");
  std::string ex = b.op("arith.shrui " + mag + ", " + i64(b, 52) + " : i64");
  std::string fr = b.op("arith.andi " + mag + ", " + i64(b, 0xFFFFFFFFFFFFFull) + " : i64");
  std::string normal = b.op("arith.cmpi ne, " + ex + ", " + i64(b, 0) + " : i64");
  std::string sig = b.op("arith.select " + normal + ", " + b.op("arith.ori " + fr + ", " + i64(b, 1ull << 52) + " : i64") +
                         ", " + fr + " : i64");
  std::string e = b.op("arith.subi " + b.op("arith.maxsi " + ex + ", " + i64(b, 1) + " : i64") + ", " + i64(b, 1075) + " : i64");
  std::string r = b.op("func.call " + h.use("keel.round." + formatName(t)) + "(" + neg + ", " + nan + ", " + sig + ", " + e +
                       ") : (i1, i1, i64, i64) -> " + ty(t));
  b.line("return " + r + " : " + ty(t));
  return "func.func private @keel.from_f64." + formatName(t) + "(%x: f64) -> " + ty(t) + " {\n" + b.text() + "}\n";
}

/// `@keel.from_i64.FORMAT(%x: i64)` / `@keel.from_u64.FORMAT`: one rounding
/// from a 64-bit integer.
std::string fromIntHelper(DType t, bool isSigned, Helpers &h) {
  SsaNames names;
  Block b(names, "  ", h);
  std::string zero = i64(b, 0), neg, sig = "%x";
  if (isSigned) {
    neg = b.op("arith.cmpi slt, %x, " + zero + " : i64");
    sig = b.op("arith.select " + neg + ", " + b.op("arith.subi " + zero + ", %x : i64") + ", %x : i64"); // |MIN| is 2^63 unsigned
  } else {
    neg = b.constant("false", "i1");
  }
  std::string noNaN = b.constant("false", "i1");
  std::string r = b.op("func.call " + h.use("keel.round." + formatName(t)) + "(" + neg + ", " + noNaN + ", " + sig + ", " +
                       zero + ") : (i1, i1, i64, i64) -> " + ty(t));
  b.line("return " + r + " : " + ty(t));
  return "func.func private @keel.from_" + std::string(isSigned ? "i64." : "u64.") + formatName(t) + "(%x: i64) -> " +
         ty(t) + " {\n" + b.text() + "}\n";
}

/// `@keel.decode.FORMAT(%x)`: an fp8 value as the f32 of the same value
/// (exact; a NaN is the quiet NaN of its sign).
std::string decodeHelper(DType t, Helpers &h) {
  const fp::FormatInfo &f = fp::info(*ir::formatOf(t));
  SsaNames names;
  Block b(names, "  ", h);
  auto c32 = [&](uint64_t v) { return b.constant(DType::I32, v); };
  std::string byte = b.op("arith.bitcast %x : " + ty(t) + " to i8");
  std::string w = b.op("arith.extui " + byte + " : i8 to i32");
  std::string sign = b.op("arith.shli " + b.op("arith.andi " + w + ", " + c32(0x80) + " : i32") + ", " + c32(24) + " : i32");
  uint64_t fracMask = (uint64_t{1} << f.fractionBits) - 1, expMask = (uint64_t{1} << f.exponentBits) - 1;
  std::string ex = b.op("arith.andi " + b.op("arith.shrui " + w + ", " + c32(static_cast<uint64_t>(f.fractionBits)) + " : i32") +
                        ", " + c32(expMask) + " : i32");
  std::string fr = b.op("arith.andi " + w + ", " + c32(fracMask) + " : i32");
  std::string normal = b.op("arith.ori " +
                            b.op("arith.shli " + b.op("arith.addi " + ex + ", " + c32(static_cast<uint64_t>(127 - f.bias)) + " : i32") +
                                 ", " + c32(23) + " : i32") +
                            ", " + b.op("arith.shli " + fr + ", " + c32(static_cast<uint64_t>(23 - f.fractionBits)) + " : i32") + " : i32");
  // A subnormal is fr * 2^(1 - bias - M), exact in f32.
  std::string scale = b.constant(DType::F32, fp::fromF64(fp::Format::F32, std::ldexp(1.0, 1 - f.bias - f.fractionBits)));
  std::string sub = b.op("arith.bitcast " + b.op("arith.mulf " + b.op("arith.uitofp " + fr + " : i32 to f32") + ", " + scale + " : f32") +
                         " : f32 to i32");
  std::string mag = b.op("arith.select " + b.op("arith.cmpi eq, " + ex + ", " + c32(0) + " : i32") + ", " + sub + ", " + normal + " : i32");
  if (f.hasInfinity) {
    std::string top = b.op("arith.cmpi eq, " + ex + ", " + c32(expMask) + " : i32");
    std::string special = b.op("arith.select " + b.op("arith.cmpi eq, " + fr + ", " + c32(0) + " : i32") + ", " + c32(0x7F800000) +
                               ", " + c32(0x7FC00000) + " : i32");
    mag = b.op("arith.select " + top + ", " + special + ", " + mag + " : i32");
  } else { // e4m3fn: only all-ones is NaN
    std::string nan = b.op("arith.cmpi eq, " + b.op("arith.andi " + w + ", " + c32(0x7F) + " : i32") + ", " + c32(0x7F) + " : i32");
    mag = b.op("arith.select " + nan + ", " + c32(0x7FC00000) + ", " + mag + " : i32");
  }
  std::string r = b.op("arith.bitcast " + b.op("arith.ori " + mag + ", " + sign + " : i32") + " : i32 to f32");
  b.line("return " + r + " : f32");
  return "func.func private @keel.decode." + formatName(t) + "(%x: " + ty(t) + ") -> f32 {\n" + b.text() + "}\n";
}

/// `@keel.tf32(%x: f32) -> f32` and `@keel.bf16(%x: f32) -> bf16`: an f32
/// rounded to nearest, ties to even, on the 13 (tf32) or 16 (bf16) low
/// bits it drops; an overflow carries into infinity, a NaN stays a quiet
/// NaN of its sign, subnormals round like the rest. Written out because
/// LLVM's own f32 -> bf16 may flush subnormals on the host.
std::string truncationHelper(DType t, Helpers &h) {
  int drop = t == DType::TF32 ? 13 : 16;
  SsaNames names;
  Block b(names, "  ", h);
  auto c32 = [&](uint64_t v) { return b.constant(DType::I32, v); };
  std::string bits = b.op("arith.bitcast %x : f32 to i32");
  std::string nan = b.op("arith.cmpi ugt, " + b.op("arith.andi " + bits + ", " + c32(0x7FFFFFFF) + " : i32") + ", " +
                         c32(0x7F800000) + " : i32");
  std::string lsb = b.op("arith.andi " + b.op("arith.shrui " + bits + ", " + c32(static_cast<uint64_t>(drop)) + " : i32") +
                         ", " + c32(1) + " : i32");
  uint64_t half = (uint64_t{1} << (drop - 1)) - 1;
  std::string sum = b.op("arith.addi " + bits + ", " + b.op("arith.addi " + lsb + ", " + c32(half) + " : i32") + " : i32");
  std::string rounded = b.op("arith.andi " + sum + ", " + c32(~((uint64_t{1} << drop) - 1) & 0xFFFFFFFF) + " : i32");
  std::string quiet = b.op("arith.ori " + b.op("arith.andi " + bits + ", " + c32(0x80000000) + " : i32") + ", " +
                           c32(0x7FC00000) + " : i32");
  std::string r = b.op("arith.select " + nan + ", " + quiet + ", " + rounded + " : i32");
  if (t == DType::TF32) {
    b.line("return " + b.op("arith.bitcast " + r + " : i32 to f32") + " : f32");
    return "func.func private @keel.tf32(%x: f32) -> f32 {\n" + b.text() + "}\n";
  }
  std::string top = b.op("arith.trunci " + b.op("arith.shrui " + r + ", " + c32(16) + " : i32") + " : i32 to i16");
  b.line("return " + b.op("arith.bitcast " + top + " : i16 to bf16") + " : bf16");
  return "func.func private @keel.bf16(%x: f32) -> bf16 {\n" + b.text() + "}\n";
}

/// `@keel.print_bits`: `( a, b, c )` and a newline, through the MLIR
/// runner utilities' printing functions (the one helper that uses scf).
std::string printBitsHelper(Helpers &h) {
  return "func.func private @keel.print_bits(%bits: tensor<?xi64>) {\n"
         "  %c0 = arith.constant 0 : index\n"
         "  %c1 = arith.constant 1 : index\n"
         "  %n = tensor.dim %bits, %c0 : tensor<?xi64>\n"
         "  func.call " + h.use("printOpen") + "() : () -> ()\n"
         "  scf.for %i = %c0 to %n step %c1 {\n"
         "    %later = arith.cmpi ugt, %i, %c0 : index\n"
         "    scf.if %later {\n"
         "      func.call " + h.use("printComma") + "() : () -> ()\n"
         "    }\n"
         "    %v = tensor.extract %bits[%i] : tensor<?xi64>\n"
         "    func.call " + h.use("printU64") + "(%v) : (i64) -> ()\n"
         "  }\n"
         "  func.call " + h.use("printClose") + "() : () -> ()\n"
         "  func.call " + h.use("printNewline") + "() : () -> ()\n"
         "  return\n"
         "}\n";
}

} // namespace

//===-- Helpers ----------------------------------------------------------===//

std::string Helpers::use(const std::string &name) {
  if (!defs_.count(name)) {
    defs_[name] = ""; // a helper may use others; each is made once
    defs_[name] = define(name);
  }
  return "@" + name;
}

std::string Helpers::define(const std::string &name) {
  auto suffix = [&](const std::string &prefix) { return lowPrecisionByName(name.substr(prefix.size())); };
  if (startsWith(name, "keel.round."))
    return roundHelper(*suffix("keel.round."), *this);
  if (startsWith(name, "keel.from_f64."))
    return fromF64Helper(*suffix("keel.from_f64."), *this);
  if (startsWith(name, "keel.from_i64."))
    return fromIntHelper(*suffix("keel.from_i64."), true, *this);
  if (startsWith(name, "keel.from_u64."))
    return fromIntHelper(*suffix("keel.from_u64."), false, *this);
  if (startsWith(name, "keel.decode."))
    return decodeHelper(*suffix("keel.decode."), *this);
  if (name == "keel.tf32")
    return truncationHelper(DType::TF32, *this);
  if (name == "keel.bf16")
    return truncationHelper(DType::BF16, *this);
  if (name == "keel.print_bits")
    return printBitsHelper(*this);
  // Keel's deterministic functions (libkeel_math.so) and the runner's
  // printing functions (libmlir_c_runner_utils.so), declared.
  if (startsWith(name, "keel_pow_")) {
    std::string w = name.substr(9);
    return "func.func private @" + name + "(" + w + ", " + w + ") -> " + w + "\n";
  }
  if (startsWith(name, "keel_")) {
    std::string w = name.substr(name.size() - 3);
    return "func.func private @" + name + "(" + w + ") -> " + w + "\n";
  }
  if (name == "printU64")
    return "func.func private @printU64(i64)\n";
  return "func.func private @" + name + "()\n"; // printOpen, printComma, printClose, printNewline
}

std::string Helpers::text() const {
  std::string s;
  for (const auto &[name, def] : defs_)
    s += def;
  return s;
}

//===-- Block ------------------------------------------------------------===//

std::string Block::op(const std::string &rhs) {
  std::string name = fresh();
  text_ += indent_ + name + " = " + rhs + "\n";
  return name;
}

std::string Block::constant(DType t, uint64_t encoding) {
  return constant(mlirLiteral(t, encoding), ty(t));
}

std::string Block::constant(const std::string &literal, const std::string &type) {
  return op(mlirConstant(literal, type));
}

std::string Block::f64(double v) { return constant(DType::F64, fp::fromF64(fp::Format::F64, v)); }

std::string Block::indexI64(int64_t dim) {
  std::string i = op("linalg.index " + std::to_string(dim) + " : index");
  return op("arith.index_cast " + i + " : index to i64");
}

std::string Block::toF32(DType t, const std::string &x) {
  switch (t) {
  case DType::F16: return op("arith.extf " + x + " : f16 to f32");
  case DType::BF16: { // the top half of an f32, exactly (subnormals too)
    std::string bits = op("arith.extui " + op("arith.bitcast " + x + " : bf16 to i16") + " : i16 to i32");
    return op("arith.bitcast " + op("arith.shli " + bits + ", " + constant(DType::I32, 16) + " : i32") + " : i32 to f32");
  }
  case DType::TF32: case DType::F32: return x;
  case DType::FP8E4M3FN: case DType::FP8E5M2:
    return op("func.call " + helpers_.use("keel.decode." + formatName(t)) + "(" + x + ") : (" + ty(t) + ") -> f32");
  case DType::F64: case DType::Bool: case DType::I4: case DType::I8: case DType::I16: case DType::I32: case DType::I64:
  case DType::U8: case DType::U16: case DType::U32: case DType::U64:
    break;
  }
  return x; // not a float narrower than f64: callers never ask
}

std::string Block::fromF32(DType t, const std::string &x) {
  switch (t) {
  case DType::F16: return op("arith.truncf " + x + " : f32 to f16");
  case DType::BF16: return op("func.call " + helpers_.use("keel.bf16") + "(" + x + ") : (f32) -> bf16");
  case DType::TF32: return op("func.call " + helpers_.use("keel.tf32") + "(" + x + ") : (f32) -> f32");
  case DType::F32: return x;
  case DType::FP8E4M3FN: case DType::FP8E5M2: {
    std::string wide = op("arith.extf " + x + " : f32 to f64");
    return op("func.call " + helpers_.use("keel.from_f64." + formatName(t)) + "(" + wide + ") : (f64) -> " + ty(t));
  }
  case DType::F64: case DType::Bool: case DType::I4: case DType::I8: case DType::I16: case DType::I32: case DType::I64:
  case DType::U8: case DType::U16: case DType::U32: case DType::U64:
    break;
  }
  return x;
}

std::string Block::widenToI64(DType from, const std::string &x) {
  if (from == DType::I64 || from == DType::U64)
    return x;
  bool sign = ir::isSignedType(from) && from != DType::Bool;
  return op(std::string(sign ? "arith.extsi " : "arith.extui ") + x + " : " + ty(from) + " to i64");
}

std::string Block::floatToInt(DType from, DType to, const std::string &x) {
  // Legalization guarded the operand: a number in `to`'s range, from f32
  // or f64. Widened exactly to f64, truncated toward zero in i64.
  std::string w = from == DType::F64 ? x : op("arith.extf " + x + " : " + ty(from) + " to f64");
  std::string q = op(std::string(ir::isSignedType(to) ? "arith.fptosi " : "arith.fptoui ") + w + " : f64 to i64");
  return ir::encodingBits(to) < 64 ? op("arith.trunci " + q + " : i64 to " + ty(to)) : q;
}

std::string Block::intToFloat(DType from, DType to, const std::string &x) {
  bool isSigned = ir::isSignedType(from) && from != DType::Bool;
  std::string wide = widenToI64(from, x);
  if (isNativeFloat(to)) // LLVM's sitofp / uitofp round once
    return op(std::string(isSigned ? "arith.sitofp " : "arith.uitofp ") + wide + " : i64 to " + ty(to));
  std::string helper = helpers_.use(std::string(isSigned ? "keel.from_i64." : "keel.from_u64.") + formatName(to));
  return op("func.call " + helper + "(" + wide + ") : (i64) -> " + ty(to));
}

std::string Block::floatToFloat(DType from, DType to, const std::string &x) {
  if (to == DType::F64)
    return from == DType::F64 ? x : op("arith.extf " + toF32(from, x) + " : f32 to f64");
  if (from == DType::F64) {
    if (to == DType::F32)
      return op("arith.truncf " + x + " : f64 to f32");
    return op("func.call " + helpers_.use("keel.from_f64." + formatName(to)) + "(" + x + ") : (f64) -> " + ty(to));
  }
  if (to == DType::F32 || to == DType::F16 || to == DType::BF16 || to == DType::TF32)
    return fromF32(to, toF32(from, x)); // exact widening, then one rounding
  std::string wide = op("arith.extf " + toF32(from, x) + " : f32 to f64");
  return op("func.call " + helpers_.use("keel.from_f64." + formatName(to)) + "(" + wide + ") : (f64) -> " + ty(to));
}

std::string Block::convert(DType from, DType to, const std::string &x) {
  if (from == to)
    return x;
  bool fromFloat = ir::isFloatType(from), toFloat = ir::isFloatType(to);
  if (to == DType::Bool) {
    if (!fromFloat)
      return op("arith.cmpi ne, " + x + ", " + constant(from, 0) + " : " + ty(from));
    DType w = computeWidth(from);
    std::string v = from == DType::F64 ? x : toF32(from, x);
    return op("arith.cmpf une, " + v + ", " + constant(w, 0) + " : " + ty(w)); // NaN is true
  }
  if (fromFloat && toFloat) { // a NaN gives `to`'s canonical NaN of its sign (docs/numerics.md)
    // Every conversion keeps NaN-ness: test the result where it is an f32
    // or f64, else the source widened exactly (the CPU lowering compares
    // no narrower float).
    std::string r = floatToFloat(from, to, x);
    bool wide = to == DType::F32 || to == DType::TF32 || to == DType::F64;
    std::string v = wide ? r : from == DType::F64 ? x : toF32(from, x);
    DType vt = wide ? to : from == DType::F64 ? DType::F64 : DType::F32;
    std::string nan = op("arith.cmpf uno, " + v + ", " + v + " : " + ty(vt));
    std::string bits = "i" + std::to_string(ir::encodingBits(from));
    std::string asInt = op("arith.bitcast " + x + " : " + ty(from) + " to " + bits);
    std::string zero = constant("0", bits);
    std::string negative = op("arith.cmpi slt, " + asInt + ", " + zero + " : " + bits);
    fp::Format f = *ir::formatOf(to);
    std::string minus = constant(to, fp::canonicalNaN(f, true)); // one statement each: the text's order
    std::string plus = constant(to, fp::canonicalNaN(f, false));
    std::string canonical = select(to, negative, minus, plus);
    return select(to, nan, canonical, r);
  }
  if (fromFloat)
    return floatToInt(from, to, x);
  if (toFloat)
    return intToFloat(from, to, x);
  // Integer to integer: truncation, or extension by the source's signedness.
  int fb = ir::encodingBits(from), tb = ir::encodingBits(to);
  if (fb == tb)
    return x;
  if (fb > tb)
    return op("arith.trunci " + x + " : " + ty(from) + " to " + ty(to));
  bool sign = ir::isSignedType(from) && from != DType::Bool;
  return op(std::string(sign ? "arith.extsi " : "arith.extui ") + x + " : " + ty(from) + " to " + ty(to));
}

std::string Block::transcendental(ir::UnaryCode c, const std::string &w, const std::string &x) {
  using U = ir::UnaryCode;
  std::optional<ir::MathFunction> math = ir::mathFunction(c);
  if (!math)
    return x; // not a math function: never asked
  if (helpers_.keelMath) {
    std::string fn = helpers_.use("keel_" + std::string(math->name) + "_" + w);
    return op("func.call " + fn + "(" + x + ") : (" + w + ") -> " + w);
  }
  if (!math->mlir.empty()) // the math dialect's own operation
    return op(std::string(math->mlir) + " " + x + " : " + w);
  DType wt = w == "f64" ? DType::F64 : DType::F32;
  auto lit = [&](double v) { return constant(wt, encodingOf(wt, v)); };
  auto binary = [&](const std::string &mnemonic, const std::string &a, const std::string &b) {
    return op(mnemonic + " " + a + ", " + b + " : " + w);
  };
  // sigmoid without overflow: e = exp(-|x|) in (0, 1]; 1 / (1 + e) for
  // x >= 0, e / (1 + e) below.
  auto sigmoid = [&]() {
    std::string e = op("math.exp " + op("arith.negf " + op("math.absf " + x + " : " + w) + " : " + w) + " : " + w);
    std::string d = binary("arith.addf", lit(1.0), e);
    std::string positive = op("arith.cmpf oge, " + x + ", " + lit(0.0) + " : " + w);
    return op("arith.select " + positive + ", " + binary("arith.divf", lit(1.0), d) + ", " + binary("arith.divf", e, d) +
              " : " + w);
  };
  // x * (something that is 0 at -inf) is NaN there; the limit is -0.
  auto zeroAtMinusInfinity = [&](const std::string &r) {
    std::string minusInf = op("arith.cmpf oeq, " + x + ", " + lit(-std::numeric_limits<double>::infinity()) + " : " + w);
    return op("arith.select " + minusInf + ", " + lit(-0.0) + ", " + r + " : " + w);
  };
  // The functions written out here (MathFunctions.def's empty `mlir`).
  if (c == U::Sigmoid)
    return sigmoid();
  if (c == U::Silu)
    return zeroAtMinusInfinity(binary("arith.mulf", x, sigmoid()));
  if (c == U::Gelu) { // x/2 * erfc(-x / sqrt(2)): no cancellation for negative x
    std::string half = binary("arith.mulf", x, lit(0.5));
    std::string scaled = binary("arith.mulf", x, lit(-0.70710678118654752440));
    return zeroAtMinusInfinity(binary("arith.mulf", half, op("math.erfc " + scaled + " : " + w)));
  }
  throw std::logic_error("the linalg exit has neither a math operation nor a composition for `" +
                         std::string(math->name) + "` (MathFunctions.def)");
}

std::string Block::unary(ir::UnaryCode c, DType t, const std::string &x) {
  using U = ir::UnaryCode;
  if (ir::isFloatType(t)) {
    DType w = nativeFloat(t);
    std::string wt = ty(w), v = x, r;
    switch (c) {
    case U::Neg: r = op("arith.negf " + v + " : " + wt); break;
    case U::Abs: r = op("math.absf " + v + " : " + wt); break;
    case U::Relu: r = op("arith.maximumf " + v + ", " + constant(w, 0) + " : " + wt); break; // NaN stays, -0 is +0
    case U::Not: r = v; break; // not on floats: the verifier rejects it
#define KEEL_MATH_FUNCTION(Enum, name, mlir, stablehlo, summary) case U::Enum:
#include "keel/support/MathFunctions.def"
#undef KEEL_MATH_FUNCTION
      // A function the exit writes out is composed in f64 and rounded once
      // (as Keel's library computes it).
      if (ir::mathFunction(c)->mlir.empty() && w == DType::F32 && !helpers_.keelMath) {
        std::string wide = transcendental(c, "f64", op("arith.extf " + v + " : f32 to f64"));
        r = op("arith.truncf " + wide + " : f64 to f32");
      } else {
        r = transcendental(c, wt, v);
      }
      break;
    }
    return r;
  }
  std::string T = ty(t);
  switch (c) {
  case U::Neg: return op("arith.subi " + constant(t, 0) + ", " + x + " : " + T); // wraps: -MIN is MIN
  case U::Abs: {
    std::string negative = op("arith.cmpi slt, " + x + ", " + constant(t, 0) + " : " + T);
    std::string negated = op("arith.subi " + constant(t, 0) + ", " + x + " : " + T);
    return op("arith.select " + negative + ", " + negated + ", " + x + " : " + T);
  }
  case U::Relu: return op("arith.maxsi " + x + ", " + constant(t, 0) + " : " + T);
  case U::Not: return op("arith.xori " + x + ", " + constant(t, ~uint64_t{0}) + " : " + T);
#define KEEL_MATH_FUNCTION(Enum, name, mlir, stablehlo, summary) case U::Enum:
#include "keel/support/MathFunctions.def"
#undef KEEL_MATH_FUNCTION
    break; // float only: the verifier rejects them
  }
  return x;
}

namespace {
/// The table's operation for `c` on `t`; the verifier admits no dtype
/// without one.
std::string spelling(std::string_view op, ir::BinaryCode c, DType t) {
  if (op.empty())
    throw std::logic_error("the linalg exit received `binary." + std::string(ir::binaryName(c)) + "` on " +
                           std::string(ir::dtypeName(t)) + ", which the verifier rejects");
  return std::string(op);
}
} // namespace

std::string Block::binary(ir::BinaryCode c, DType t, const std::string &a, const std::string &b) {
  // keel/support/Operators.def's spellings; integer division arrives with
  // a guarded divisor (never 0, nor -1 under MIN), float rem is fmod
  // (exact), min/max are IEEE 754-2019's (NaN wins, -0 < +0).
  const BinaryCodeInfo &info = binaryCodeInfo(c);
  if (ir::isFloatType(t)) {
    std::string wt = ty(nativeFloat(t));
    if (c == ir::BinaryCode::Pow && helpers_.keelMath)
      return op("func.call " + helpers_.use("keel_pow_" + wt) + "(" + a + ", " + b + ") : (" + wt + ", " + wt + ") -> " + wt);
    return op(spelling(info.mlirFloat, c, t) + " " + a + ", " + b + " : " + wt);
  }
  return op(spelling(ir::isSignedType(t) ? info.mlirSigned : info.mlirUnsigned, c, t) + " " + a + ", " + b + " : " + ty(t));
}

std::string Block::compare(ir::CompareDir d, DType t, const std::string &a, const std::string &b) {
  const CompareDirInfo &info = compareDirInfo(d);
  if (ir::isFloatType(t)) // ordered, but `une`: true for a NaN
    return op("arith.cmpf " + std::string(info.mlirFloat) + ", " + a + ", " + b + " : " + ty(nativeFloat(t)));
  bool isSigned = ir::isSignedType(t) && t != DType::Bool;
  return op("arith.cmpi " + std::string(isSigned ? info.mlirSigned : info.mlirUnsigned) + ", " + a + ", " + b + " : " +
            ty(t));
}

std::string Block::select(DType t, const std::string &c, const std::string &a, const std::string &b) {
  return op("arith.select " + c + ", " + a + ", " + b + " : " + ty(t));
}


} // namespace keel::exits::detail
