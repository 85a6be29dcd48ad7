// The MLIR text every MLIR exit prints: element and tensor types, exact
// literals (expected spellings from MLIR's LangRef: a float literal in hex
// is its bit pattern; integers are two's-complement values), dense
// constants nested by shape, locations, and the folding of affine
// expressions.
#include "keel/exits/MlirText.h"

#include <gtest/gtest.h>

using namespace keel;
using namespace keel::exits;
using ir::DType;

TEST(MlirText, ElementTypes) {
  EXPECT_EQ(mlirElementType(DType::Bool), "i1");
  EXPECT_EQ(mlirElementType(DType::I4), "i4");
  EXPECT_EQ(mlirElementType(DType::U16), "i16"); // signless: the operations say unsigned
  EXPECT_EQ(mlirElementType(DType::TF32), "f32"); // its carrier
  EXPECT_EQ(mlirElementType(DType::FP8E4M3FN), "f8E4M3FN");
  EXPECT_EQ(mlirElementType(DType::FP8E5M2), "f8E5M2");
  EXPECT_EQ(mlirElementType(DType::BF16), "bf16");
  EXPECT_EQ(mlirTensorType(ir::TensorType::make(DType::F16, {2, 3})), "tensor<2x3xf16>");
  EXPECT_EQ(mlirTensorType(ir::TensorType::make(DType::F32, {})), "tensor<f32>");
}

// StableHLO's integer types carry their signedness (its specification:
// `ui8` ... `ui64`), and an unsigned literal is its unsigned value.
TEST(MlirText, UnsignedTypesForStableHlo) {
  EXPECT_EQ(mlirElementType(DType::U8, Integers::Unsigned), "ui8");
  EXPECT_EQ(mlirElementType(DType::U64, Integers::Unsigned), "ui64");
  EXPECT_EQ(mlirElementType(DType::I32, Integers::Unsigned), "i32");
  EXPECT_EQ(mlirElementType(DType::Bool, Integers::Unsigned), "i1");
  EXPECT_EQ(mlirTensorType(ir::TensorType::make(DType::U16, {4}), Integers::Unsigned), "tensor<4xui16>");
  EXPECT_EQ(mlirLiteral(DType::U8, 0xFF, Integers::Unsigned), "255");
  EXPECT_EQ(mlirLiteral(DType::U8, 0xFF), "-1"); // signless: the same bits
  EXPECT_EQ(mlirLiteral(DType::U64, ~uint64_t{0}, Integers::Unsigned), "18446744073709551615");
  EXPECT_EQ(mlirLiteral(DType::I8, 0xFF, Integers::Unsigned), "-1");
  EXPECT_EQ(mlirDense(ir::TensorType::make(DType::U8, {2}), {0, 200}, Integers::Unsigned), "dense<[0, 200]>");
}

TEST(MlirText, LiteralsAreExact) {
  EXPECT_EQ(mlirLiteral(DType::F32, 0x3F800000), "0x3F800000");        // 1.0
  EXPECT_EQ(mlirLiteral(DType::F16, 0x3C00), "0x3C00");                // 1.0
  EXPECT_EQ(mlirLiteral(DType::FP8E4M3FN, 0x7E), "0x7E");              // 448
  EXPECT_EQ(mlirLiteral(DType::F64, 0x8000000000000000ull), "0x8000000000000000"); // -0.0
  EXPECT_EQ(mlirLiteral(DType::TF32, 0x3F802000), "0x3F802000");       // 1 + 2^-10 in its carrier
  EXPECT_EQ(mlirLiteral(DType::I4, 0xF), "-1");
  EXPECT_EQ(mlirLiteral(DType::I4, 0x8), "-8");
  EXPECT_EQ(mlirLiteral(DType::U8, 200), "-56"); // 200 as a signless i8
  EXPECT_EQ(mlirLiteral(DType::I64, 0x8000000000000000ull), "-9223372036854775808");
  EXPECT_EQ(mlirLiteral(DType::Bool, 1), "true");
  EXPECT_EQ(mlirConstant("true", "i1"), "arith.constant true");
  EXPECT_EQ(mlirConstant("0x3C00", "f16"), "arith.constant 0x3C00 : f16");
}

TEST(MlirText, DenseNestsByShape) {
  EXPECT_EQ(mlirDense(ir::TensorType::make(DType::I32, {2, 3}), {1, 2, 3, 4, 5, 6}), "dense<[[1, 2, 3], [4, 5, 6]]>");
  EXPECT_EQ(mlirDense(ir::TensorType::make(DType::F16, {4}), {0x3C00}), "dense<0x3C00>"); // a splat
  EXPECT_EQ(mlirDense(ir::TensorType::make(DType::Bool, {2}), {0, 1}), "dense<[false, true]>");
}

TEST(MlirText, Locations) {
  EXPECT_EQ(mlirLocation({"a.sfn", 3, 12}), " loc(\"a.sfn\":3:12)");
  EXPECT_EQ(mlirLocation({"q\"x.sfn", 1, 1}), " loc(\"q\\\"x.sfn\":1:1)");
  EXPECT_EQ(mlirLocation({}), "");
}

TEST(MlirText, AffineFolds) {
  AffineRef d0 = affineDim(0), d1 = affineDim(1);
  EXPECT_EQ(affineText(affineAdd(d0, affineConst(0))), "d0");
  EXPECT_EQ(affineText(affineMul(d1, 1)), "d1");
  EXPECT_EQ(affineText(affineMul(d1, 0)), "0");
  EXPECT_EQ(affineText(affineAdd(affineConst(2), affineConst(3))), "5");
  EXPECT_EQ(affineText(affineAdd(affineMul(d0, 3), d1)), "d0 * 3 + d1");
  EXPECT_EQ(affineText(affineMod(affineFloorDiv(affineAdd(affineMul(d0, 3), d1), 2), 4)), "((d0 * 3 + d1) floordiv 2) mod 4");
  EXPECT_EQ(affineText(affineMul(affineAdd(d0, d1), 2)), "(d0 + d1) * 2");
  EXPECT_EQ(affineText(affineMod(d0, 1)), "0");
  EXPECT_EQ(affineMapText(2, {d1, affineConst(0)}), "affine_map<(d0, d1) -> (d1, 0)>");
  EXPECT_EQ(affineMapText(0, {}), "affine_map<() -> ()>");
}
