//===- LowerScheduled.cpp - The loop orders a CPU schedule asks for -------===//
//
// The members of FunctionLowering that realize Schedule.h's faster loop
// orders for contractions, and the buffers that values a schedule never
// stores (splats, broadcasts read through) get when a call or a tiled
// contraction needs one. Each computes exactly the bits of the reference:
// every result element starts at the identity and adds round(a * b) for
// its contracting indices in order; only the order in which independent
// elements are visited changes.
//
//===----------------------------------------------------------------------===//
#include "TensorLowering.h"

#include "keel/loop/LowerTensor.h"

namespace keel::loop::detail {

Slot FunctionLowering::bufferOf(ValueId v, const ir::Op &user) {
  if (auto it = buffer_.find(v); it != buffer_.end())
    return it->second;
  define(v, user); // loads of v still read its splat or its broadcast operand
  std::vector<StmtPtr> *saved = block_;
  std::vector<Ix> index = ixs(openNest(type(v).shape));
  store(v, address(type(v), index), load(v, index));
  block_ = saved;
  return buffer_.at(v);
}

void FunctionLowering::rhsFreeInnerContraction(const ir::Op &o) {
  ValueId a = o.operands[0], b = o.operands[1], r = o.results[0];
  const TensorType &ta = type(a), &tb = type(b), &tr = type(r);
  DType acc = *o.acc;
  TensorType accType = tr; // the result's shape and layout, the accumulator's dtype
  accType.dtype = acc;
  Slot accBuffer = buffer_.at(r);
  bool separate = acc != tr.dtype;
  if (separate)
    accBuffer = allocateScratch(*accType.elementCount() * storageBytes(acc), o);
  std::vector<StmtPtr> *saved = block_;
  std::vector<Ix> all = ixs(openNest(tr.shape));
  storeTo(accBuffer, acc, address(accType, all), identity(ir::Combiner::Sum, acc));
  block_ = saved;

  std::vector<int64_t> lhsFree = freeDims(ta, o.lhsBatch, o.lhsContract);
  std::vector<int64_t> rhsFree = freeDims(tb, o.rhsBatch, o.rhsContract);
  std::vector<int64_t> shape;
  for (int64_t d : o.lhsBatch) shape.push_back(ta.shape[static_cast<size_t>(d)]);
  for (int64_t d : lhsFree) shape.push_back(ta.shape[static_cast<size_t>(d)]);
  for (int64_t d : o.lhsContract) shape.push_back(ta.shape[static_cast<size_t>(d)]);
  for (int64_t d : rhsFree) shape.push_back(tb.shape[static_cast<size_t>(d)]);
  std::vector<Slot> loops = openNest(shape);
  size_t nb = o.lhsBatch.size(), nl = lhsFree.size(), nc = o.lhsContract.size();
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
  // The product, rounded to the accumulator, then added: no fused multiply-add.
  ExprPtr product = binaryElement(BinaryOp::Mul, acc, convert(load(a, ja), ta.dtype, acc),
                                  convert(load(b, jb), tb.dtype, acc));
  ExprPtr sum = binaryElement(BinaryOp::Add, acc, loadFrom(accBuffer, acc, address(accType, jr)), std::move(product));
  storeTo(accBuffer, acc, address(accType, jr), std::move(sum));
  block_ = saved;

  if (separate) {
    std::vector<Ix> i = ixs(openNest(tr.shape));
    store(r, address(tr, i), convert(loadFrom(accBuffer, acc, address(accType, i)), acc, tr.dtype));
    block_ = saved;
    release(accBuffer);
  }
}

bool FunctionLowering::tiledContraction(const ir::Op &o) {
  ValueId a = o.operands[0], b = o.operands[1], r = o.results[0];
  const TensorType &ta = type(a), &tb = type(b), &tr = type(r);
  std::vector<int64_t> lhsFree = freeDims(ta, o.lhsBatch, o.lhsContract);
  std::vector<int64_t> rhsFree = freeDims(tb, o.rhsBatch, o.rhsContract);
  if (o.lhsContract.size() != 1 || lhsFree.size() != 1 || rhsFree.size() != 1)
    return false;
  size_t mDim = static_cast<size_t>(lhsFree[0]), nDim = static_cast<size_t>(rhsFree[0]);
  size_t kA = static_cast<size_t>(o.lhsContract[0]), kB = static_cast<size_t>(o.rhsContract[0]);
  int64_t m = ta.shape[mDim], n = tb.shape[nDim], k = ta.shape[kA];
  if (m % kTileRows != 0 || n % kTileColumns != 0)
    return false;
  DType acc = *o.acc;
  TensorType tileType = TensorType::make(acc, {kTileRows, kTileColumns});
  TensorType panelType = TensorType::make(acc, {k, kTileColumns});
  Slot rhs = bufferOf(b, o);
  Slot tile = allocateScratch(kTileRows * kTileColumns * storageBytes(acc), o);
  Slot panel = allocateScratch(k * kTileColumns * storageBytes(acc), o);
  size_t nb = o.lhsBatch.size();
  std::vector<int64_t> panels;
  for (int64_t d : o.lhsBatch)
    panels.push_back(ta.shape[static_cast<size_t>(d)]);
  panels.push_back(n / kTileColumns);
  std::vector<StmtPtr> *saved = block_;
  std::vector<Slot> outer = openNest(panels);
  std::vector<StmtPtr> *panelBody = block_;
  auto batchIndex = [&](std::vector<Ix> &j, const std::vector<int64_t> &batch) {
    for (size_t q = 0; q < nb; ++q)
      j[static_cast<size_t>(batch[q])] = {static_cast<int64_t>(outer[q]), 0, 1};
  };
  Ix panelColumn{static_cast<int64_t>(outer[nb]), 0, kTileColumns};

  // The panel: rhs[batch, kk, 16 * p + c] for every kk and c.
  std::vector<Ix> pc = ixs(openNest({k, kTileColumns}));
  {
    std::vector<Ix> jb(tb.rank());
    batchIndex(jb, o.rhsBatch);
    jb[kB] = pc[0];
    jb[nDim] = panelColumn;
    ExprPtr at = makeBinary(BinaryOp::Add, address(tb, jb),
                            makeBinary(BinaryOp::Mul, var(static_cast<Slot>(pc[1].slot)), i64(strides(tb)[nDim])));
    storeTo(panel, acc, address(panelType, pc), convert(loadFrom(rhs, tb.dtype, std::move(at)), tb.dtype, acc));
  }
  block_ = panelBody;
  Slot rowTile = openNest({m / kTileRows})[0];
  std::vector<StmtPtr> *tileBody = block_;
  std::vector<Ix> all = ixs(openNest({kTileRows, kTileColumns}));
  storeTo(tile, acc, address(tileType, all), identity(ir::Combiner::Sum, acc));
  block_ = tileBody;
  Slot kk = openNest({k})[0];
  Slot column = openNest({kTileColumns})[0];
  for (int64_t row = 0; row < kTileRows; ++row) {
    std::vector<Ix> ja(ta.rank());
    batchIndex(ja, o.lhsBatch);
    ja[mDim] = {static_cast<int64_t>(rowTile), row, kTileRows};
    ja[kA] = {static_cast<int64_t>(kk), 0, 1};
    std::vector<Ix> tileIndex = {Ix{-1, row, 1}, Ix{static_cast<int64_t>(column), 0, 1}};
    std::vector<Ix> panelIndex = {Ix{static_cast<int64_t>(kk), 0, 1}, Ix{static_cast<int64_t>(column), 0, 1}};
    // The product, rounded to the accumulator, then added: no fused multiply-add.
    ExprPtr product = binaryElement(BinaryOp::Mul, acc, convert(load(a, ja), ta.dtype, acc),
                                    loadFrom(panel, acc, address(panelType, panelIndex)));
    ExprPtr sum = binaryElement(BinaryOp::Add, acc, loadFrom(tile, acc, address(tileType, tileIndex)), std::move(product));
    storeTo(tile, acc, address(tileType, tileIndex), std::move(sum));
  }
  // The tile into the result: result[batch, 4 * t + row, 16 * p + c].
  block_ = tileBody;
  std::vector<Ix> rc = ixs(openNest({kTileRows, kTileColumns}));
  std::vector<Ix> jr;
  for (size_t q = 0; q < nb; ++q)
    jr.push_back({static_cast<int64_t>(outer[q]), 0, 1});
  jr.push_back({static_cast<int64_t>(rowTile), 0, kTileRows});
  jr.push_back(panelColumn);
  std::vector<int64_t> rs = strides(tr);
  ExprPtr at = makeBinary(BinaryOp::Add, address(tr, jr),
                          makeBinary(BinaryOp::Add, makeBinary(BinaryOp::Mul, var(static_cast<Slot>(rc[0].slot)), i64(rs[nb])),
                                     makeBinary(BinaryOp::Mul, var(static_cast<Slot>(rc[1].slot)), i64(rs[nb + 1]))));
  store(r, std::move(at), convert(loadFrom(tile, acc, address(tileType, rc)), acc, tr.dtype));
  block_ = saved;
  release(tile);
  release(panel);
  return true;
}

} // namespace keel::loop::detail
