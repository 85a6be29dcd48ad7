//===- keel/exits/MlirText.h - What every MLIR exit prints ------*- C++ -*-===//
//
// The pieces of MLIR's textual form that Keel's MLIR exits (linalg here,
// StableHLO next) share: element and tensor types, exact literals and dense
// constants, locations, and affine index expressions. Keel prints MLIR text;
// it never links MLIR (SFEP-0053 §3.7).
//
// Element types: pred is i1; integers are signless (i4 ... i64; u8 ... u64
// are i8 ... i64, and each operation says whether it treats them as
// unsigned), or for StableHLO, whose integer types carry their signedness,
// u8 ... u64 are ui8 ... ui64 (`Integers::Unsigned`); f16, bf16, f32, f64
// as themselves; fp8e4m3fn and fp8e5m2 as
// f8E4M3FN and f8E5M2; tf32 as its f32 carrier (the 13 low fraction bits
// clear). Literals are exact: a float is the hexadecimal of its encoding,
// which MLIR reads as the bit pattern (`0x3F800000 : f32` is 1.0).
//
//===----------------------------------------------------------------------===//
#ifndef KEEL_EXITS_MLIRTEXT_H
#define KEEL_EXITS_MLIRTEXT_H

#include "keel/ir/IR.h"

#include <cstdint>
#include <memory>
#include <string>
#include <vector>

namespace keel::exits {

/// How unsigned integer dtypes are spelt: as signless `i8` (the arith
/// dialect's convention) or as `ui8` (StableHLO's).
enum class Integers : uint8_t { Signless, Unsigned };

/// `f32`, `i1`, `f8E4M3FN`, `ui8` (Integers::Unsigned); tf32 is `f32`.
std::string mlirElementType(ir::DType t, Integers ints = Integers::Signless);
/// `tensor<2x3xf32>`; rank 0 is `tensor<f32>`. Layouts are not part of
/// MLIR's tensor types: a tensor is its logical value.
std::string mlirTensorType(const ir::TensorType &t, Integers ints = Integers::Signless);
/// One element, exactly: `0x3C00` (f16 1.0), `-8` (i4), `true` (pred).
/// Integers print as their two's-complement signed value, which MLIR
/// accepts for every signless width; an unsigned dtype spelt `ui8` prints
/// its unsigned value (`255`).
std::string mlirLiteral(ir::DType t, uint64_t encoding, Integers ints = Integers::Signless);
/// `arith.constant LITERAL : TYPE` (a bool is `arith.constant true`: its
/// type is implied).
std::string mlirConstant(const std::string &literal, const std::string &type);
/// `dense<...>` of `encodings` (one: a splat; else one per element, in
/// row-major order, nested by the shape).
std::string mlirDense(const ir::TensorType &t, const std::vector<uint64_t> &encodings,
                      Integers ints = Integers::Signless);
/// ` loc("f.sfn":3:12)`, with its leading space; empty for an unknown one.
std::string mlirLocation(const ir::Location &l);

/// An affine expression over loop dimensions d0, d1, ...: what MLIR's
/// affine maps hold. Made by the functions below, which fold constants so
/// the printed maps stay short (d0 + 0 is d0).
struct Affine;
using AffineRef = std::shared_ptr<const Affine>;
struct Affine {
  enum class Kind : uint8_t { Dim, Const, Add, Mul, FloorDiv, Mod } kind;
  int64_t value = 0; ///< Dim: its position; Const: the constant; Mul/FloorDiv/Mod: the constant operand
  AffineRef lhs, rhs; ///< Add: both; Mul/FloorDiv/Mod: lhs
};
AffineRef affineDim(int64_t position);
AffineRef affineConst(int64_t value);
AffineRef affineAdd(AffineRef a, AffineRef b);
AffineRef affineMul(AffineRef a, int64_t c);
AffineRef affineFloorDiv(AffineRef a, int64_t c);
AffineRef affineMod(AffineRef a, int64_t c);
std::string affineText(const AffineRef &e);

/// A point of an iteration space: one expression per tensor dimension.
using AffinePoint = std::vector<AffineRef>;
/// `affine_map<(d0, d1) -> (d1, 0)>`
std::string affineMapText(size_t loops, const AffinePoint &point);
/// d0, ..., d(n-1).
AffinePoint identityPoint(size_t n);
/// The operand point a reshape from `operand` to `result` reads for result
/// point `p` (its loops ranging over `ranges`): the row-major position,
/// then the operand's coordinates of it, simplified over the ranges
/// (multiples and common factors taken out; floordiv and mod dropped where
/// the dividend stays below the divisor).
AffinePoint reshapePoint(const AffinePoint &p, const ir::TensorType &result, const ir::TensorType &operand,
                         const std::vector<int64_t> &ranges);

} // namespace keel::exits

#endif // KEEL_EXITS_MLIRTEXT_H
