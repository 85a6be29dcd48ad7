//===- ElementTypeTest.cpp - The one element type table ------------------===//
//
// The table's facts against independent sources: LLVM's APFloat semantics
// for the float widths, the C++ fixed-width integer types for the integers,
// SFEP-0054's list of the five low-precision formats, and the spellings the
// checker (`int`, `float`) and the IR text (`pred`) add.
//
//===----------------------------------------------------------------------===//
#include "keel/ir/IR.h"
#include "keel/sema/Types.h"
#include "keel/support/ElementType.h"

#include <gtest/gtest.h>
#include <llvm/ADT/APFloat.h>

#include <cstdint>
#include <limits>

using namespace keel;

namespace {

int apfloatBits(const llvm::fltSemantics &s) { return static_cast<int>(llvm::APFloat::getSizeInBits(s)); }

template <typename T> int intBits() { return std::numeric_limits<T>::digits + std::numeric_limits<T>::is_signed; }

TEST(ElementTypeTest, FloatWidthsMatchAPFloat) {
  EXPECT_EQ(elementBits(ElementType::F16), apfloatBits(llvm::APFloat::IEEEhalf()));
  EXPECT_EQ(elementBits(ElementType::BF16), apfloatBits(llvm::APFloat::BFloat()));
  EXPECT_EQ(elementBits(ElementType::FP8E4M3FN), apfloatBits(llvm::APFloat::Float8E4M3FN()));
  EXPECT_EQ(elementBits(ElementType::FP8E5M2), apfloatBits(llvm::APFloat::Float8E5M2()));
  EXPECT_EQ(elementBits(ElementType::F32), apfloatBits(llvm::APFloat::IEEEsingle()));
  EXPECT_EQ(elementBits(ElementType::F64), apfloatBits(llvm::APFloat::IEEEdouble()));
  // tf32 has 19 bits of value in a 32-bit f32 carrier (SFEP-0054).
  EXPECT_EQ(apfloatBits(llvm::APFloat::FloatTF32()), 19);
  EXPECT_EQ(elementBits(ElementType::TF32), 32);
}

TEST(ElementTypeTest, IntegerWidthsAndSignedness) {
  EXPECT_EQ(elementBits(ElementType::I8), intBits<int8_t>());
  EXPECT_EQ(elementBits(ElementType::I16), intBits<int16_t>());
  EXPECT_EQ(elementBits(ElementType::I32), intBits<int32_t>());
  EXPECT_EQ(elementBits(ElementType::I64), intBits<int64_t>());
  EXPECT_EQ(elementBits(ElementType::U8), intBits<uint8_t>());
  EXPECT_EQ(elementBits(ElementType::U16), intBits<uint16_t>());
  EXPECT_EQ(elementBits(ElementType::U32), intBits<uint32_t>());
  EXPECT_EQ(elementBits(ElementType::U64), intBits<uint64_t>());
  EXPECT_EQ(elementBits(ElementType::I4), 4);
  EXPECT_EQ(elementBits(ElementType::Bool), 1);
  for (ElementType t : {ElementType::I4, ElementType::I8, ElementType::I64})
    EXPECT_TRUE(isIntegerElement(t) && isSignedElement(t)) << elementName(t);
  for (ElementType t : {ElementType::U8, ElementType::U64})
    EXPECT_TRUE(isIntegerElement(t) && !isSignedElement(t)) << elementName(t);
  EXPECT_FALSE(isIntegerElement(ElementType::Bool));
  EXPECT_FALSE(isSignedElement(ElementType::Bool));
  EXPECT_FALSE(isFloatElement(ElementType::Bool));
}

TEST(ElementTypeTest, TheFiveLowPrecisionFormats) {
  int low = 0, floats = 0;
  for (int i = 0; i < kNumElementTypes; ++i) {
    auto t = static_cast<ElementType>(i);
    low += isLowPrecisionElement(t);
    floats += isFloatElement(t);
    if (isFloatElement(t)) {
      EXPECT_TRUE(isSignedElement(t)) << elementName(t);
    }
  }
  EXPECT_EQ(low, 5);
  EXPECT_EQ(floats, 7);
  for (ElementType t : {ElementType::F16, ElementType::BF16, ElementType::TF32, ElementType::FP8E4M3FN,
                        ElementType::FP8E5M2})
    EXPECT_TRUE(isLowPrecisionElement(t)) << elementName(t);
  EXPECT_TRUE(isFp8Element(ElementType::FP8E5M2));
  EXPECT_FALSE(isFp8Element(ElementType::U8));
}

TEST(ElementTypeTest, SpellingsRoundTrip) {
  for (int i = 0; i < kNumElementTypes; ++i) {
    auto t = static_cast<ElementType>(i);
    EXPECT_EQ(parseElementType(elementName(t)), t);
    EXPECT_EQ(ir::parseDType(ir::dtypeName(t)), t);
    EXPECT_EQ(sema::parseScalarName(sema::scalarName(t)), t);
  }
  EXPECT_EQ(parseElementType("float8"), std::nullopt);
  EXPECT_EQ(parseElementType(""), std::nullopt);
}

TEST(ElementTypeTest, LayerSpellings) {
  // The checker's aliases and the IR text's `pred`.
  EXPECT_EQ(sema::parseScalarName("int"), ElementType::I64);
  EXPECT_EQ(sema::parseScalarName("float"), ElementType::F64);
  EXPECT_EQ(sema::scalarName(ElementType::Bool), "bool");
  EXPECT_EQ(ir::dtypeName(ElementType::Bool), "pred");
  EXPECT_EQ(ir::parseDType("pred"), ElementType::Bool);
  EXPECT_EQ(ir::parseDType("bool"), std::nullopt);
  EXPECT_EQ(ir::parseDType("int"), std::nullopt);
}

} // namespace

// SFEP-0054 §3.6's accumulator rule, case by case as the spec states it.
TEST(ElementTypeTest, AccumulatorRule) {
  using E = ElementType;
  struct Case {
    E input, acc;
    bool allowed;
  } cases[] = {
      {E::F16, E::F32, true},   {E::F16, E::F16, false},       {E::BF16, E::F64, true},
      {E::TF32, E::TF32, false}, {E::FP8E4M3FN, E::F32, true}, {E::FP8E5M2, E::BF16, false},
      {E::F32, E::F32, true},   {E::F32, E::F64, true},        {E::F64, E::F32, false},
      {E::I8, E::I32, true},    {E::I32, E::I8, false},        {E::I32, E::U64, false},
      {E::U8, E::U16, true},    {E::U32, E::I64, false},       {E::I32, E::F32, false},
      {E::F32, E::I64, false},  {E::Bool, E::Bool, true},      {E::Bool, E::I32, false},
      {E::I4, E::I4, true},     {E::I4, E::I8, true},
  };
  for (const Case &c : cases)
    EXPECT_EQ(accumulatorAllowed(c.input, c.acc), c.allowed) << elementName(c.input) << " in " << elementName(c.acc);
}
