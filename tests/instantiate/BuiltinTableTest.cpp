// The built-in table is the only list: every row the checker knows has what
// the instantiation and the scalar lowering need (the IR it becomes, of the
// kind its family builds), and every name resolves to its own row.
#include "keel/instantiate/Becomes.h"
#include "keel/sema/Builtins.h"

#include <gtest/gtest.h>

#include <optional>
#include <set>

namespace keel {
namespace {

using sema::BuiltinFamily;

/// The operation each family builds (hand-written here, from the
/// instantiation's documented lowering, docs/language.md).
std::optional<ir::OpKind> expectedKind(BuiltinFamily f) {
  switch (f) {
  case BuiltinFamily::Unary: return ir::OpKind::Unary;
  case BuiltinFamily::Binary: return ir::OpKind::Binary;
  case BuiltinFamily::Select: return ir::OpKind::Select;
  case BuiltinFamily::Matmul: return ir::OpKind::DotGeneral;
  case BuiltinFamily::Reduce: case BuiltinFamily::ReduceIndex: case BuiltinFamily::ReduceBool:
    return ir::OpKind::Reduce;
  case BuiltinFamily::Transpose: return ir::OpKind::Transpose;
  case BuiltinFamily::Reshape: return ir::OpKind::Reshape;
  case BuiltinFamily::Broadcast: case BuiltinFamily::Full: return ir::OpKind::BroadcastInDim;
  case BuiltinFamily::Slice: return ir::OpKind::Slice;
  case BuiltinFamily::Concat: return ir::OpKind::Concatenate;
  case BuiltinFamily::Zeros: case BuiltinFamily::TensorLit: case BuiltinFamily::Random: return ir::OpKind::Constant;
  case BuiltinFamily::Iota: return ir::OpKind::Iota;
  case BuiltinFamily::Print: return std::nullopt;
  }
  return std::nullopt;
}

TEST(BuiltinTableTest, EveryRowBecomesTheIrOfItsFamily) {
  for (const sema::BuiltinInfo &b : sema::builtins()) {
    std::optional<instantiate::Becomes> ir = instantiate::becomes(b.id);
    std::optional<ir::OpKind> want = expectedKind(b.family);
    ASSERT_EQ(ir.has_value(), want.has_value()) << b.name;
    if (want) {
      EXPECT_EQ(ir->kind, *want) << b.name;
    }
  }
}

TEST(BuiltinTableTest, NamesResolveToTheirRows) {
  for (const sema::BuiltinInfo &b : sema::builtins()) {
    bool reducing = b.family == BuiltinFamily::Reduce || b.family == BuiltinFamily::ReduceIndex ||
                    b.family == BuiltinFamily::ReduceBool;
    const sema::BuiltinInfo *found = sema::findBuiltin(b.name, reducing);
    ASSERT_NE(found, nullptr) << b.name;
    EXPECT_EQ(found->id, b.id) << b.name;
  }
  // max and min: the elementwise row for two positional arguments, the
  // reduction with `axis:`.
  EXPECT_EQ(sema::findBuiltin("max", false)->family, BuiltinFamily::Binary);
  EXPECT_EQ(sema::findBuiltin("max", true)->family, BuiltinFamily::Reduce);
  EXPECT_EQ(sema::findBuiltin("erf", false), nullptr);
}

TEST(BuiltinTableTest, ElementwiseCodesAreDistinct) {
  // Two unary rows lowering to one code would make one of them dead.
  std::set<ir::UnaryCode> unary;
  for (const sema::BuiltinInfo &b : sema::builtins())
    if (b.family == BuiltinFamily::Unary) {
      EXPECT_TRUE(unary.insert(instantiate::becomes(b.id)->unary).second) << b.name;
    }
}

} // namespace
} // namespace keel
