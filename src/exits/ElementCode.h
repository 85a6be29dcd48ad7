//===- ElementCode.h - Keel's element semantics in MLIR arith and math --===//
//
// Private to the MLIR exits. Writes what one element of each tensor IR
// operation computes (docs/semantics.md) as MLIR `arith` and `math`
// operations, keeping Keel's meaning wherever MLIR's defaults differ.
// It receives legalized IR (transforms/Legalize.h, linalgCapabilities):
// arithmetic only on f32, f64 and integers, integer division with a
// guarded divisor, float to integer conversion of in-range numbers. What
// it writes out itself is the conversions:
//
//   - roundings that MLIR's CPU lowering does not provide or gives another
//     meaning (to tf32, to fp8 with e4m3fn's saturation, from f64 and i64
//     to every low-precision format in one rounding) are helper functions
//     written out in integer `arith` operations (`@keel.round.FORMAT`);
//   - transcendentals are `math` operations, or with --keel-math calls to
//     Keel's own functions (`keel_exp_f32`, ... from libkeel_math.so).
//
// Every helper is printed once, after the functions that use it.
//
//===----------------------------------------------------------------------===//
#ifndef KEEL_EXITS_ELEMENTCODE_H
#define KEEL_EXITS_ELEMENTCODE_H

#include "MlirModule.h"
#include "keel/ir/IR.h"

#include <cstdint>
#include <map>
#include <string>

namespace keel::exits::detail {

/// The module-level functions the element code calls, each defined (or
/// declared) once.
class Helpers {
public:
  explicit Helpers(bool keelMath) : keelMath(keelMath) {}
  const bool keelMath;
  /// Makes sure `@name` is in the module; returns `@name`.
  std::string use(const std::string &name);
  /// Every helper used, in name order.
  std::string text() const;

private:
  std::string define(const std::string &name);
  std::map<std::string, std::string> defs_;
};

/// Straight-line code in one block: a linalg body or a helper function.
/// Its values are temporaries of the function's SsaNames.
class Block {
public:
  Block(SsaNames &names, std::string indent, Helpers &helpers) : names_(names), indent_(std::move(indent)), helpers_(helpers) {}

  /// `%tN = rhs`; returns `%tN`.
  std::string op(const std::string &rhs);
  /// A line with no result.
  void line(const std::string &text) { text_ += indent_ + text + "\n"; }
  std::string constant(ir::DType t, uint64_t encoding);
  std::string constant(const std::string &literal, const std::string &type);
  std::string f64(double v); ///< an f64 constant
  const std::string &text() const { return text_; }
  Helpers &helpers() { return helpers_; }
  std::string fresh() { return names_.fresh(); }

  // Element semantics: operands and results are of the dtype's MLIR type.
  std::string convert(ir::DType from, ir::DType to, const std::string &x);
  std::string unary(ir::UnaryCode c, ir::DType t, const std::string &x);
  std::string binary(ir::BinaryCode c, ir::DType t, const std::string &a, const std::string &b);
  std::string compare(ir::CompareDir d, ir::DType t, const std::string &a, const std::string &b);
  std::string select(ir::DType t, const std::string &c, const std::string &a, const std::string &b);
  /// `linalg.index D`, as an i64.
  std::string indexI64(int64_t dim);

  /// The exact value of a float element of any width but f64 as an f32.
  std::string toF32(ir::DType t, const std::string &x);
  /// An f32 rounded once to `t` (a float dtype other than f64).
  std::string fromF32(ir::DType t, const std::string &x);

private:
  std::string widenToI64(ir::DType from, const std::string &x);
  std::string floatToInt(ir::DType from, ir::DType to, const std::string &x);
  std::string intToFloat(ir::DType from, ir::DType to, const std::string &x);
  std::string floatToFloat(ir::DType from, ir::DType to, const std::string &x);
  std::string transcendental(ir::UnaryCode c, const std::string &w, const std::string &x);

  SsaNames &names_;
  std::string indent_;
  Helpers &helpers_;
  std::string text_;
};

} // namespace keel::exits::detail

#endif // KEEL_EXITS_ELEMENTCODE_H
