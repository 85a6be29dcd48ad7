//===- Schedule.cpp - The CPU exit's decisions, one function each ---------===//
//
// Each decision of Schedule.h is one function below; the scheduled
// lowering (Scheduled.cpp) only realizes them. None may change a bit of any result: they choose where a
// value is computed, whether it is stored and in which order independent
// elements are visited, never the order in which one element's terms are
// combined.
//
//===----------------------------------------------------------------------===//
#include "keel/exits/cpu/Schedule.h"

#include "keel/exits/cpu/Elements.h"
#include "keel/ir/Text.h"

#include <algorithm>
#include <cstdio>
#include <limits>
#include <map>
#include <optional>
#include <unordered_map>
#include <vector>

namespace keel::cpu {

using ir::OpKind;
using ir::ValueId;

namespace {

/// Operations that compute each result element from the operands' elements
/// at the same index (Ops.def).
bool isPointwise(OpKind k) { return ir::opInfo(k).reads == ir::OperandReads::Elementwise; }

/// Whether a user reads each element of its operand once, in its own loop
/// over those elements (so that the operand can be computed there).
/// Broadcasts and contractions read elements many times; calls and fusions
/// take buffers.
bool readsEachElementOnce(OpKind k) {
  switch (ir::opInfo(k).reads) {
  case ir::OperandReads::None: case ir::OperandReads::Elementwise: case ir::OperandReads::Once:
    return true;
  case ir::OperandReads::Broadcast: case ir::OperandReads::Repeated: case ir::OperandReads::Buffer:
    return false;
  }
  return false;
}

/// Each value's readers among `ops` (a reader once per operand it is).
std::map<ValueId, std::vector<const ir::Op *>> readers(const std::vector<ir::Op> &ops) {
  std::map<ValueId, std::vector<const ir::Op *>> out;
  for (const ir::Op &o : ops)
    for (ValueId v : o.operands)
      out[v].push_back(&o);
  return out;
}

/// splats: a one-value constant, and a broadcast, reshape, transpose,
/// slice, copy or relayout of a splat; a fusion parameter bound to one.
void findSplats(const std::vector<ir::Op> &ops, FunctionSchedule &s) {
  for (const ir::Op &o : ops) {
    switch (o.kind) {
    case OpKind::Constant:
      if (o.constant.size() == 1)
        s.splats[o.results[0]] = o.constant[0];
      break;
    case OpKind::BroadcastInDim: case OpKind::Reshape: case OpKind::Transpose: case OpKind::Slice:
    case OpKind::Copy: case OpKind::Relayout:
      if (auto it = s.splats.find(o.operands[0]); it != s.splats.end())
        s.splats[o.results[0]] = it->second;
      break;
    case OpKind::Fusion:
      for (size_t i = 0; i < o.region->params.size(); ++i)
        if (auto it = s.splats.find(o.operands[i]); it != s.splats.end())
          s.splats[o.region->params[i]] = it->second;
      findSplats(o.region->ops, s);
      break;
    case OpKind::Unary: case OpKind::Binary: case OpKind::Compare: case OpKind::Select: case OpKind::Convert:
    case OpKind::Iota: case OpKind::Concatenate: case OpKind::Reduce: case OpKind::DotGeneral: case OpKind::Call:
    case OpKind::Return:
      break;
    }
  }
}

/// readThrough: every broadcast_in_dim; and inside a fusion region (the
/// fusion pass chose to compute it in one loop nest), a transpose, slice or
/// reshape whose one reader reads each element once: loads index the
/// operand, no copy is made. (A contraction reads its operands many times: those stay
/// copied, contiguous.)
void findIndexMaps(const std::vector<ir::Op> &ops, bool isRegion, FunctionSchedule &s) {
  std::map<ValueId, std::vector<const ir::Op *>> users = readers(ops);
  for (const ir::Op &o : ops) {
    if (o.kind == OpKind::BroadcastInDim)
      s.readThrough.insert(o.results[0]);
    if (isRegion && (o.kind == OpKind::Transpose || o.kind == OpKind::Slice || o.kind == OpKind::Reshape)) {
      const std::vector<const ir::Op *> &u = users[o.results[0]];
      if (u.size() == 1 && readsEachElementOnce(u[0]->kind) && u[0]->kind != OpKind::Return)
        s.readThrough.insert(o.results[0]);
    }
    if (o.kind == OpKind::Fusion)
      findIndexMaps(o.region->ops, true, s);
  }
}

/// computedInUser: a pointwise result used once, by an operation that reads
/// each of its elements once, or used several times by one pointwise
/// operation (sharedInUser). A region's results are copied out after its
/// operations, so not those. A chain of such values becomes one nested
/// element expression; it is cut (the value stored) every kMaxInlineDepth
/// levels, so that a long chain neither nests expressions without bound nor
/// slows LLVM down.
void findComputedInUser(const std::vector<ir::Op> &ops, bool isRegion, FunctionSchedule &s) {
  constexpr size_t kMaxInlineDepth = 32;
  std::map<ValueId, std::vector<const ir::Op *>> users = readers(ops);
  std::map<ValueId, size_t> depth;
  for (const ir::Op &o : ops) {
    if (o.kind == OpKind::Fusion)
      findComputedInUser(o.region->ops, true, s);
    if (!isPointwise(o.kind))
      continue;
    const std::vector<const ir::Op *> &u = users[o.results[0]];
    size_t d = 1;
    for (ValueId operand : o.operands)
      if (auto it = depth.find(operand); it != depth.end())
        d = std::max(d, it->second + 1);
    // Read several times by one pointwise user (x * x): every read is at
    // the user's own index, so the value is computed once per element into
    // a scalar there (sharedInUser) and read from it.
    bool oneUser = !u.empty() && std::all_of(u.begin(), u.end(), [&](const ir::Op *x) { return x == u[0]; });
    bool shared = oneUser && u.size() > 1 && isPointwise(u[0]->kind);
    if ((u.size() == 1 || shared) && readsEachElementOnce(u[0]->kind) && !(isRegion && u[0]->kind == OpKind::Return) &&
        d <= kMaxInlineDepth) {
      s.computedInUser.insert(o.results[0]);
      if (shared)
        s.sharedInUser.insert(o.results[0]);
      depth[o.results[0]] = d;
    }
  }
  // Read by several pointwise operations that are all computed in one
  // loop (y in `y + tanh(y)`): computed once per element there too. Users
  // are decided before the values they read, so walk backward.
  auto sink = [&](const ir::Op *u) {
    while (u->results.size() == 1 && s.computedInUser.count(u->results[0]))
      u = users[u->results[0]][0];
    return u;
  };
  for (auto o = ops.rbegin(); o != ops.rend(); ++o) {
    if (!isPointwise(o->kind) || s.computedInUser.count(o->results[0]))
      continue;
    const std::vector<const ir::Op *> &u = users[o->results[0]];
    if (u.size() < 2 || !std::all_of(u.begin(), u.end(), [](const ir::Op *x) { return isPointwise(x->kind); }))
      continue;
    const ir::Op *target = sink(u[0]);
    bool oneLoop = std::all_of(u.begin(), u.end(), [&](const ir::Op *x) { return sink(x) == target; });
    size_t d = 1;
    for (ValueId operand : o->operands)
      if (auto it = depth.find(operand); it != depth.end())
        d = std::max(d, it->second + 1);
    if (oneLoop && readsEachElementOnce(target->kind) && !(isRegion && target->kind == OpKind::Return) &&
        d <= kMaxInlineDepth) {
      s.computedInUser.insert(o->results[0]);
      s.sharedInUser.insert(o->results[0]);
      depth[o->results[0]] = d;
    }
  }
}

/// intoResult: a value returned once, made by an operation that writes a
/// fresh buffer (not a fusion, whose results are its region's, nor dense
/// constant data, which is read-only), and stored at all (not a splat, a
/// broadcast read through, nor a value computed in its user's loop: the
/// return's copy computes those).
/// A fusion's result is its region's: the value the region returns is
/// written into the caller's result when it would be itself.
void findResults(const ir::Function &f, FunctionSchedule &s) {
  const ir::Op &ret = f.ops.back();
  auto writesFresh = [&](const ir::Op &o, ValueId r) {
    return o.kind != OpKind::Return && o.kind != OpKind::Fusion && !(o.kind == OpKind::Constant && o.constant.size() > 1) &&
           !s.splats.count(r) && !s.computedInUser.count(r) && !s.readThrough.count(r);
  };
  for (const ir::Op &o : f.ops)
    for (size_t k = 0; k < o.results.size(); ++k) {
      ValueId r = o.results[k];
      if (std::count(ret.operands.begin(), ret.operands.end(), r) != 1)
        continue;
      size_t index = static_cast<size_t>(std::find(ret.operands.begin(), ret.operands.end(), r) - ret.operands.begin());
      if (writesFresh(o, r)) {
        s.intoResult[r] = index;
        continue;
      }
      if (o.kind != OpKind::Fusion)
        continue;
      const std::vector<ir::Op> &inner = o.region->ops;
      ValueId v = inner.back().operands[k];
      if (std::count(inner.back().operands.begin(), inner.back().operands.end(), v) != 1)
        continue;
      for (const ir::Op &p : inner)
        if (std::find(p.results.begin(), p.results.end(), v) != p.results.end() && writesFresh(p, v))
          s.intoResult[v] = index;
    }
}

/// The dimensions of a contraction operand that are neither batch nor
/// contracting.
size_t freeDimCount(const ir::TensorType &t, const std::vector<int64_t> &batch, const std::vector<int64_t> &contract) {
  return t.rank() - batch.size() - contract.size();
}

/// The register tile of a matrix product accumulating in `acc`, n result
/// columns wide: kTileRows rows, each of as many of the machine's vectors
/// as half its vector registers allow (the other half hold the rhs row,
/// the broadcast lhs elements and the products): f32 4x16 with AVX2 (8 of
/// 16 ymm registers), 4x64 with AVX-512 (16 of 32 zmm registers). Fewer
/// vectors per row where the result is narrower or the last panel would
/// pad it by more than a quarter, but at least one (a padded tile still
/// beats loops that accumulate in memory); none where the result is
/// narrower than one vector, which would be mostly padding. (Measured on
/// 1024^3 f32: 4x64 0.99 of the AVX-512 multiply+add peak; 4x32 0.91, 6x64
/// and 8x32 no better; on AVX2 wider tiles than 4x16 spilled:
/// docs/performance.md.)
std::optional<ContractionPlan> tileFor(ir::DType acc, int64_t n, const Machine &machine) {
  constexpr int64_t kTileRows = 4;
  int64_t lanes = std::max<int64_t>(1, machine.vectorBits / (8 * storageBytes(acc)));
  int64_t vectors = std::max<int64_t>(1, machine.vectorRegisters / 2 / kTileRows);
  for (; vectors > 1; vectors /= 2) {
    int64_t columns = vectors * lanes, padded = (n + columns - 1) / columns * columns;
    if (n >= columns && (padded - n) * 4 <= n)
      return ContractionPlan{ContractionOrder::Tiled, kTileRows, columns};
  }
  if (n >= lanes)
    return ContractionPlan{ContractionOrder::Tiled, kTileRows, lanes};
  return std::nullopt;
}

/// contractions: register tiles (tileFor) for a matrix product (batch
/// dims, one lhs-free dim M, one contracting dim K, one rhs-free dim N) of
/// any M and of N at least a tile's columns (the edges are tiles of fewer
/// rows, panels padded past N); the rhs-free loop innermost otherwise; the
/// tree order's own loop for `order = tree`.
void chooseContractions(const ir::Function &f, const std::vector<ir::Op> &ops, const Machine &machine,
                        FunctionSchedule &s) {
  for (const ir::Op &o : ops) {
    if (o.kind == OpKind::Fusion)
      chooseContractions(f, o.region->ops, machine, s);
    if (o.kind != OpKind::DotGeneral)
      continue;
    const ir::TensorType &a = f.valueTypes[o.operands[0]], &b = f.valueTypes[o.operands[1]];
    ContractionPlan plan{ContractionOrder::RhsFreeInner};
    if (o.order == ir::SumOrder::Tree)
      plan = {ContractionOrder::Tree}; // the reference's loop, each element's lanes in registers
    else if (o.lhsContract.size() == 1 && freeDimCount(a, o.lhsBatch, o.lhsContract) == 1 &&
        freeDimCount(b, o.rhsBatch, o.rhsContract) == 1) {
      const ir::TensorType &r = f.valueTypes[o.results[0]];
      if (std::optional<ContractionPlan> tiled = tileFor(*o.acc, r.shape[o.lhsBatch.size() + 1], machine))
        plan = *tiled;
    }
    s.contractions[o.results[0]] = plan;
  }
}

/// readThrough, for a tiled contraction's operands. Its rhs panels are
/// packed reading each element once, so a transpose or reshape that only
/// feeds the rhs (directly or through a broadcast read through) is read
/// through too, never written out (nn.Linear's `x @ W^T`; attention's keys
/// broadcast over a group of heads). Its lhs is read once per panel, so
/// only a reshape of a stored value is read through there: its elements
/// are the stored ones, in the same row-major order (grouped attention's
/// queries).
void readTiledOperandsThrough(const std::vector<ir::Op> &ops, FunctionSchedule &s) {
  std::map<ValueId, std::vector<const ir::Op *>> users = readers(ops);
  std::map<ValueId, const ir::Op *> producer;
  for (const ir::Op &o : ops) {
    for (ValueId r : o.results)
      producer[r] = &o;
    if (o.kind == OpKind::Fusion)
      readTiledOperandsThrough(o.region->ops, s);
  }
  for (const ir::Op &o : ops) {
    if (o.kind != OpKind::DotGeneral)
      continue;
    auto plan = s.contractions.find(o.results[0]);
    if (plan == s.contractions.end() || plan->second.order != ContractionOrder::Tiled)
      continue;
    ValueId v = o.operands[1];
    const ir::Op *user = &o;
    while (producer.count(v) && users[v].size() == 1 && users[v][0] == user && !s.splats.count(v)) {
      const ir::Op *p = producer[v];
      if (p->kind == OpKind::Transpose || p->kind == OpKind::Reshape)
        s.readThrough.insert(v);
      else if (!(p->kind == OpKind::BroadcastInDim && s.readThrough.count(v)))
        break;
      user = p;
      v = p->operands[0];
    }
    ValueId a = o.operands[0];
    if (producer.count(a) && producer[a]->kind == OpKind::Reshape && users[a].size() == 1 && !s.splats.count(a)) {
      ValueId stored = producer[a]->operands[0];
      if (!s.splats.count(stored) && !s.readThrough.count(stored) && !s.computedInUser.count(stored))
        s.readThrough.insert(a);
    }
  }
}

/// How many result elements an interleaved reduction accumulates at once.
constexpr int64_t kInterleaved = 8;

/// interleaved: a reduction in the sequential order (not argmax/argmin,
/// not the tree order) of at least kInterleaved result elements, each
/// summing at least two terms, accumulates kInterleaved consecutive result
/// elements at once: one element's additions wait on each other (the order
/// allows no other), but those of different elements are independent, so
/// the machine overlaps them (eight chains cover the latency of two adder
/// pipes), and where the kept dimension is the operand's innermost, their
/// loads are contiguous and vectorize.
void chooseInterleaved(const ir::Function &f, const std::vector<ir::Op> &ops, FunctionSchedule &s) {
  for (const ir::Op &o : ops) {
    if (o.kind == OpKind::Fusion)
      chooseInterleaved(f, o.region->ops, s);
    if (o.kind != OpKind::Reduce || o.order == SumOrder::Tree || o.combiner == ir::Combiner::ArgMax ||
        o.combiner == ir::Combiner::ArgMin)
      continue;
    const ir::TensorType &r = f.valueTypes[o.results[0]], &in = f.valueTypes[o.operands[0]];
    int64_t results = r.elementCount().value_or(0), terms = in.elementCount().value_or(0) / std::max<int64_t>(1, results);
    if (r.rank() > 0 && r.shape.back() >= kInterleaved && terms >= 2)
      s.interleaved[o.results[0]] = kInterleaved;
  }
}

/// The element operations of `o`'s loop nests: its result's elements, or
/// its largest operand's (a reduction reads all of them), times the
/// contracting extent of a contraction.
int64_t workOf(const ir::Function &f, const ir::Op &o) {
  int64_t work = 0;
  for (ValueId v : o.results)
    work = std::max(work, f.valueTypes[v].elementCount().value_or(0));
  for (ValueId v : o.operands)
    work = std::max(work, f.valueTypes[v].elementCount().value_or(0));
  if (o.kind == OpKind::DotGeneral) {
    const ir::TensorType &a = f.valueTypes[o.operands[0]];
    // (Saturating: the product of the sizes may pass int64's range.)
    constexpr int64_t kMost = std::numeric_limits<int64_t>::max();
    int64_t products = f.valueTypes[o.results[0]].elementCount().value_or(0);
    for (int64_t d : o.lhsContract) {
      int64_t k = a.shape[static_cast<size_t>(d)];
      products = k > 0 && products > kMost / k ? kMost : products * k;
    }
    work = std::max(work, products);
  }
  return work;
}

/// Whether `v` is one element: then only a sum in the tree order has
/// independent work (its chunks), which the threads share.
bool oneElement(const ir::Function &f, ValueId v) { return f.valueTypes[v].elementCount() == 1; }

/// threaded: the operations whose nests do at least `threshold` element
/// operations (kThreadedWork unless a test says). Below it, starting the
/// threads of a parallel loop costs more than it saves. An operation with
/// one result element has nothing to split, unless it is a tree sum.
void chooseThreads(const ir::Function &f, const std::vector<ir::Op> &ops, int64_t threshold, FunctionSchedule &s) {
  for (const ir::Op &o : ops) {
    if (o.kind == OpKind::Fusion)
      chooseThreads(f, o.region->ops, threshold, s);
    if (o.results.size() == 1 && workOf(f, o) >= threshold && (!oneElement(f, o.results[0]) || o.order == SumOrder::Tree))
      s.threaded.insert(o.results[0]);
  }
}

/// How a row group's operations index the values they read. The group's
/// rows are its results' first k dimensions (`rows`); a value read is
/// indexed by a prefix of them: its own first p dimensions are the rows'
/// first p (p = k: a value of each row; 0 < p < k: of each of the outer
/// rows, as attention's keys are of each batch entry; p = 0: the same for
/// every row, as a layer norm's gamma). Anything else (a row dimension
/// moved, reduced, sliced, merged with others, a value indexed by an inner
/// row but not an outer one, a contraction whose rhs is shared by all the
/// rows, which each block would pack again) rules the group out.
class RowAccess {
public:
  RowAccess(const ir::Function &f, std::vector<int64_t> rows) : f_(f), rows_(std::move(rows)) {}

  bool ok() const { return ok_; }
  const std::map<ValueId, size_t> &marks() const { return prefix_; }

  /// Marks `v` as read indexed by the first `p` rows; a value read two
  /// ways fails.
  void mark(ValueId v, size_t p) {
    auto [it, fresh] = prefix_.emplace(v, p);
    if (!fresh && it->second != p)
      ok_ = false;
    const ir::TensorType &t = f_.valueTypes[v];
    if (p == 0)
      return;
    if (t.rank() < p || !t.hasDefaultLayout())
      ok_ = false;
    for (size_t d = 0; d < p && ok_; ++d)
      ok_ = t.shape[d] == rows_[d];
  }

  /// Marks the operands of `o`, whose result is marked (a result not
  /// marked is read by nothing the group computes: fails).
  void operandsOf(const ir::Op &o) {
    if (o.results.size() != 1 || !prefix_.count(o.results[0])) {
      ok_ = false;
      return;
    }
    size_t p = prefix_.at(o.results[0]);
    auto all = [&](size_t q) {
      for (ValueId v : o.operands)
        mark(v, q);
    };
    // Whether map(d) == d for the first p dimensions.
    auto keeps = [&](auto map) {
      for (size_t d = 0; d < p; ++d)
        if (map(d) != static_cast<int64_t>(d))
          return false;
      return true;
    };
    if (p == 0 && o.kind != OpKind::Fusion) {
      all(0); // a value the same for every row reads none
      return;
    }
    switch (o.kind) {
    case OpKind::Unary: case OpKind::Binary: case OpKind::Compare: case OpKind::Select: case OpKind::Convert:
    case OpKind::Copy:
      all(p);
      return;
    case OpKind::BroadcastInDim: { // operand dimension j is result dimension dims[j] (or stretches from 1)
      const ir::TensorType &x = f_.valueTypes[o.operands[0]];
      size_t q = 0; // the operand's rows: its first q dimensions are the result's first q
      while (q < o.dims.size() && q < p && o.dims[q] == static_cast<int64_t>(q) && x.shape[q] == rows_[q])
        ++q;
      for (size_t j = q; j < o.dims.size(); ++j)
        if (o.dims[j] < static_cast<int64_t>(p) && x.shape[j] != 1)
          ok_ = false; // a later row, without the ones before it
      mark(o.operands[0], q);
      return;
    }
    case OpKind::Transpose:
      ok_ = ok_ && keeps([&](size_t d) { return o.dims[d]; });
      all(p);
      return;
    case OpKind::Slice:
      for (size_t d = 0; d < p; ++d)
        ok_ = ok_ && o.dims[d] == 0 && o.limits[d] == rows_[d];
      all(p);
      return;
    case OpKind::Reshape: { // row-major: the rows' elements stay together when their dimensions are kept
      const ir::TensorType &x = f_.valueTypes[o.operands[0]];
      ok_ = ok_ && x.rank() >= p;
      for (size_t d = 0; d < p && ok_; ++d)
        ok_ = x.shape[d] == rows_[d];
      all(p);
      return;
    }
    case OpKind::Concatenate:
      ok_ = ok_ && o.axis >= static_cast<int64_t>(p);
      all(p);
      return;
    case OpKind::Reduce: // the result's first p dimensions are the operand's: no row reduced
      for (int64_t a : o.dims)
        ok_ = ok_ && a >= static_cast<int64_t>(p);
      all(p);
      return;
    case OpKind::Constant: // a splat reads nothing; dense data is indexed by the whole row
      ok_ = ok_ && o.constant.size() == 1;
      return;
    case OpKind::Iota: // its values are its indices: never along a row
      ok_ = ok_ && o.axis >= static_cast<int64_t>(p);
      return;
    case OpKind::DotGeneral: {
      // The result's dimensions: batch, lhs free, rhs free. Its rows are
      // batch entries of both operands, then (in the lhs) free rows.
      const ir::TensorType &a = f_.valueTypes[o.operands[0]];
      std::vector<int64_t> lhsDims = o.lhsBatch;
      for (size_t d = 0; d < a.rank(); ++d)
        if (std::find(o.lhsBatch.begin(), o.lhsBatch.end(), static_cast<int64_t>(d)) == o.lhsBatch.end() &&
            std::find(o.lhsContract.begin(), o.lhsContract.end(), static_cast<int64_t>(d)) == o.lhsContract.end())
          lhsDims.push_back(static_cast<int64_t>(d));
      size_t nb = o.lhsBatch.size(), q = std::min(p, nb);
      ok_ = ok_ && nb > 0 && p <= lhsDims.size() && keeps([&](size_t d) { return lhsDims[d]; });
      for (size_t d = 0; d < q && ok_; ++d)
        ok_ = o.rhsBatch[d] == static_cast<int64_t>(d);
      mark(o.operands[0], p);
      mark(o.operands[1], q);
      return;
    }
    case OpKind::Fusion: {
      const std::vector<ir::Op> &inner = o.region->ops;
      for (ValueId v : inner.back().operands)
        mark(v, p);
      for (size_t i = inner.size() - 1; i-- > 0;)
        operandsOf(inner[i]);
      for (size_t i = 0; i < o.region->params.size(); ++i)
        if (auto it = prefix_.find(o.region->params[i]); it != prefix_.end())
          mark(o.operands[i], it->second);
      return;
    }
    case OpKind::Relayout: case OpKind::Call: case OpKind::Return:
      ok_ = false;
      return;
    }
  }

private:
  const ir::Function &f_;
  std::vector<int64_t> rows_;
  std::map<ValueId, size_t> prefix_;
  bool ok_ = true;
};

/// The bytes a block may hold: a block takes as many of the last row
/// dimension's rows as fit kRowBlockBytes with what the block reads of
/// the outer rows, in multiples of kInterleaved (a reduction's rows
/// accumulate that many at once), so that a block's rows stay in the L2
/// cache of every x86 core Keel targets (512 KiB and more) between the
/// group's operations.
constexpr int64_t kRowBlockBytes = int64_t{512} << 10;

/// Whether `o` may start or extend a row group: one result, row-major,
/// computed by its own loop nest (not a value the schedule computes in
/// its user's loop, reads through or never stores).
bool rowMember(const ir::Function &f, const ir::Op &o, const FunctionSchedule &s) {
  switch (o.kind) {
  case OpKind::Fusion: case OpKind::Reduce: case OpKind::DotGeneral: case OpKind::Unary: case OpKind::Binary:
  case OpKind::Compare: case OpKind::Select: case OpKind::Convert:
    break;
  case OpKind::Constant: case OpKind::Iota: case OpKind::BroadcastInDim: case OpKind::Reshape: case OpKind::Transpose:
  case OpKind::Slice: case OpKind::Concatenate: case OpKind::Copy: case OpKind::Relayout: case OpKind::Call:
  case OpKind::Return:
    return false; // index maps and sources read through or stored whole; barriers
  }
  if (o.results.size() != 1)
    return false;
  ValueId r = o.results[0];
  const ir::TensorType &t = f.valueTypes[r];
  return t.rank() > 0 && t.hasDefaultLayout() && !s.splats.count(r) && !s.computedInUser.count(r) &&
         !s.readThrough.count(r);
}

/// What row groups need to know of a function's top level: its values
/// (parameters and operations' results), and the last operation reading
/// each (the return included).
struct TopLevel {
  explicit TopLevel(const ir::Function &f) : values(f.params.begin(), f.params.end()) {
    for (size_t q = 0; q < f.ops.size(); ++q) {
      values.insert(f.ops[q].results.begin(), f.ops[q].results.end());
      for (ValueId v : f.ops[q].operands)
        lastRead[v] = q;
    }
  }
  std::set<ValueId> values;
  std::map<ValueId, size_t> lastRead;
};

/// The group f.ops[first, first + count) over rows `rows`, analysed;
/// nullopt if it cannot be one.
std::optional<RowGroup> rowGroup(const ir::Function &f, size_t first, size_t count, std::vector<int64_t> rows,
                                 const TopLevel &top, const FunctionSchedule &s) {
  int64_t rowCount = 1;
  for (int64_t n : rows)
    rowCount *= n;
  if (rows.empty() || rowCount < 2)
    return std::nullopt;
  RowGroup g;
  g.first = first;
  g.count = count;
  g.rows = std::move(rows);
  size_t k = g.rows.size();
  RowAccess access(f, g.rows);
  std::set<ValueId> defined;
  for (size_t q = first; q < first + count; ++q)
    defined.insert(f.ops[q].results[0]);
  for (ValueId r : defined)
    access.mark(r, k);
  for (size_t q = first + count; q-- > first;)
    access.operandsOf(f.ops[q]);
  if (!access.ok())
    return std::nullopt;
  // A block holds its rows of the values of each row and, whole, what it
  // reads of its outer rows: the stored values' bytes (values inside
  // regions are computed in their users' loops).
  int64_t rowBytes = 0, outerBytes = 0;
  for (const auto &[v, p] : access.marks()) {
    // A value from before the group that the schedule never stores would
    // be computed in the block from what it reads, which is not analysed.
    if (top.values.count(v) && !defined.count(v) && !s.splats.count(v) &&
        (s.computedInUser.count(v) || s.readThrough.count(v)))
      return std::nullopt;
    if (p == 0)
      continue;
    g.rowIndexed[v] = p;
    if (!top.values.count(v) || s.splats.count(v))
      continue;
    int64_t bytes = f.valueTypes[v].elementCount().value_or(0) * storageBytes(f.valueTypes[v].dtype);
    for (size_t d = 0; d < p; ++d)
      bytes /= std::max<int64_t>(1, g.rows[d]);
    (p == k ? rowBytes : outerBytes) += bytes;
  }
  // Results read after the group, or returned, are stored whole.
  for (ValueId r : defined)
    if (auto it = top.lastRead.find(r); it == top.lastRead.end() || it->second < first + count)
      g.local.insert(r);
  g.blockRows = std::clamp<int64_t>((kRowBlockBytes - std::min(outerBytes, kRowBlockBytes / 2)) /
                                        std::max<int64_t>(1, rowBytes),
                                    1, g.rows.back());
  if (g.blockRows >= kInterleaved)
    g.blockRows -= g.blockRows % kInterleaved;
  return g;
}

/// The group with op q added (or starting at q), its rows the leading
/// dimensions its results share, as many as its analysis allows; nullopt
/// if none does.
std::optional<RowGroup> withOp(const ir::Function &f, const std::optional<RowGroup> &open, size_t q,
                               const TopLevel &top, const FunctionSchedule &s) {
  const std::vector<int64_t> &shape = f.valueTypes[f.ops[q].results[0]].shape;
  std::vector<int64_t> rows = open ? open->rows : shape;
  size_t k = 0;
  while (k < rows.size() && k < shape.size() && rows[k] == shape[k])
    ++k;
  for (; k > 0; --k)
    if (std::optional<RowGroup> g = rowGroup(f, open ? open->first : q, open ? open->count + 1 : 1,
                                             std::vector<int64_t>(rows.begin(), rows.begin() + static_cast<std::ptrdiff_t>(k)),
                                             top, s))
      return g;
  return std::nullopt;
}

/// rowGroups: runs of consecutive operations over the same rows (at most
/// kMaxRowGroup, so that the analysis stays linear in the function),
/// each reading what the run computed at its own rows only, with at least
/// one result used only within the run and enough work to run on threads.
/// A run grows while its analysis holds (its rows as many leading
/// dimensions as it allows); the operation that breaks it starts the next.
void chooseRowGroups(const ir::Function &f, int64_t threshold, FunctionSchedule &s) {
  constexpr size_t kMaxRowGroup = 16;
  TopLevel top(f);
  std::optional<RowGroup> open;
  auto close = [&] {
    if (!open || open->count < 2 || open->local.empty())
      return;
    int64_t work = 0;
    for (size_t q = open->first; q < open->first + open->count; ++q)
      work = std::max(work, workOf(f, f.ops[q]));
    if (work >= threshold)
      s.rowGroups.push_back(*open);
  };
  for (size_t q = 0; q < f.ops.size(); ++q) {
    bool member = rowMember(f, f.ops[q], s);
    if (member && open && open->count < kMaxRowGroup) {
      if (std::optional<RowGroup> grown = withOp(f, open, q, top, s)) {
        open = grown;
        continue;
      }
    }
    close();
    open = member ? withOp(f, std::nullopt, q, top, s) : std::nullopt;
  }
  close();
}

std::string planText(const ContractionPlan &p) {
  switch (p.order) {
  case ContractionOrder::Logical: return "logical";
  case ContractionOrder::Tree: return "tree order";
  case ContractionOrder::RhsFreeInner: return "rhs-free innermost";
  case ContractionOrder::Tiled: return "tiled " + std::to_string(p.tileRows) + "x" + std::to_string(p.tileColumns);
  }
  return "";
}

} // namespace

Schedule cpuSchedule(const ir::Module &m, int64_t threadedWork, Machine machine) {
  Schedule out;
  for (const ir::Function &f : m.functions) {
    FunctionSchedule &s = out[f.name];
    findSplats(f.ops, s);
    findIndexMaps(f.ops, false, s);
    findComputedInUser(f.ops, false, s);
    findResults(f, s);
    chooseContractions(f, f.ops, machine, s);
    readTiledOperandsThrough(f.ops, s);
    chooseInterleaved(f, f.ops, s);
    chooseThreads(f, f.ops, threadedWork, s);
    chooseRowGroups(f, threadedWork, s);
    s.freeEarly = true;
  }
  return out;
}

std::string printSchedule(const ir::Module &m, const Schedule &schedule) {
  std::string out;
  for (const ir::Function &f : m.functions) {
    std::unordered_map<ValueId, std::string> names = ir::valueNames(f); // as `keel ir` prints them
    out += "schedule @" + f.name + "\n";
    auto it = schedule.find(f.name);
    if (it == schedule.end()) {
      out += "  reference\n";
      continue;
    }
    const FunctionSchedule &s = it->second;
    auto line = [&](ValueId v, const std::string &what) { out += "  " + names[v] + ": " + what + "\n"; };
    for (const auto &[v, bits] : s.splats) {
      char hex[24];
      std::snprintf(hex, sizeof hex, "0x%llx", static_cast<unsigned long long>(bits));
      line(v, std::string("splat ") + hex + ", not stored");
    }
    for (ValueId v : s.readThrough)
      if (!s.splats.count(v))
        line(v, "read through its operand (an index map)");
    for (ValueId v : s.computedInUser)
      if (!s.splats.count(v))
        line(v, s.sharedInUser.count(v) ? "computed once per element in its user's loop (read twice there)"
                                        : "computed in its user's loop");
    for (const auto &[v, i] : s.intoResult)
      line(v, "written into result " + std::to_string(i));
    for (const auto &[v, plan] : s.contractions)
      line(v, "contraction, " + planText(plan));
    for (const auto &[v, count] : s.interleaved)
      line(v, "reduction, " + std::to_string(count) + " result elements at once");
    for (ValueId v : s.threaded)
      if (!s.splats.count(v) && !s.computedInUser.count(v) && !s.readThrough.count(v))
        line(v, oneElement(f, v) ? "on threads (its tree order's chunks split across them)"
                                  : "on threads (its independent elements split across them)");
    for (const RowGroup &g : s.rowGroups) {
      std::string members, local, rows;
      for (size_t q = g.first; q < g.first + g.count; ++q)
        members += (members.empty() ? "" : ", ") + names[f.ops[q].results[0]];
      for (ValueId v : g.local)
        local += (local.empty() ? "" : ", ") + names[v];
      for (int64_t n : g.rows)
        rows += (rows.empty() ? "" : "x") + std::to_string(n);
      out += "  " + members + ": by blocks of " + std::to_string(g.blockRows) + " of their " + rows + " rows; " + local +
             " kept per block\n";
    }
    out += s.freeEarly ? "  buffers freed after their last use\n" : "  buffers freed on return\n";
  }
  return out;
}

} // namespace keel::cpu
