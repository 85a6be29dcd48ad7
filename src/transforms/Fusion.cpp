//===- Fusion.cpp - Producer-consumer fusion (SFEP-0053 §3.5) -------------===//
//
// Regions grow from consumers toward producers; each candidate edge is first
// judged by canFuse (semantics), then, only when legal, by the cost model
// (policy). Operations' roles come from Ops.def.
//
//===----------------------------------------------------------------------===//
#include "keel/transforms/Fusion.h"

#include "keel/ir/Infer.h"

#include <algorithm>

namespace keel::transforms {

using ir::FusionRole;
using ir::Op;
using ir::OpKind;
using ir::ValueId;

FusionGraph::FusionGraph(const ir::Function &fn) : f(fn) {
  for (const Op &o : f.ops) {
    for (ValueId r : o.results)
      definer[r] = &o;
    for (ValueId v : o.operands)
      users[v].push_back(&o);
  }
}

namespace {

std::string_view roleName(FusionRole r) {
  switch (r) {
  case FusionRole::Elementwise: return "elementwise";
  case FusionRole::Source: return "a source";
  case FusionRole::IndexMap: return "an index map";
  case FusionRole::Root: return "a root";
  case FusionRole::Barrier: return "a barrier";
  }
  return "";
}

/// Whether an operation may be a region's consumer (its root or a member
/// that reads a producer).
bool mayConsume(const Op &o) {
  switch (ir::opInfo(o.kind).role) {
  case FusionRole::Elementwise: case FusionRole::IndexMap: case FusionRole::Root:
    return true;
  case FusionRole::Source: case FusionRole::Barrier:
    return false;
  }
  return false;
}

} // namespace

FusionDecision canFuse(const FusionGraph &g, const Op &producer, const Op &consumer,
                       const std::set<const Op *> &region) {
  const ir::OpInfo &p = ir::opInfo(producer.kind), &c = ir::opInfo(consumer.kind);
  // 1. Pure tensor operations in one block: barriers (copy, relayout, call,
  //    return, an existing region) and anything effectful stay apart.
  if (p.role == FusionRole::Barrier)
    return FusionDecision::no("the producer `" + ir::opName(producer) + "` is " + std::string(roleName(p.role)) +
                              (producer.kind == OpKind::Copy       ? " (an explicit copy)"
                               : producer.kind == OpKind::Fusion   ? " (a region result)"
                               : producer.kind == OpKind::Relayout ? " (a layout change that is not a view)"
                                                                   : ""));
  if (!mayConsume(consumer))
    return FusionDecision::no("the consumer `" + ir::opName(consumer) + "` is " + std::string(roleName(c.role)));
  // 2. Shape and layout: a reduction or contraction is a region's root, so
  //    two roots never share a region; index maps (broadcast, reshape,
  //    transpose, slice, concatenate) join as index arithmetic on the
  //    layouts involved, with no copy, as the lowering reads them.
  if (p.role == FusionRole::Root)
    return FusionDecision::no("the producer `" + ir::opName(producer) +
                              "` is a root (a reduction or contraction ends its region)");
  // 4. Not a parameter (never an operation), nor a constant with storage of
  //    its own.
  if (producer.kind == OpKind::Constant && producer.constant.size() > 1)
    return FusionDecision::no("the producer is a dense constant (its data is stored)");
  // 3. No duplication: every reader of the producer's result is in the
  //    region (the function's return is a reader outside every region).
  for (ValueId r : producer.results) {
    auto it = g.users.find(r);
    if (it == g.users.end())
      continue;
    for (const Op *user : it->second)
      if (!region.count(user))
        return FusionDecision::no(std::string("the producer has another consumer (`") + ir::opName(*user) +
                                  "`) outside the region: fusing would duplicate it");
  }
  return FusionDecision::yes();
}

FusionDecision costDeclines(const FusionCost &cost, const Op &, const Op &, size_t regionOps) {
  if (cost.never)
    return FusionDecision::no("declined by the cost model (fusion is off)");
  if (regionOps + 1 > cost.maxRegionOps)
    return FusionDecision::no("declined by the cost model (the region has " + std::to_string(regionOps) +
                              " operations, the limit)");
  return FusionDecision::yes();
}

int64_t intermediateBytes(const ir::Module &m) {
  int64_t bytes = 0;
  for (const ir::Function &f : m.functions) {
    const Op &ret = f.ops.back();
    for (const Op &o : f.ops)
      for (ValueId r : o.results)
        if (o.kind != OpKind::Return && std::find(ret.operands.begin(), ret.operands.end(), r) == ret.operands.end())
          bytes += f.valueTypes[r].byteCount().value_or(0);
  }
  return bytes;
}

namespace {

class FunctionFusion {
public:
  FunctionFusion(ir::Function &f, const FusionCost &cost, FusionReport *report)
      : f_(f), cost_(cost), report_(report) {}

  bool run() {
    // Regions, each a set of top-level op indices, found on the unchanged
    // function; rewritten afterwards.
    std::vector<std::vector<size_t>> regions;
    size_t firstEdge = report_ ? report_->edges.size() : 0;
    {
      FusionGraph g(f_);
      std::vector<bool> taken(f_.ops.size(), false);
      std::map<const Op *, size_t> index;
      for (size_t i = 0; i < f_.ops.size(); ++i)
        index[&f_.ops[i]] = i;
      for (size_t root = f_.ops.size(); root-- > 0;) {
        const Op &r = f_.ops[root];
        if (taken[root])
          continue;
        if (!mayConsume(r)) { // a barrier: its producers' edges are declined
          if (r.kind != OpKind::Return)
            for (ValueId v : std::set<ValueId>(r.operands.begin(), r.operands.end()))
              if (auto d = g.definer.find(v); d != g.definer.end())
                record(*d->second, r, canFuse(g, *d->second, r, {&r}));
          continue;
        }
        std::set<const Op *> region{&r};
        std::vector<size_t> members{root};
        // Grow toward producers: the members' operands, members in reverse
        // block order, operands in order.
        for (size_t next = 0; next < members.size(); ++next) {
          const Op &consumer = f_.ops[members[next]];
          std::set<ValueId> seen; // an operand read twice is one edge
          for (ValueId v : consumer.operands) {
            if (!seen.insert(v).second)
              continue;
            auto d = g.definer.find(v);
            if (d == g.definer.end())
              continue; // a parameter
            const Op &producer = *d->second;
            if (region.count(&producer))
              continue; // already in (a value read twice)
            // Legality first; the cost model sees only legal edges.
            FusionDecision legal = canFuse(g, producer, consumer, region);
            // (A legal producer is in no other region: all its readers are
            // in this one.)
            FusionDecision decision = legal.fuses ? costDeclines(cost_, producer, consumer, region.size()) : legal;
            record(producer, consumer, decision);
            if (!decision.fuses)
              continue;
            size_t p = index.at(&producer);
            region.insert(&producer);
            members.push_back(p);
            taken[p] = true;
          }
        }
        taken[root] = true;
        if (members.size() > 1) {
          std::sort(members.begin(), members.end());
          regions.push_back(members);
        }
      }
    }
    if (regions.empty())
      return false;
    rewrite(regions);
    if (report_) {
      report_->regions += regions.size();
      // A region's root now defines its inner value (the fusion defines
      // the old one): the report names the op's own result.
      for (size_t e = firstEdge; e < report_->edges.size(); ++e)
        for (std::vector<ValueId> *ids : {&report_->edges[e].producerResults, &report_->edges[e].consumerResults})
          for (ValueId &v : *ids)
            if (auto it = rootInner_.find(v); it != rootInner_.end())
              v = it->second;
    }
    return true;
  }

private:
  void record(const Op &producer, const Op &consumer, const FusionDecision &d) {
    if (report_)
      report_->edges.push_back(
          {f_.name, producer.results, consumer.results, ir::opName(producer), ir::opName(consumer), d.fuses, d.reason});
  }

  /// Replaces each region's operations with one `fusion` op at its root's
  /// place. Values read from outside become region parameters (first use
  /// first); the root's result becomes the fusion's.
  void rewrite(const std::vector<std::vector<size_t>> &regions) {
    std::map<size_t, const std::vector<size_t> *> byRoot;
    std::set<size_t> inRegion;
    for (const std::vector<size_t> &r : regions) {
      byRoot[r.back()] = &r;
      inRegion.insert(r.begin(), r.end());
    }
    std::vector<Op> out;
    for (size_t i = 0; i < f_.ops.size(); ++i) {
      auto region = byRoot.find(i);
      if (region == byRoot.end()) {
        if (!inRegion.count(i))
          out.push_back(std::move(f_.ops[i]));
        continue;
      }
      out.push_back(makeFusion(*region->second));
    }
    f_.ops = std::move(out);
  }

  Op makeFusion(const std::vector<size_t> &members) {
    std::set<ValueId> defined;
    for (size_t i : members)
      for (ValueId r : f_.ops[i].results)
        defined.insert(r);
    Op fusion;
    fusion.kind = OpKind::Fusion;
    fusion.region = std::make_unique<ir::Region>();
    std::map<ValueId, ValueId> param; // outside value -> region parameter
    for (size_t i : members)
      for (ValueId v : f_.ops[i].operands)
        if (!defined.count(v) && !param.count(v)) {
          param[v] = f_.newValue(f_.valueTypes[v]);
          fusion.operands.push_back(v);
          fusion.region->params.push_back(param[v]);
        }
    Op &root = f_.ops[members.back()];
    fusion.loc = root.loc;
    fusion.resultTypes = root.resultTypes;
    fusion.results = root.results; // readers outside keep reading the same values
    std::map<ValueId, ValueId> inner; // the root's results, renamed inside
    for (size_t k = 0; k < root.results.size(); ++k)
      inner[root.results[k]] = rootInner_[root.results[k]] = f_.newValue(root.resultTypes[k]);
    for (size_t i : members) {
      Op o = std::move(f_.ops[i]);
      for (ValueId &v : o.operands) {
        if (auto p = param.find(v); p != param.end())
          v = p->second;
        else if (auto n = inner.find(v); n != inner.end())
          v = n->second;
      }
      for (ValueId &r : o.results)
        if (auto n = inner.find(r); n != inner.end())
          r = n->second;
      fusion.region->ops.push_back(std::move(o));
    }
    Op ret;
    ret.kind = OpKind::Return;
    ret.loc = fusion.loc;
    for (ValueId r : fusion.results)
      ret.operands.push_back(inner.at(r));
    fusion.region->ops.push_back(std::move(ret));
    return fusion;
  }

  ir::Function &f_;
  const FusionCost &cost_;
  FusionReport *report_;
  std::map<ValueId, ValueId> rootInner_; ///< a region root's old result -> its value inside
};

} // namespace

bool fuse(ir::Module &m, const FusionCost &cost, FusionReport *report) {
  if (report)
    report->bytesUnfused += intermediateBytes(m);
  bool changed = false;
  for (ir::Function &f : m.functions)
    changed |= FunctionFusion(f, cost, report).run();
  if (report)
    report->bytesFused += intermediateBytes(m);
  return changed;
}

} // namespace keel::transforms
