//===- OperatorsTest.cpp - The tables of element operators and effects --===//
//
// keel/support/Operators.def against the language as docs/language.md and
// docs/ir.md state it (which source operator is which operation, which
// dtypes each admits), and its use by the tensor IR and the loop IR (one
// name per row in both); keel/support/Effects.h's sets.
//
//===----------------------------------------------------------------------===//
#include "keel/ir/IR.h"
#include "keel/loop/LoopIR.h"
#include "keel/support/Effects.h"
#include "keel/support/Operators.h"

#include <gtest/gtest.h>

#include <string>
#include <vector>

using namespace keel;

namespace {

using Kind = ElementOperator::Kind;

TEST(OperatorsTest, SourceOperatorsResolveAsTheLanguageSays) {
  struct Row {
    const char *source;
    Kind kind;
    BinaryCode binary;
    CompareDir compare;
  };
  const Row rows[] = {
      {"+", Kind::Binary, BinaryCode::Add, {}},      {"-", Kind::Binary, BinaryCode::Sub, {}},
      {"*", Kind::Binary, BinaryCode::Mul, {}},      {"/", Kind::Binary, BinaryCode::Div, {}},
      {"%", Kind::Binary, BinaryCode::Rem, {}},      {"&", Kind::Binary, BinaryCode::And, {}},
      {"|", Kind::Binary, BinaryCode::Or, {}},       {"^", Kind::Binary, BinaryCode::Xor, {}},
      {"==", Kind::Compare, {}, CompareDir::Eq},     {"!=", Kind::Compare, {}, CompareDir::Ne},
      {"<", Kind::Compare, {}, CompareDir::Lt},      {"<=", Kind::Compare, {}, CompareDir::Le},
      {">", Kind::Compare, {}, CompareDir::Gt},      {">=", Kind::Compare, {}, CompareDir::Ge},
      {"&&", Kind::LogicalAnd, {}, {}},              {"||", Kind::LogicalOr, {}, {}},
  };
  for (const Row &r : rows) {
    std::optional<ElementOperator> op = sourceOperator(r.source);
    ASSERT_TRUE(op) << r.source;
    EXPECT_EQ(op->kind, r.kind) << r.source;
    if (r.kind == Kind::Binary) {
      EXPECT_EQ(op->binary, r.binary) << r.source;
    }
    if (r.kind == Kind::Compare) {
      EXPECT_EQ(op->compare, r.compare) << r.source;
    }
  }
  // Prefix operators are their own table.
  EXPECT_EQ(prefixOperator("-")->kind, Kind::Negate);
  EXPECT_EQ(prefixOperator("!")->kind, Kind::Not);
  EXPECT_EQ(prefixOperator("~")->kind, Kind::Not);
  EXPECT_FALSE(prefixOperator("+"));
  EXPECT_FALSE(prefixOperator("&&"));
  // Built-ins and non-operators are not source operators.
  for (const char *s : {"", "pow", "min", "max", "=", "+=", "!", "@", "**"})
    EXPECT_FALSE(sourceOperator(s)) << s;
}

TEST(OperatorsTest, LegalityAsDocumented) {
  using T = ElementType;
  struct Row {
    BinaryCode c;
    T t;
    bool legal;
  };
  // docs/ir.md: add sub mul div min max (not pred), rem (ints, f32, f64),
  // pow (floats), and or xor (ints, pred).
  const Row rows[] = {
      {BinaryCode::Add, T::Bool, false},  {BinaryCode::Add, T::I4, true},       {BinaryCode::Sub, T::FP8E5M2, true},
      {BinaryCode::Div, T::U64, true},    {BinaryCode::Max, T::Bool, false},    {BinaryCode::Min, T::TF32, true},
      {BinaryCode::Rem, T::F16, false},   {BinaryCode::Rem, T::BF16, false},    {BinaryCode::Rem, T::TF32, false},
      {BinaryCode::Rem, T::FP8E4M3FN, false}, {BinaryCode::Rem, T::F32, true},  {BinaryCode::Rem, T::F64, true},
      {BinaryCode::Rem, T::I8, true},     {BinaryCode::Rem, T::Bool, false},    {BinaryCode::Pow, T::I32, false},
      {BinaryCode::Pow, T::BF16, true},   {BinaryCode::Pow, T::Bool, false},    {BinaryCode::And, T::F32, false},
      {BinaryCode::And, T::Bool, true},   {BinaryCode::Xor, T::U8, true},       {BinaryCode::Or, T::F16, false},
  };
  for (const Row &r : rows)
    EXPECT_EQ(ir::isLegal(r.c, r.t), r.legal) << ir::binaryName(r.c) << " on " << ir::dtypeName(r.t);
}

TEST(OperatorsTest, OneNamePerRowInBothIRs) {
  const std::vector<std::string> binary = {"add", "sub", "mul", "div", "rem", "pow", "min", "max", "and", "or", "xor"};
  ASSERT_EQ(std::size(kBinaryCodes), binary.size());
  for (size_t i = 0; i < binary.size(); ++i) {
    auto c = static_cast<BinaryCode>(i);
    EXPECT_EQ(ir::binaryName(c), binary[i]);
    EXPECT_EQ(ir::parseBinary(binary[i]), c);
    EXPECT_EQ(loop::binaryName(loop::binaryOp(c)), binary[i]);
  }
  EXPECT_EQ(loop::binaryName(loop::BinaryOp::LogicalAnd), "land");
  EXPECT_EQ(loop::binaryName(loop::BinaryOp::LogicalOr), "lor");
  const std::vector<std::string> compare = {"eq", "ne", "lt", "le", "gt", "ge"};
  for (size_t i = 0; i < compare.size(); ++i)
    EXPECT_EQ(ir::parseCompare(compare[i]), static_cast<CompareDir>(i));
  EXPECT_FALSE(ir::parseBinary("land")); // the loop IR's own, not a tensor IR code
}

TEST(OperatorsTest, EveryExitSpellsEveryLegalRow) {
  // A legal dtype class has an operation in the linalg exit's arith/math
  // spellings and in StableHLO.
  for (const BinaryCodeInfo &row : kBinaryCodes) {
    EXPECT_FALSE(row.stablehlo.empty()) << row.name;
    bool floats = admits(row.operands, ElementType::F32), ints = admits(row.operands, ElementType::I32);
    EXPECT_EQ(!row.mlirFloat.empty(), floats) << row.name;
    EXPECT_EQ(!row.mlirSigned.empty(), ints) << row.name;
    EXPECT_EQ(!row.mlirUnsigned.empty(), ints) << row.name;
  }
}

TEST(EffectsTest, SetsListInTheTablesOrder) {
  EffectSet s{Effect::Io, Effect::Gpu};
  EXPECT_EQ(s.text(), "gpu, io");
  EXPECT_EQ(s.size(), 2u);
  EXPECT_TRUE(s.contains(Effect::Gpu));
  EXPECT_FALSE(s.contains(Effect::Rand));
  EffectSet needed{Effect::Rand, Effect::Io};
  EXPECT_EQ(needed.without(s).text(), "rand");
  EXPECT_EQ((s | needed).text(), "gpu, io, rand");
  EXPECT_TRUE(EffectSet{}.empty());
  EXPECT_TRUE(needed.without(needed).empty());
  const std::vector<std::string> names = {"clock", "gpu", "io", "model", "net", "rand"};
  ASSERT_EQ(kNumEffects, names.size());
  for (size_t i = 0; i < names.size(); ++i) {
    EXPECT_EQ(parseEffect(names[i]), static_cast<Effect>(i));
    EXPECT_EQ(effectName(static_cast<Effect>(i)), names[i]);
  }
  EXPECT_FALSE(parseEffect("disk"));
  EXPECT_FALSE(parseEffect("GPU"));
}

} // namespace
