//===- keel/transforms/Legalize.h - What an exit receives ------*- C++ -*-===//
//
// Keel's element semantics (docs/semantics.md) are the tensor IR's: every
// elementwise op means the same on every exit. Targets do not all provide
// that meaning natively, so each exit states what it does provide in a
// Capabilities record, and legalization writes out the rest as ordinary,
// verified tensor IR ops before the exit sees the module:
//
//   - arithmetic on a float dtype the exit does not compute in (f16, bf16,
//     tf32, fp8 on the linalg exit; fp8 on StableHLO): the operands
//     converted exactly to f32, the op in f32, the result converted back
//     with one rounding (Keel's definition for these formats; 24 >= 2p + 2
//     makes it the correctly rounded result for the IEEE basic operations);
//   - integer division and remainder where the target's is undefined or
//     the consumer's: the divisor made 1 where it is 0 (or -1 under MIN),
//     and x / 0 = 0, x % 0 = x selected after;
//   - float to integer conversion where the target's is poison out of
//     range: NaN and out-of-range values replaced before the conversion,
//     the saturated result selected after;
//   - conversion into fp8e4m3fn where the target's overflows to NaN: the
//     value clamped to +-448 first;
//   - an iota whose indices are not all values of its dtype, where the
//     target makes iota only exactly: made in i64 and converted;
//   - a reduction or contraction whose accumulator converts into its
//     result by one of the conversions above: it gives the accumulator's
//     dtype, converted after (by those rules);
//   - a float sum in the tree order (`order = tree`) where the exit has no
//     order of its own to pin: written out as the order's definition in
//     ordinary ops (the terms padded with -0 to whole 16-lane groups,
//     reshaped so that a sequential reduce.sum or dot_general makes each
//     lane, then slices and binary.add for the halving and for the tree
//     over the chunks); an integer sum, whose order changes no bit, simply
//     becomes sequential.
//
// The division and the conversions a rule guarded are marked `guarded`:
// their operands are in the domain where the target's own operation has
// Keel's meaning, so the exit maps them one to one. The pass drops every
// `guarded` it is given and guards afresh, so IR text cannot promise a
// domain it does not have. After the pass, every op of the module is
// `native` for the record; an exit checks that as it maps each op and
// reports an internal error for one that is not.
//
//===----------------------------------------------------------------------===//
#ifndef KEEL_TRANSFORMS_LEGALIZE_H
#define KEEL_TRANSFORMS_LEGALIZE_H

#include "keel/ir/IR.h"

#include <cstdint>
#include <initializer_list>
#include <string_view>

namespace keel::transforms {

/// A set of dtypes.
class DTypeSet {
public:
  DTypeSet() = default;
  DTypeSet(std::initializer_list<ir::DType> ts) {
    for (ir::DType t : ts)
      bits_ |= uint32_t{1} << static_cast<unsigned>(t);
  }
  static DTypeSet allFloats();
  bool has(ir::DType t) const { return (bits_ >> static_cast<unsigned>(t)) & 1u; }

private:
  static_assert(kNumElementTypes <= 32);
  uint32_t bits_ = 0;
};

/// What an exit computes natively with Keel's meaning.
struct Capabilities {
  std::string_view exit; ///< its name, for messages
  /// Float dtypes whose IEEE basic operations (add, sub, mul, div, rem,
  /// min, max, sqrt, neg, abs, relu, compare) the exit computes in the
  /// format, rounding once. Must hold f32 and f64.
  DTypeSet basicArithmetic;
  /// Float dtypes whose math functions (MathFunctions.def but sqrt) and
  /// pow the exit computes. Must hold f32 and f64.
  DTypeSet mathFunctions;
  /// Dtypes the pass leaves alone: ops that read or make them reach the
  /// exit as they are, for it to map or refuse (StableHLO's tf32).
  DTypeSet leftToExit;
  bool totalIntegerDivision = false; ///< x / 0 = 0, x % 0 = x, MIN / -1 = MIN
  bool saturatingFloatToInteger = false; ///< toward zero, saturating, NaN to 0
  bool saturatingFp8e4m3fn = false; ///< rounding into fp8e4m3fn saturates to +-448
  /// An iota of any dtype and size, its indices converted as `convert`
  /// does; else only in `exactIota`, where every index is a value.
  bool convertingIota = false;
  DTypeSet exactIota;
  /// `order = tree` sums reach the exit as they are: it computes them in
  /// that order, or refuses them (StableHLO, whose consumer chooses).
  bool treeOrder = false;

  /// Whether the exit maps `o` (an op of `f`) one to one with Keel's
  /// meaning. Every op but unary, binary, compare, convert, iota, reduce
  /// and dot_general is.
  bool native(const ir::Function &f, const ir::Op &o) const;
  /// Whether the exit converts `from` to `to` with Keel's meaning on every
  /// value (`convert`, and a reduction's or contraction's result).
  bool conversionNative(ir::DType from, ir::DType to) const;
  /// native(f, o), or a std::logic_error naming the op: what an exit calls
  /// as it maps each op (an op legalization left is Keel's bug).
  void require(const ir::Function &f, const ir::Op &o) const;
};

/// Rewrites every function of `m` (fusion regions included) so that each
/// op is native for `caps`; returns whether it changed the module.
bool legalize(ir::Module &m, const Capabilities &caps);

} // namespace keel::transforms

#endif // KEEL_TRANSFORMS_LEGALIZE_H
