//===- Scheduled.cpp - The CPU exit: the reference, realizing a schedule --===//
//
// ScheduledLowering is the reference lowering (Reference.h) with its hooks
// overridden to realize one function's schedule (Schedule.h): values
// computed in their user's loop or read through their operand, splats
// never stored, results written straight into the caller's buffer,
// buffers freed after their last use, and contractions in the loop order
// the schedule chose. Each computes exactly the reference's bits: every
// element is the reference's element expression, and every contraction
// result starts at the identity and adds round(a * b) for its contracting
// indices in order; only the order in which independent elements are
// visited changes.
//
//===----------------------------------------------------------------------===//
#include "Reference.h"

#include "keel/exits/cpu/Lower.h"

#include <algorithm>
#include <map>
#include <stdexcept>
#include <tuple>

namespace keel::cpu {

using namespace loop;

namespace detail {
namespace {

class ScheduledLowering final : public ReferenceLowering {
public:
  ScheduledLowering(const ir::Function &f, const FunctionSchedule &schedule, Module &out)
      : ReferenceLowering(f, out), s_(schedule) {
    for (const RowGroup &g : s_.rowGroups)
      for (size_t q = g.first; q < g.first + g.count; ++q)
        groupOf_[&f_.ops[q]] = &g;
  }

private:
  ExprPtr load(ValueId v, const std::vector<Ix> &index) override;
  ExprPtr inBuffer(ValueId v, ExprPtr addr) override;
  /// In a chunk of a row group's blocks, every scratch (a value's, a
  /// contraction's tile and panel) is allocated once for the chunk and
  /// freed after it.
  Slot allocateScratch(int64_t bytes, const ir::Op &o) override;
  void release(Slot slot) override;
  Slot bufferOf(ValueId v, const ir::Op &user) override;
  void define(ValueId v, const ir::Op &o) override;
  void lowerOps(const std::vector<ir::Op> &ops, std::vector<ValueId> *regionResults) override;
  void lowered(const std::vector<ir::Op> &ops, size_t position, bool inRegion) override;
  /// Lowers `o` with threaded_ set as the schedule says for it.
  void lowerOp(const ir::Op &o) override;
  void lowerScheduledOp(const ir::Op &o);
  void lowerReturn(const ir::Op &o) override;
  void bindRegionParam(ValueId operand, ValueId param) override;
  bool inCallerResult(ValueId v) const override;
  void dotGeneral(const ir::Op &o) override;
  void reduce(const ir::Op &o) override;

  /// A row group (Schedule.h): its results read after it get whole
  /// buffers first; then a loop over chunks of its blocks of rows (on
  /// threads when any of its operations would be), each chunk allocating
  /// the blocks' scratch once, runs each operation on each block's rows:
  /// its row-indexed values typed with the block's rows, those in whole
  /// buffers addressed from the block's first row, the others in the
  /// scratch; the last, shorter block after the loop.
  void lowerRowGroup(const RowGroup &g);
  /// One block: `rows` rows of the last row dimension, from the rows in
  /// slots `first` (one per row dimension).
  void lowerRowBlock(const RowGroup &g, std::vector<Slot> first, int64_t rows);

  /// Interleaved: `count` consecutive elements of the result's innermost
  /// dimension accumulate at once, each in a slot of its own, in the
  /// reference's order over the reduced indices (the last elements past a
  /// multiple of `count` fewer at once).
  void interleavedReduction(const ir::Op &o, int64_t count);

  /// RhsFreeInner: the loops run batch, lhs free, contracting, then rhs
  /// free dimensions innermost, accumulating in memory (the result itself
  /// when it has the accumulator's dtype): every element still starts at
  /// the identity and adds round(a * b) for its contracting indices in
  /// order, and the innermost loop runs over independent elements, which
  /// LLVM can vectorize without reassociating anything.
  void rhsFreeInnerContraction(const ir::Op &o);

  /// Tiled: a matrix product by tiles of the plan's size, as BLAS does: for
  /// each tile-wide panel of the rhs (the panels independent: each has its
  /// own scratch, so they may run on threads), copied (converted to the
  /// accumulator, exactly) into contiguous memory, every tile of results
  /// accumulates in a small buffer of its own across the whole contracting
  /// loop; its innermost loop over the tile's columns vectorizes and the
  /// tile stays in registers; an lhs of another dtype is widened once per
  /// tile into a small buffer. Any M and N: the rows past the last whole
  /// tile are one tile of fewer rows, and the last panel is padded with
  /// zeros past N, whose products are never stored. Every result still
  /// starts at the identity and adds round(a * b) for k = 0, 1, ... in order.
  void tiledContraction(const ir::Op &o, const ContractionPlan &plan);

  const FunctionSchedule &s_;
  std::map<ValueId, const ir::Op *> indexMaps_;    ///< values read through their operand
  std::map<ValueId, const ir::Op *> pointwiseOps_; ///< values computed in their user's loop
  /// sharedInUser values computed in a loop body, by value, block and index.
  std::map<std::tuple<ValueId, std::vector<StmtPtr> *, std::vector<std::tuple<int64_t, int64_t, int64_t>>>, Slot>
      shared_;
  /// Per list of operations being lowered (a region nests one): the values
  /// whose last use is each position.
  std::vector<std::vector<std::vector<ValueId>>> dying_;
  /// Each top-level operation of a row group, its group.
  std::map<const ir::Op *, const RowGroup *> groupOf_;
  /// While a block of a row group is lowered: the group, its first row in
  /// each row dimension, and the values in buffers of all the rows (made
  /// before the block loop; region parameters bound to them), addressed
  /// from those rows.
  const RowGroup *blockGroup_ = nullptr;
  std::vector<Slot> blockFirst_;
  std::set<ValueId> wholeRows_;
  /// Values given their buffers before their operation is lowered (a row
  /// group's results read after it): define leaves them as they are.
  std::set<ValueId> predefined_;
  /// While the blocks of a chunk are lowered: where their scratch is
  /// allocated (before the chunk's loop over its blocks), the slots to
  /// free after it, and the values given them (never owned: a region's
  /// result takes its buffer over as a caller's, see inCallerResult).
  std::vector<StmtPtr> *hoistInto_ = nullptr;
  std::vector<Slot> hoisted_;
  std::set<ValueId> hoistedValues_;
};

ExprPtr ScheduledLowering::load(ValueId v, const std::vector<Ix> &index) {
  if (auto it = s_.splats.find(v); it != s_.splats.end())
    return encodingConst(type(v).dtype, it->second);
  if (auto it = indexMaps_.find(v); it != indexMaps_.end())
    return it->second->kind == OpKind::Reshape ? reshapedLoad(*it->second, index)
                                               : load(it->second->operands[0], mappedIndex(*it->second, index));
  if (auto it = pointwiseOps_.find(v); it != pointwiseOps_.end()) {
    if (!s_.sharedInUser.count(v))
      return pointwise(*it->second, index);
    // Computed once per element of its user, into a scalar of this loop.
    std::vector<std::tuple<int64_t, int64_t, int64_t>> at;
    for (const Ix &x : index)
      at.emplace_back(x.slot, x.offset, x.scale);
    auto key = std::make_tuple(v, block_, at);
    auto found = shared_.find(key);
    if (found == shared_.end()) {
      Slot temp = newSlot(computeType(type(v).dtype));
      assign(temp, pointwise(*it->second, index));
      found = shared_.emplace(key, temp).first;
    }
    return var(found->second);
  }
  return ReferenceLowering::load(v, index);
}

ExprPtr ScheduledLowering::inBuffer(ValueId v, ExprPtr addr) {
  if (!blockGroup_ || !wholeRows_.count(v))
    return addr;
  auto it = blockGroup_->rowIndexed.find(v);
  if (it == blockGroup_->rowIndexed.end())
    return addr;
  // The block's row r of dimension d is row first[d] + r of the buffer
  // (the rows are the outermost dimensions: row-major).
  std::vector<int64_t> whole = strides(f_.valueTypes[v]);
  for (size_t d = 0; d < it->second; ++d)
    addr = makeBinary(BinaryOp::Add, std::move(addr), makeBinary(BinaryOp::Mul, var(blockFirst_[d]), i64(whole[d])));
  return addr;
}

Slot ScheduledLowering::allocateScratch(int64_t bytes, const ir::Op &o) {
  if (!hoistInto_)
    return ReferenceLowering::allocateScratch(bytes, o);
  std::vector<StmtPtr> *here = block_;
  block_ = hoistInto_;
  Slot slot = ReferenceLowering::allocateScratch(bytes, o);
  block_ = here;
  hoisted_.push_back(slot);
  return slot;
}

void ScheduledLowering::release(Slot slot) {
  if (std::find(hoisted_.begin(), hoisted_.end(), slot) == hoisted_.end())
    ReferenceLowering::release(slot); // (a hoisted one is freed after its chunk)
}

/// A value the schedule never stores (a splat, a broadcast read through) is
/// written out the first time a buffer is needed (a call's argument, the
/// rhs of a tiled contraction).
Slot ScheduledLowering::bufferOf(ValueId v, const ir::Op &user) {
  if (auto it = buffer_.find(v); it != buffer_.end())
    return it->second;
  define(v, user); // loads of v still read its splat or its broadcast operand
  std::vector<StmtPtr> *saved = block_;
  std::vector<Ix> index = ixs(openNest(type(v).shape, kEveryLoop));
  store(v, address(type(v), index), load(v, index));
  block_ = saved;
  return buffer_.at(v);
}

void ScheduledLowering::define(ValueId v, const ir::Op &o) {
  if (predefined_.count(v))
    return;
  if (hoistInto_) { // a chunk's scratch, for each of its blocks in turn
    buffer_[v] = allocateScratch(*type(v).elementCount() * storageBytes(type(v).dtype), o);
    hoistedValues_.insert(v);
    return;
  }
  if (auto it = s_.intoResult.find(v); it != s_.intoResult.end()) {
    buffer_[v] = resultSlots_[it->second];
    return;
  }
  ReferenceLowering::define(v, o);
}

void ScheduledLowering::lowerOps(const std::vector<ir::Op> &ops, std::vector<ValueId> *regionResults) {
  std::vector<std::vector<ValueId>> dying(ops.size());
  if (s_.freeEarly) {
    // Values read through their operands (a broadcast, a value computed in
    // its user's loop): a use of one is a use of those, which must live
    // until then.
    std::map<ValueId, std::vector<ValueId>> readsThrough;
    for (const ir::Op &o : ops)
      if (o.results.size() == 1 && !s_.splats.count(o.results[0]) &&
          (s_.readThrough.count(o.results[0]) || s_.computedInUser.count(o.results[0])))
        readsThrough[o.results[0]] = o.operands;
    std::map<ValueId, size_t> last;
    auto use = [&](ValueId used, size_t p) { // v and everything it reads through live until p
      std::vector<ValueId> work{used};
      while (!work.empty()) {
        ValueId v = work.back();
        work.pop_back();
        auto [at, fresh] = last.try_emplace(v, p);
        if (!fresh && at->second == p)
          continue; // already walked at this position
        at->second = p;
        if (auto it = readsThrough.find(v); it != readsThrough.end())
          work.insert(work.end(), it->second.begin(), it->second.end());
      }
    };
    for (size_t p = 0; p < ops.size(); ++p) {
      for (ValueId r : ops[p].results)
        last[r] = p;
      for (ValueId v : ops[p].operands)
        use(v, p);
    }
    for (const auto &[v, at] : last)
      dying[at].push_back(v);
  }
  dying_.push_back(std::move(dying));
  ReferenceLowering::lowerOps(ops, regionResults);
  dying_.pop_back();
}

void ScheduledLowering::lowered(const std::vector<ir::Op> &ops, size_t position, bool inRegion) {
  for (ValueId v : dying_.back()[position])
    if (!(inRegion && isReturned(ops, v)))
      free(v);
}

void ScheduledLowering::lowerOp(const ir::Op &o) {
  if (auto g = groupOf_.find(&o); g != groupOf_.end() && !blockGroup_) {
    if (&o == &f_.ops[g->second->first])
      lowerRowGroup(*g->second); // the whole group; its other operations are lowered with it
    return;
  }
  bool outerThreaded = threaded_;
  threaded_ = !blockGroup_ && o.results.size() == 1 && s_.threaded.count(o.results[0]);
  lowerScheduledOp(o);
  threaded_ = outerThreaded;
}

void ScheduledLowering::lowerRowGroup(const RowGroup &g) {
  // Everything in a buffer now is whole: read from before the group.
  for (const auto &[v, slot] : buffer_)
    wholeRows_.insert(v);
  bool threaded = false;
  for (size_t q = g.first; q < g.first + g.count; ++q) {
    const ir::Op &o = f_.ops[q];
    ValueId r = o.results[0];
    threaded = threaded || s_.threaded.count(r);
    if (g.local.count(r))
      continue;
    // Read after the group: a whole buffer (or the caller's result), which
    // a region's returned value is written into where the region stores it
    // (made by an operation of the region that writes a buffer of its own,
    // returned once; else the fusion copies it, into the same buffer).
    ValueId inner = o.kind == OpKind::Fusion ? o.region->ops.back().operands[0] : r;
    bool innerDefined = false;
    if (inner != r && std::count(o.region->ops.back().operands.begin(), o.region->ops.back().operands.end(), inner) == 1)
      for (const ir::Op &p : o.region->ops)
        if (p.results.size() == 1 && p.results[0] == inner)
          innerDefined = p.kind != OpKind::Constant && !s_.splats.count(inner) && !s_.computedInUser.count(inner) &&
                         !s_.readThrough.count(inner);
    if (innerDefined && s_.intoResult.count(inner)) {
      define(inner, o); // the caller's result: the fusion takes it over (inCallerResult)
      predefined_.insert(inner);
      wholeRows_.insert({inner, r});
      continue;
    }
    define(r, o);
    predefined_.insert(r);
    wholeRows_.insert(r);
    if (innerDefined) {
      buffer_[inner] = buffer_.at(r);
      predefined_.insert(inner);
      wholeRows_.insert(inner);
    }
  }
  std::vector<StmtPtr> *saved = block_;
  size_t k = g.rows.size();
  int64_t outer = 1;
  for (size_t d = 0; d + 1 < k; ++d)
    outer *= g.rows[d];
  int64_t blocks = g.rows.back() / g.blockRows, rest = g.rows.back() % g.blockRows;
  // The first rows of the block `outerIndex` (an index of the outer rows,
  // row-major) and `last` (of the last).
  auto firsts = [&](ExprPtr outerIndex, ExprPtr last) {
    std::vector<Slot> first(k);
    Slot index = newSlot(Type::I64);
    assign(index, std::move(outerIndex));
    int64_t stride = 1;
    for (size_t d = k - 1; d-- > 0;) {
      first[d] = newSlot(Type::I64);
      assign(first[d], makeBinary(BinaryOp::Rem, makeBinary(BinaryOp::Div, var(index), i64(stride)), i64(g.rows[d])));
      stride *= g.rows[d];
    }
    first[k - 1] = newSlot(Type::I64);
    assign(first[k - 1], std::move(last));
    return first;
  };
  if (blocks > 0) {
    // The blocks of full length, outer rows first, in at most kRowChunks
    // chunks, each a parallel iteration that allocates its scratch once
    // for all of its blocks.
    constexpr int64_t kRowChunks = 64;
    int64_t total = outer * blocks;
    int64_t perChunk = (total + kRowChunks - 1) / kRowChunks, chunks = (total + perChunk - 1) / perChunk;
    Slot c = openLoop(i64(0), i64(chunks), threaded && chunks > 1 && block_ == &fn_.body);
    std::vector<StmtPtr> *chunkBody = block_;
    std::vector<StmtPtr> allocations;
    hoistInto_ = &allocations;
    Slot b = openLoop(makeBinary(BinaryOp::Mul, var(c), i64(perChunk)),
                      makeBinary(BinaryOp::Min, makeBinary(BinaryOp::Mul, makeBinary(BinaryOp::Add, var(c), i64(1)), i64(perChunk)),
                                 i64(total)));
    lowerRowBlock(g, firsts(makeBinary(BinaryOp::Div, var(b), i64(blocks)),
                            makeBinary(BinaryOp::Mul, makeBinary(BinaryOp::Rem, var(b), i64(blocks)), i64(g.blockRows))),
                  g.blockRows);
    chunkBody->insert(chunkBody->begin(), std::make_move_iterator(allocations.begin()),
                      std::make_move_iterator(allocations.end()));
    block_ = chunkBody;
    for (Slot scratch : hoisted_)
      ReferenceLowering::release(scratch);
    hoisted_.clear();
    hoistedValues_.clear();
    hoistInto_ = nullptr;
    block_ = saved;
  }
  if (rest > 0) { // the last rows of each outer row, a shorter block each
    Slot o = openLoop(i64(0), i64(outer), threaded && outer > 1 && block_ == &fn_.body);
    lowerRowBlock(g, firsts(var(o), i64(blocks * g.blockRows)), rest);
    block_ = saved;
  }
  wholeRows_.clear();
}

void ScheduledLowering::lowerRowBlock(const RowGroup &g, std::vector<Slot> first, int64_t rows) {
  size_t k = g.rows.size();
  for (const auto &[v, p] : g.rowIndexed) {
    for (size_t d = 0; d < std::min(p, k - 1); ++d)
      types_[v].shape[d] = 1;
    if (p == k)
      types_[v].shape[k - 1] = rows;
  }
  blockGroup_ = &g;
  blockFirst_ = std::move(first);
  std::set<ValueId> ownedBefore = owned_;
  for (size_t q = g.first; q < g.first + g.count; ++q)
    lowerOp(f_.ops[q]);
  // The block's own scratch is freed with the block.
  for (ValueId v : std::set<ValueId>(owned_))
    if (!ownedBefore.count(v))
      free(v);
  blockGroup_ = nullptr;
  for (const auto &[v, p] : g.rowIndexed)
    types_[v].shape = f_.valueTypes[v].shape;
}

void ScheduledLowering::lowerReturn(const ir::Op &o) {
  // The copies into the results (where the values returned may be computed)
  // run on threads as those values would.
  threaded_ = std::any_of(o.operands.begin(), o.operands.end(), [&](ValueId v) { return s_.threaded.count(v) > 0; });
  ReferenceLowering::lowerReturn(o);
  threaded_ = false;
}

void ScheduledLowering::lowerScheduledOp(const ir::Op &o) {
  if (o.results.size() == 1 && s_.splats.count(o.results[0]))
    return; // never stored: loads become the constant (see load)
  switch (o.kind) {
  case OpKind::Unary: case OpKind::Binary: case OpKind::Compare: case OpKind::Select: case OpKind::Convert:
  case OpKind::Copy: case OpKind::Relayout:
    if (s_.computedInUser.count(o.results[0])) { // computed where its one user reads it (see load)
      pointwiseOps_[o.results[0]] = &o;
      return;
    }
    break;
  case OpKind::BroadcastInDim: case OpKind::Transpose: case OpKind::Slice: case OpKind::Reshape:
    if (s_.readThrough.count(o.results[0])) { // never stored: loads index the operand (see load)
      indexMaps_[o.results[0]] = &o;
      return;
    }
    break;
  case OpKind::Constant: case OpKind::Iota: case OpKind::Concatenate: case OpKind::Reduce: case OpKind::DotGeneral:
  case OpKind::Call: case OpKind::Fusion: case OpKind::Return:
    break;
  }
  ReferenceLowering::lowerOp(o);
}

void ScheduledLowering::bindRegionParam(ValueId operand, ValueId param) {
  if (blockGroup_ && wholeRows_.count(operand))
    wholeRows_.insert(param);
  if (s_.splats.count(param))
    return; // loads become the constant
  if (auto b = indexMaps_.find(operand); b != indexMaps_.end())
    indexMaps_[param] = b->second;
  else
    ReferenceLowering::bindRegionParam(operand, param);
}

bool ScheduledLowering::inCallerResult(ValueId v) const {
  return (s_.intoResult.count(v) && buffer_.count(v)) || predefined_.count(v) || hoistedValues_.count(v);
}

void ScheduledLowering::dotGeneral(const ir::Op &o) {
  define(o.results[0], o);
  ContractionPlan plan;
  if (auto it = s_.contractions.find(o.results[0]); it != s_.contractions.end())
    plan = it->second;
  switch (plan.order) {
  case ContractionOrder::Logical: case ContractionOrder::Tree: logicalContraction(o); return;
  case ContractionOrder::RhsFreeInner: rhsFreeInnerContraction(o); return;
  case ContractionOrder::Tiled: tiledContraction(o, plan); return;
  }
}

void ScheduledLowering::reduce(const ir::Op &o) {
  if (auto it = s_.interleaved.find(o.results[0]); it != s_.interleaved.end())
    interleavedReduction(o, it->second);
  else
    ReferenceLowering::reduce(o);
}

void ScheduledLowering::interleavedReduction(const ir::Op &o, int64_t count) {
  ValueId x = o.operands[0], r = o.results[0];
  const TensorType &in = type(x), &tr = type(r);
  DType acc = *o.acc;
  if (tr.rank() == 0 || count <= 0 || o.combiner == ir::Combiner::ArgMax || o.combiner == ir::Combiner::ArgMin ||
      o.order == ir::SumOrder::Tree)
    throw std::logic_error("the schedule interleaves a reduction that cannot be: argmax, argmin, the tree order or "
                           "one result element");
  define(r, o);
  std::vector<int64_t> reducedShape;
  for (int64_t a : o.dims)
    reducedShape.push_back(in.shape[static_cast<size_t>(a)]);
  std::vector<int64_t> outerShape(tr.shape.begin(), tr.shape.end() - 1);
  int64_t inner = tr.shape.back();
  std::vector<StmtPtr> *saved = block_;
  // Every result element is independent: the outer kept dimensions, then
  // the groups of `count` (the outermost of these with more than one
  // iteration runs on threads when the operation does).
  std::vector<Ix> outer = ixs(openNest(outerShape, kEveryLoop));
  std::vector<StmtPtr> *outerBody = block_;
  // `n` elements from inner index `first` (+ 0, 1, ...): each from the
  // identity, the reduced indices in row-major order, then stored.
  auto group = [&](Ix first, int64_t n) {
    std::vector<StmtPtr> *groupBody = block_;
    std::vector<Slot> slots;
    std::vector<std::vector<Ix>> kept;
    for (int64_t e = 0; e < n; ++e) {
      slots.push_back(newSlot(computeType(acc)));
      assign(slots.back(), identity(o.combiner, acc));
      kept.push_back(outer);
      kept.back().push_back({first.slot, first.offset + e, first.scale});
    }
    std::vector<Ix> reduced = ixs(openNest(reducedShape));
    for (int64_t e = 0; e < n; ++e)
      accumulate(o.combiner, acc, slots[static_cast<size_t>(e)],
                 convert(load(x, reductionOperandIndex(o, in.rank(), kept[static_cast<size_t>(e)], reduced)), in.dtype, acc));
    block_ = groupBody;
    for (int64_t e = 0; e < n; ++e)
      store(r, address(tr, kept[static_cast<size_t>(e)]), convert(var(slots[static_cast<size_t>(e)]), acc, tr.dtype));
  };
  if (inner / count > 0) {
    Slot g = openNest({inner / count}, kEveryLoop)[0];
    group({static_cast<int64_t>(g), 0, count}, count);
  }
  block_ = outerBody;
  if (inner % count != 0)
    group({-1, inner / count * count, 1}, inner % count);
  block_ = saved;
}

void ScheduledLowering::rhsFreeInnerContraction(const ir::Op &o) {
  ValueId a = o.operands[0], b = o.operands[1], r = o.results[0];
  const TensorType &ta = type(a), &tb = type(b), &tr = type(r);
  DType acc = *o.acc;
  TensorType accType = tr; // the result's shape and layout, the accumulator's dtype
  accType.dtype = acc;
  Slot accBuffer = buffer_.at(r);
  bool separate = acc != tr.dtype;
  if (separate)
    accBuffer = allocateScratch(*accType.elementCount() * storageBytes(acc), o);
  // (The result itself is addressed as its buffer holds it: inBuffer.)
  auto accAddress = [&](const std::vector<Ix> &i) {
    ExprPtr at = address(accType, i);
    return separate ? std::move(at) : inBuffer(r, std::move(at));
  };
  std::vector<StmtPtr> *saved = block_;
  std::vector<Ix> all = ixs(openNest(tr.shape, kEveryLoop));
  storeTo(accBuffer, acc, accAddress(all), identity(ir::Combiner::Sum, acc));
  block_ = saved;

  std::vector<int64_t> lhsFree = freeDims(ta, o.lhsBatch, o.lhsContract);
  std::vector<int64_t> rhsFree = freeDims(tb, o.rhsBatch, o.rhsContract);
  std::vector<int64_t> shape;
  for (int64_t d : o.lhsBatch) shape.push_back(ta.shape[static_cast<size_t>(d)]);
  for (int64_t d : lhsFree) shape.push_back(ta.shape[static_cast<size_t>(d)]);
  for (int64_t d : o.lhsContract) shape.push_back(ta.shape[static_cast<size_t>(d)]);
  for (int64_t d : rhsFree) shape.push_back(tb.shape[static_cast<size_t>(d)]);
  size_t nb = o.lhsBatch.size(), nl = lhsFree.size(), nc = o.lhsContract.size();
  std::vector<Slot> loops = openNest(shape, nb + nl); // the contracting loops accumulate: never split
  std::vector<Ix> ja(ta.rank()), jb(tb.rank()), jr;
  auto at = [&](size_t k) { return Ix{static_cast<int64_t>(loops[k]), 0}; };
  for (size_t k = 0; k < nb; ++k) {
    ja[static_cast<size_t>(o.lhsBatch[k])] = at(k);
    jb[static_cast<size_t>(o.rhsBatch[k])] = at(k);
    jr.push_back(at(k));
  }
  for (size_t k = 0; k < nl; ++k) {
    ja[static_cast<size_t>(lhsFree[k])] = at(nb + k);
    jr.push_back(at(nb + k));
  }
  for (size_t k = 0; k < nc; ++k) {
    ja[static_cast<size_t>(o.lhsContract[k])] = at(nb + nl + k);
    jb[static_cast<size_t>(o.rhsContract[k])] = at(nb + nl + k);
  }
  for (size_t k = 0; k < rhsFree.size(); ++k) {
    jb[static_cast<size_t>(rhsFree[k])] = at(nb + nl + nc + k);
    jr.push_back(at(nb + nl + nc + k));
  }
  ExprPtr x = load(a, ja), y = load(b, jb);
  ExprPtr term = product(acc, std::move(x), ta.dtype, std::move(y), tb.dtype);
  ExprPtr sum = binaryElement(BinaryOp::Add, acc, loadFrom(accBuffer, acc, accAddress(jr)), std::move(term));
  storeTo(accBuffer, acc, accAddress(jr), std::move(sum));
  block_ = saved;

  if (separate) {
    std::vector<Ix> i = ixs(openNest(tr.shape, kEveryLoop));
    store(r, address(tr, i), convert(loadFrom(accBuffer, acc, address(accType, i)), acc, tr.dtype));
    block_ = saved;
    release(accBuffer);
  }
}

void ScheduledLowering::tiledContraction(const ir::Op &o, const ContractionPlan &plan) {
  ValueId a = o.operands[0], b = o.operands[1], r = o.results[0];
  const TensorType &ta = type(a), &tb = type(b), &tr = type(r);
  std::vector<int64_t> lhsFree = freeDims(ta, o.lhsBatch, o.lhsContract);
  std::vector<int64_t> rhsFree = freeDims(tb, o.rhsBatch, o.rhsContract);
  const int64_t rows = plan.tileRows, columns = plan.tileColumns;
  if (o.lhsContract.size() != 1 || lhsFree.size() != 1 || rhsFree.size() != 1 || rows <= 0 || columns <= 0)
    throw std::logic_error("the schedule tiles a contraction that is not a matrix product by " + std::to_string(rows) +
                           "x" + std::to_string(columns) + " tiles");
  size_t mDim = static_cast<size_t>(lhsFree[0]), nDim = static_cast<size_t>(rhsFree[0]);
  size_t kA = static_cast<size_t>(o.lhsContract[0]), kB = static_cast<size_t>(o.rhsContract[0]);
  int64_t m = ta.shape[mDim], n = tb.shape[nDim], k = ta.shape[kA];
  DType acc = *o.acc;
  TensorType tileType = TensorType::make(acc, {rows, columns});
  TensorType panelType = TensorType::make(acc, {k, columns});
  size_t nb = o.lhsBatch.size();
  std::vector<int64_t> panels;
  for (int64_t d : o.lhsBatch)
    panels.push_back(ta.shape[static_cast<size_t>(d)]);
  panels.push_back((n + columns - 1) / columns); // the last may be narrower: its columns past n are padding
  std::vector<StmtPtr> *saved = block_;
  std::vector<Slot> outer = openNest(panels, kEveryLoop);
  std::vector<StmtPtr> *panelBody = block_;
  // Each panel has its own scratch (the panel loop may run on threads).
  Slot tile = allocateScratch(rows * columns * storageBytes(acc), o);
  Slot panel = allocateScratch(k * columns * storageBytes(acc), o);
  // An lhs of another dtype than the accumulator (bf16, f16, fp8) is
  // widened once per tile into rows interleaved by kk, so that the tile's
  // loop converts nothing; an lhs of the accumulator's dtype is read in
  // place (already at the multiply+add peak).
  bool packLhs = ta.dtype != acc;
  TensorType lhsPackType = TensorType::make(acc, {k, rows});
  Slot lhsPack = packLhs ? allocateScratch(k * rows * storageBytes(acc), o) : Slot{0}; // (unused unless packLhs)
  auto batchIndex = [&](std::vector<Ix> &j, const std::vector<int64_t> &batch) {
    for (size_t q = 0; q < nb; ++q)
      j[static_cast<size_t>(batch[q])] = {static_cast<int64_t>(outer[q]), 0, 1};
  };
  Ix panelColumn{static_cast<int64_t>(outer[nb]), 0, columns};
  // The panel's columns within the result: all of them, but in a last
  // panel of n % columns.
  auto width = [&]() -> ExprPtr {
    if (n % columns == 0)
      return i64(columns);
    return makeBinary(BinaryOp::Min, i64(columns),
                      makeBinary(BinaryOp::Sub, i64(n), makeBinary(BinaryOp::Mul, var(outer[nb]), i64(columns))));
  };

  // The panel: rhs[batch, kk, columns * p + c] for each kk and each c
  // within the result, the accumulator's zero past it (products with it
  // are computed but never stored).
  // (The rhs is read element by element, so a transpose or broadcast of it
  // the schedule reads through is never written out.)
  Slot kPack = openLoop(i64(0), i64(k));
  std::vector<StmtPtr> *packRow = block_;
  {
    Slot c = openLoop(i64(0), width());
    Slot resultColumn = newSlot(Type::I64); // columns * p + c
    assign(resultColumn, makeBinary(BinaryOp::Add, makeBinary(BinaryOp::Mul, var(outer[nb]), i64(columns)), var(c)));
    std::vector<Ix> jb(tb.rank());
    batchIndex(jb, o.rhsBatch);
    jb[kB] = {static_cast<int64_t>(kPack), 0, 1};
    jb[nDim] = {static_cast<int64_t>(resultColumn), 0, 1};
    std::vector<Ix> pc = {Ix{static_cast<int64_t>(kPack), 0, 1}, Ix{static_cast<int64_t>(c), 0, 1}};
    storeTo(panel, acc, address(panelType, pc), convert(load(b, jb), tb.dtype, acc));
  }
  if (n % columns != 0) {
    block_ = packRow;
    Slot c = openLoop(width(), i64(columns));
    std::vector<Ix> pc = {Ix{static_cast<int64_t>(kPack), 0, 1}, Ix{static_cast<int64_t>(c), 0, 1}};
    storeTo(panel, acc, address(panelType, pc), identity(ir::Combiner::Sum, acc));
  }

  // One tile of `count` rows from `first` (a counter's multiple, or a
  // constant): its accumulators start at the identity, add round(a * b)
  // for kk = 0, 1, ... in order (the innermost loop over the tile's
  // columns vectorizes; the tile stays in registers), then go to the
  // result: result[batch, first + row, columns * p + c].
  auto tileOf = [&](Ix first, int64_t count) {
    std::vector<StmtPtr> *tileBody = block_;
    std::vector<Ix> all = ixs(openNest({count, columns}));
    storeTo(tile, acc, address(tileType, all), identity(ir::Combiner::Sum, acc));
    block_ = tileBody;
    auto lhsIndex = [&](int64_t row, Slot kk) {
      std::vector<Ix> ja(ta.rank());
      batchIndex(ja, o.lhsBatch);
      ja[mDim] = {first.slot, first.offset + row, first.scale};
      ja[kA] = {static_cast<int64_t>(kk), 0, 1};
      return ja;
    };
    if (packLhs) { // lhsPack[kk, row] = lhs[first + row, kk], widened exactly
      Slot kk = openNest({k})[0];
      for (int64_t row = 0; row < count; ++row)
        storeTo(lhsPack, acc, address(lhsPackType, {Ix{static_cast<int64_t>(kk), 0, 1}, Ix{-1, row, 1}}),
                convert(load(a, lhsIndex(row, kk)), ta.dtype, acc));
      block_ = tileBody;
    }
    Slot kk = openNest({k})[0];
    Slot column = openNest({columns})[0];
    for (int64_t row = 0; row < count; ++row) {
      std::vector<Ix> tileIndex = {Ix{-1, row, 1}, Ix{static_cast<int64_t>(column), 0, 1}};
      std::vector<Ix> panelIndex = {Ix{static_cast<int64_t>(kk), 0, 1}, Ix{static_cast<int64_t>(column), 0, 1}};
      // The product (its rhs already in the accumulator), rounded, then added.
      ExprPtr x = packLhs ? loadFrom(lhsPack, acc, address(lhsPackType, {Ix{static_cast<int64_t>(kk), 0, 1}, Ix{-1, row, 1}}))
                          : load(a, lhsIndex(row, kk));
      ExprPtr term = product(acc, std::move(x), packLhs ? acc : ta.dtype,
                             loadFrom(panel, acc, address(panelType, panelIndex)), acc);
      ExprPtr sum = binaryElement(BinaryOp::Add, acc, loadFrom(tile, acc, address(tileType, tileIndex)), std::move(term));
      storeTo(tile, acc, address(tileType, tileIndex), std::move(sum));
    }
    block_ = tileBody;
    Slot row = openNest({count})[0];
    Slot c = openLoop(i64(0), width());
    std::vector<Ix> jr;
    for (size_t q = 0; q < nb; ++q)
      jr.push_back({static_cast<int64_t>(outer[q]), 0, 1});
    jr.push_back(first);
    jr.push_back(panelColumn);
    std::vector<int64_t> rs = strides(tr);
    ExprPtr at = makeBinary(BinaryOp::Add, address(tr, jr),
                            makeBinary(BinaryOp::Add, makeBinary(BinaryOp::Mul, var(row), i64(rs[nb])),
                                       makeBinary(BinaryOp::Mul, var(c), i64(rs[nb + 1]))));
    std::vector<Ix> rc = {Ix{static_cast<int64_t>(row), 0, 1}, Ix{static_cast<int64_t>(c), 0, 1}};
    store(r, std::move(at), convert(loadFrom(tile, acc, address(tileType, rc)), acc, tr.dtype));
    block_ = tileBody;
  };
  block_ = panelBody;
  if (m / rows > 0) {
    Slot rowTile = openNest({m / rows})[0];
    tileOf({static_cast<int64_t>(rowTile), 0, rows}, rows);
  }
  block_ = panelBody;
  if (m % rows != 0)
    tileOf({-1, m / rows * rows, 1}, m % rows); // the rows past the last whole tile
  block_ = panelBody;
  release(tile);
  release(panel);
  if (packLhs)
    release(lhsPack);
  block_ = saved;
}

} // namespace
} // namespace detail

void lowerScheduled(const ir::Module &m, const Schedule &schedule, Module &out) {
  for (const ir::Function &f : m.functions) {
    auto it = schedule.find(f.name);
    out.functions.push_back(it == schedule.end() ? detail::ReferenceLowering(f, out).run()
                                                 : detail::ScheduledLowering(f, it->second, out).run());
    out.functions.push_back(detail::entryFunction(f, out));
  }
}

} // namespace keel::cpu
