//===- keel/transforms/Fusion.h - Producer-consumer fusion (SFEP-0053 §3.5) -*- C++ -*-===//
//
// Forms fusion regions in each function: walking the operations from the
// last to the first, each operation that is not yet in a region and may be
// a consumer starts one, which then grows toward its producers, operand by
// operand, as long as each edge is legal (canFuse) and the cost model does
// not decline it (costDeclines). A region with one operation is no region.
// The region replaces its root (its last operation) with a `fusion` op whose
// operands are the values it reads from outside, in first-use order, and
// whose result is the root's; contained operations keep their types,
// attributes and source locations, in block order. Nothing is reassociated,
// no dtype, rounding or reduction order changes, and no work moves across a
// barrier (copy, relayout, call, return, an existing fusion), so a fused
// program computes the same bits as the unfused one.
//
// Legality is semantics and profitability is policy: the pass asks the cost
// model only about edges canFuse allowed, so no cost setting can make an
// illegal edge fuse.
//
//===----------------------------------------------------------------------===//
#ifndef KEEL_TRANSFORMS_FUSION_H
#define KEEL_TRANSFORMS_FUSION_H

#include "keel/ir/IR.h"

#include <cstdint>
#include <map>
#include <set>
#include <string>
#include <vector>

namespace keel::transforms {

/// Whether an edge may fuse, or why not.
struct FusionDecision {
  bool fuses = true;
  std::string reason; ///< empty when it fuses
  static FusionDecision yes() { return {}; }
  static FusionDecision no(std::string why) { return {false, std::move(why)}; }
};

/// Who defines and who reads each value of one function (top level).
struct FusionGraph {
  explicit FusionGraph(const ir::Function &f);
  const ir::Function &f;
  std::map<ir::ValueId, const ir::Op *> definer;
  std::map<ir::ValueId, std::vector<const ir::Op *>> users; ///< the return included
};

/// SFEP-0053 §3.5's legality of fusing `producer` into the region that
/// holds `consumer` (the ops in `region`, consumer included), as a reason
/// for each condition that fails: a barrier or an effect on either side; a
/// producer that is a root (a reduction or contraction ends its region) or
/// a constant with its own storage (dense data); a producer read by an
/// operation outside the region, or returned (fusing would duplicate it).
FusionDecision canFuse(const FusionGraph &g, const ir::Op &producer, const ir::Op &consumer,
                       const std::set<const ir::Op *> &region);

/// The cost model: it may only decline edges canFuse allowed.
struct FusionCost {
  size_t maxRegionOps = 256; ///< a region's size limit (code size)
  bool never = false;        ///< decline every edge (fusion off, as a policy)
};
/// A reason to decline a legal edge, or nothing (`fuses`).
FusionDecision costDeclines(const FusionCost &cost, const ir::Op &producer, const ir::Op &consumer,
                            size_t regionOps);

/// What the pass did, for --explain-fusion and --stats.
struct FusionReport {
  struct Edge {
    std::string function;
    /// Each end: its results and its operation (`unary.exp`). Named after
    /// the pass with ir::displayNames, so that the report and the fused IR
    /// (its --dot, its exits) give a value one name.
    std::vector<ir::ValueId> producerResults, consumerResults;
    std::string producerOp, consumerOp;
    bool fused = false;
    std::string reason;
  };
  std::vector<Edge> edges; ///< every edge considered, in the order considered
  size_t regions = 0;
  int64_t bytesUnfused = 0; ///< bytes of intermediate values, before the pass
  int64_t bytesFused = 0;   ///< ... and after (values inside regions are not materialized)
};

/// The pass: true when it formed a region.
bool fuse(ir::Module &m, const FusionCost &cost = {}, FusionReport *report = nullptr);

/// Bytes of a module's intermediate values: results of operations that the
/// function does not return, outside fusion regions (a region's own values
/// are computed in its loop nest).
int64_t intermediateBytes(const ir::Module &m);

} // namespace keel::transforms

#endif // KEEL_TRANSFORMS_FUSION_H
