// Fusion's legality is apart from its cost model: whatever the cost model
// allows, the regions formed never hold an edge canFuse forbids.
#include "keel/ir/Text.h"
#include "keel/ir/Verifier.h"
#include "keel/transforms/Fusion.h"

#include <gtest/gtest.h>

#include <limits>

namespace keel {
namespace {

// Every illegal edge of SFEP-0053 §3.5 next to legal ones.
constexpr const char *kIR = R"(func @g(%x: f32[4]) -> f32[4] {
  %n = unary.neg(%x) : f32[4]
  return %n
}
func @f(%x: f32[2,4], %w: f32[4,3]) -> (f32[2,4], f32[2,3], f32[4]) {
  %e = unary.exp(%x) : f32[2,4]
  %a = unary.abs(%e) : f32[2,4]
  %b = unary.neg(%e) : f32[2,4]
  %c = copy(%a) : f32[2,4]
  %s = binary.add(%c, %b) : f32[2,4]
  %d = constant() {value = [0x3f800000, 0x40000000, 0x40400000, 0x40800000, 0x3f800000, 0x40000000, 0x40400000, 0x40800000]} : f32[2,4]
  %t = binary.mul(%s, %d) : f32[2,4]
  %r = reduce.sum(%t) {axes = [0], acc = f32} : f32[4]
  %k = call @g(%r) : f32[4]
  %q = unary.tanh(%k) : f32[4]
  %m = dot_general(%t, %w) {lhs_batch = [], rhs_batch = [], lhs_contract = [1], rhs_contract = [0], acc = f32} : f32[2,3]
  %o = unary.sigmoid(%m) : f32[2,3]
  return %e, %o, %q
}
)";

ir::Module parse() {
  SourceManager sources;
  DiagnosticEngine diags(sources);
  std::optional<ir::Module> m = ir::parse(sources, sources.add("f.kir", kIR), diags);
  EXPECT_TRUE(m && diags.errorCount() == 0);
  EXPECT_TRUE(ir::verify(*m).empty());
  return std::move(*m);
}

/// The kinds in each region of `f`.
std::vector<std::vector<ir::OpKind>> regions(const ir::Function &f) {
  std::vector<std::vector<ir::OpKind>> out;
  for (const ir::Op &o : f.ops)
    if (o.kind == ir::OpKind::Fusion) {
      out.emplace_back();
      for (const ir::Op &inner : o.region->ops)
        out.back().push_back(inner.kind);
    }
  return out;
}

TEST(FusionTest, NoCostSettingMakesAnIllegalEdgeFuse) {
  for (size_t limit : {size_t{2}, size_t{3}, size_t{1000}, std::numeric_limits<size_t>::max()}) {
    ir::Module m = parse();
    transforms::FusionCost cost;
    cost.maxRegionOps = limit;
    transforms::FusionReport report;
    transforms::fuse(m, cost, &report);
    ASSERT_TRUE(ir::verify(m).empty()) << "limit " << limit;
    const ir::Function &f = *m.find("f");
    for (const std::vector<ir::OpKind> &r : regions(f)) {
      size_t roots = 0;
      for (size_t i = 0; i < r.size(); ++i) {
        ir::OpKind k = r[i];
        EXPECT_NE(k, ir::OpKind::Copy) << "limit " << limit;
        EXPECT_NE(k, ir::OpKind::Call) << "limit " << limit;
        EXPECT_NE(k, ir::OpKind::Constant) << "a dense constant joined, limit " << limit;
        if (k == ir::OpKind::Reduce || k == ir::OpKind::DotGeneral) {
          ++roots;
          EXPECT_EQ(i + 2, r.size()) << "a root that is not the region's last operation, limit " << limit;
        }
      }
      EXPECT_LE(roots, 1u) << "limit " << limit;
      EXPECT_LE(r.size() - 1, limit) << "the cost model's limit was exceeded";
    }
    // exp is read twice and returned: never inside a region.
    bool expOutside = false;
    for (const ir::Op &o : f.ops)
      expOutside |= o.kind == ir::OpKind::Unary && o.unary == ir::UnaryCode::Exp;
    EXPECT_TRUE(expOutside) << "limit " << limit;
    // Every declined edge that canFuse allowed was declined by the cost
    // model, and says so.
    for (const transforms::FusionReport::Edge &e : report.edges)
      if (!e.fused && e.reason.find("cost model") != std::string::npos) {
        EXPECT_NE(limit, std::numeric_limits<size_t>::max()) << e.producerOp << " -> " << e.consumerOp;
      }
  }
}

TEST(FusionTest, LegalityReasons) {
  ir::Module m = parse();
  const ir::Function &f = *m.find("f");
  transforms::FusionGraph g(f);
  auto op = [&](ir::OpKind k, int nth = 0) -> const ir::Op & {
    for (const ir::Op &o : f.ops)
      if (o.kind == k && nth-- == 0)
        return o;
    throw std::runtime_error("no such op");
  };
  const ir::Op &exp = op(ir::OpKind::Unary, 0), &abs = op(ir::OpKind::Unary, 1), &copy = op(ir::OpKind::Copy);
  const ir::Op &add = op(ir::OpKind::Binary, 0), &mul = op(ir::OpKind::Binary, 1);
  const ir::Op &dense = op(ir::OpKind::Constant), &sum = op(ir::OpKind::Reduce), &call = op(ir::OpKind::Call);
  const ir::Op &dot = op(ir::OpKind::DotGeneral), &sigmoid = op(ir::OpKind::Unary, 4);
  // Legal: abs's only reader is the copy... which is a barrier consumer.
  EXPECT_FALSE(transforms::canFuse(g, abs, copy, {&copy}).fuses);
  EXPECT_NE(transforms::canFuse(g, abs, copy, {&copy}).reason.find("consumer `copy` is a barrier"), std::string::npos);
  EXPECT_NE(transforms::canFuse(g, copy, add, {&add}).reason.find("explicit copy"), std::string::npos);
  EXPECT_NE(transforms::canFuse(g, exp, abs, {&abs}).reason.find("would duplicate"), std::string::npos);
  EXPECT_NE(transforms::canFuse(g, dense, mul, {&mul}).reason.find("dense constant"), std::string::npos);
  EXPECT_NE(transforms::canFuse(g, dot, sigmoid, {&sigmoid}).reason.find("producer `dot_general` is a root"),
            std::string::npos);
  EXPECT_NE(transforms::canFuse(g, sum, call, {&call}).reason.find("consumer `call` is a barrier"), std::string::npos);
  // add -> mul is legal: add's one reader is mul.
  EXPECT_TRUE(transforms::canFuse(g, add, mul, {&mul}).fuses);
  // The cost model may decline it, and only then is it not fused.
  transforms::FusionCost never;
  never.never = true;
  EXPECT_FALSE(transforms::costDeclines(never, add, mul, 1).fuses);
  ir::Module unfused = parse();
  EXPECT_FALSE(transforms::fuse(unfused, never));
  EXPECT_EQ(ir::print(unfused), ir::print(parse()));
}

} // namespace
} // namespace keel
