//===- Infer.cpp - Each operation's type rule, once -----------------------===//
//
// One function per operation (`kindRule`, in Ops.def's order; inferResultType
// dispatches): first what its operands and attributes must satisfy (each
// with the message the verifier reports), then the result type it gives.
// Messages name the operation as the IR text spells it.
//
//===----------------------------------------------------------------------===//
#include "keel/ir/Infer.h"

#include "keel/support/Permutation.h"

#include <algorithm>
#include <set>

namespace keel::ir {

namespace {

/// The rule's result, with what a differing declared type is checked against.
Inferred gives(TensorType t, std::string rule, bool computesShape = false) {
  Inferred out;
  out.type = std::move(t);
  out.rule = std::move(rule);
  out.computesShape = computesShape;
  return out;
}

Inferred fails(std::string error) {
  Inferred out;
  out.error = std::move(error);
  return out;
}

/// "`binary.add`: operands: f32[2] and f16[2] differ (...)"
std::string differ(const Op &o, const std::string &what, const TensorType &a, const TensorType &b) {
  return "`" + opName(o) + "`: " + what + ": " + typeText(a) + " and " + typeText(b) +
         " differ (no implicit conversion, broadcast or layout change)";
}

std::string notDefined(const Op &o, DType t) {
  return "`" + opName(o) + "` is not defined for " + std::string(dtypeName(t));
}

/// A type of `dtype` and `shape` in the target's layout (when it has the
/// rank; row-major otherwise, and the verifier reports the difference).
TensorType withTargetLayout(DType dtype, std::vector<int64_t> shape, const TensorType &target) {
  TensorType t = TensorType::make(dtype, std::move(shape));
  if (target.minorToMajor.size() == t.rank())
    t.minorToMajor = target.minorToMajor;
  return t;
}

std::optional<std::string> accumulatorError(const Op &o, DType in) {
  if (!o.acc)
    return "`" + std::string(opInfo(o.kind).mnemonic) + "` needs an explicit accumulator type";
  if (!accumulatorAllowed(in, *o.acc))
    return "`" + opName(o) + "`: accumulator " + std::string(dtypeName(*o.acc)) + " is not allowed for " +
           std::string(dtypeName(in)) + " input";
  return std::nullopt;
}

//===-- One rule per operation, in Ops.def's order ------------------------===//

/// unary: the operand's type; defined per dtype by isLegal (IR.h).
Inferred unaryRule(const Op &o, const std::vector<TensorType> &x, const TensorType &) {
  if (!isLegal(o.unary, x[0].dtype))
    return fails(notDefined(o, x[0].dtype));
  return gives(x[0], "operand and result");
}

/// binary: two operands of one type, and that type.
Inferred binaryRule(const Op &o, const std::vector<TensorType> &x, const TensorType &) {
  if (!(x[0] == x[1]))
    return fails(differ(o, "operands", x[0], x[1]));
  if (!isLegal(o.binary, x[0].dtype))
    return fails(notDefined(o, x[0].dtype));
  return gives(x[0], "operand and result");
}

/// compare: two operands of one type; pred of their shape and layout.
Inferred compareRule(const Op &o, const std::vector<TensorType> &x, const TensorType &) {
  if (!(x[0] == x[1]))
    return fails(differ(o, "operands", x[0], x[1]));
  TensorType t = x[0];
  t.dtype = DType::Bool;
  return gives(t, "the result must be pred of the operands' shape");
}

/// select(cond, a, b): a and b of one type, cond pred of its shape.
Inferred selectRule(const Op &o, const std::vector<TensorType> &x, const TensorType &) {
  TensorType predShape = x[1];
  predShape.dtype = DType::Bool;
  if (!(x[0] == predShape))
    return fails(differ(o, "the condition must be pred of the values' shape", x[0], predShape));
  if (!(x[1] == x[2]))
    return fails(differ(o, "the two values", x[1], x[2]));
  return gives(x[1], "values and result");
}

/// convert: the operand with the target's element type.
Inferred convertRule(const Op &, const std::vector<TensorType> &x, const TensorType &target) {
  TensorType t = x[0];
  t.dtype = target.dtype;
  return gives(t, "convert changes only the element type");
}

/// constant: the target, with one encoding (a splat) or one per element.
Inferred constantRule(const Op &o, const std::vector<TensorType> &, const TensorType &target) {
  int64_t count = target.elementCount().value_or(0);
  if (o.constant.size() != 1 && static_cast<int64_t>(o.constant.size()) != count)
    return fails("`constant` has " + std::to_string(o.constant.size()) + " values for " + std::to_string(count) +
                 " elements (give 1 to splat, or one per element)");
  int bits = encodingBits(target.dtype);
  for (uint64_t v : o.constant)
    if ((bits < 64 && (v >> bits) != 0) || (target.dtype == DType::TF32 && (v & 0x1FFF)))
      return fails("`constant` value is not an encoding of " + std::string(dtypeName(target.dtype)));
  return gives(target, "the constant's type");
}

/// iota: the target, numeric, counting along one of its dimensions.
Inferred iotaRule(const Op &o, const std::vector<TensorType> &, const TensorType &target) {
  if (o.axis < 0 || static_cast<size_t>(o.axis) >= target.rank() || target.dtype == DType::Bool)
    return fails("`iota` needs an axis of the result and a numeric element type");
  return gives(target, "the iota's type");
}

/// broadcast_in_dim: the operand's elements at the target's shape; each
/// operand dimension maps, in increasing order, to a result dimension of
/// the same size or stretches from size 1.
Inferred broadcastInDimRule(const Op &o, const std::vector<TensorType> &x, const TensorType &target) {
  bool ok = o.dims.size() == x[0].rank();
  for (size_t i = 0; ok && i < o.dims.size(); ++i) {
    int64_t d = o.dims[i];
    ok = d >= 0 && static_cast<size_t>(d) < target.rank() && (i == 0 || d > o.dims[i - 1]) &&
         (x[0].shape[i] == target.shape[static_cast<size_t>(d)] || x[0].shape[i] == 1);
  }
  if (!ok)
    return fails("`broadcast_in_dim` dims must map each operand dimension, in increasing order, to a result "
                 "dimension of the same size (or from size 1)");
  return gives(withTargetLayout(x[0].dtype, target.shape, target), "element types");
}

/// reshape: the operand's elements, in row-major order, at the target's
/// shape; the element count is kept.
Inferred reshapeRule(const Op &, const std::vector<TensorType> &x, const TensorType &target) {
  if (x[0].elementCount() != target.elementCount())
    return fails("`reshape` must keep the number of elements: " + typeText(x[0]) + " to " + typeText(target));
  return gives(withTargetLayout(x[0].dtype, target.shape, target), "element types");
}

/// transpose(perm): result dimension i is operand dimension perm[i].
Inferred transposeRule(const Op &o, const std::vector<TensorType> &x, const TensorType &target) {
  if (!isPermutation(o.dims, x[0].rank()))
    return fails("`transpose` perm is not a permutation of the operand's dimensions");
  std::vector<int64_t> shape;
  for (int64_t p : o.dims)
    shape.push_back(x[0].shape[static_cast<size_t>(p)]);
  return gives(withTargetLayout(x[0].dtype, shape, target), "the permuted operand shape", true);
}

/// slice(start, limit): 0 <= start < limit <= size in every dimension;
/// the shape is limit - start.
Inferred sliceRule(const Op &o, const std::vector<TensorType> &x, const TensorType &target) {
  const TensorType &in = x[0];
  if (o.dims.size() != in.rank() || o.limits.size() != in.rank())
    return fails("`slice` needs a start and a limit for each dimension");
  std::vector<int64_t> shape;
  for (size_t i = 0; i < in.rank(); ++i) {
    if (o.dims[i] < 0 || o.dims[i] >= o.limits[i] || o.limits[i] > in.shape[i])
      return fails("`slice` bounds of dimension " + std::to_string(i) + " must satisfy 0 <= start < limit <= " +
                   std::to_string(in.shape[i]));
    shape.push_back(o.limits[i] - o.dims[i]);
  }
  return gives(withTargetLayout(in.dtype, shape, target), "limit - start", true);
}

/// concatenate(axis): operands agree in everything but the axis's size;
/// the result's is their sum.
Inferred concatenateRule(const Op &o, const std::vector<TensorType> &x, const TensorType &target) {
  if (x.empty())
    return fails("`concatenate` needs at least one operand");
  const TensorType &first = x[0];
  if (o.axis < 0 || static_cast<size_t>(o.axis) >= first.rank())
    return fails("`concatenate` axis is not a dimension of its operands");
  std::vector<int64_t> shape = first.shape;
  for (size_t i = 1; i < x.size(); ++i) {
    const TensorType &t = x[i];
    bool ok = t.dtype == first.dtype && t.rank() == first.rank() && t.minorToMajor == first.minorToMajor;
    for (size_t d = 0; ok && d < t.rank(); ++d)
      ok = static_cast<int64_t>(d) == o.axis || t.shape[d] == first.shape[d];
    if (!ok)
      return fails("`concatenate` operands must agree except along the axis: " + typeText(first) + " and " +
                   typeText(t));
    shape[static_cast<size_t>(o.axis)] += t.shape[static_cast<size_t>(o.axis)];
  }
  return gives(withTargetLayout(first.dtype, shape, target), "the operands joined along the axis", true);
}

/// reduce(axes, acc): distinct axes in increasing order; the combiner
/// defined for the input; an allowed accumulator; the shape without the
/// axes; argmax/argmin give i64, the others the target's element type.
Inferred reduceRule(const Op &o, const std::vector<TensorType> &x, const TensorType &target) {
  const TensorType &in = x[0];
  const std::vector<int64_t> &axes = o.dims;
  bool ok = !axes.empty() && std::is_sorted(axes.begin(), axes.end()) &&
            std::adjacent_find(axes.begin(), axes.end()) == axes.end() && axes.front() >= 0 &&
            static_cast<size_t>(axes.back()) < in.rank();
  if (!ok)
    return fails("`reduce` axes must be distinct dimensions of the operand, in increasing order");
  if (!isLegal(o.combiner, in.dtype))
    return fails(notDefined(o, in.dtype));
  if (std::optional<std::string> e = accumulatorError(o, in.dtype))
    return fails(*e);
  if (o.order == SumOrder::Tree && o.combiner != Combiner::Sum)
    return fails("`order = tree` is an order of a sum's terms, so `" + opName(o) +
                 "` cannot take it (reduce.sum and dot_general can)");
  bool index = o.combiner == Combiner::ArgMax || o.combiner == Combiner::ArgMin;
  if (index && target.dtype != DType::I64)
    return fails("`" + opName(o) + "` gives i64 indices, not " + std::string(dtypeName(target.dtype)));
  std::vector<int64_t> shape;
  for (size_t i = 0; i < in.rank(); ++i)
    if (!std::binary_search(axes.begin(), axes.end(), static_cast<int64_t>(i)))
      shape.push_back(in.shape[i]);
  return gives(withTargetLayout(target.dtype, shape, target), "the operand without the reduced axes", true);
}

/// dot_general: operands of one element type (not pred), an allowed
/// accumulator, paired distinct batch and contracting dimensions of equal
/// sizes; the shape is batch, then lhs free, then rhs free dimensions (as
/// XLA); the element type is the target's (the accumulator's or narrower).
Inferred dotGeneralRule(const Op &o, const std::vector<TensorType> &x, const TensorType &target) {
  const TensorType &l = x[0], &r = x[1];
  if (l.dtype != r.dtype)
    return fails(differ(o, "operand element types", l, r));
  if (l.dtype == DType::Bool)
    return fails("`dot_general` is not defined for pred");
  if (std::optional<std::string> e = accumulatorError(o, l.dtype))
    return fails(*e);
  auto valid = [](const std::vector<int64_t> &dims, size_t rank, std::set<int64_t> &used) {
    for (int64_t d : dims)
      if (d < 0 || static_cast<size_t>(d) >= rank || !used.insert(d).second)
        return false;
    return true;
  };
  std::set<int64_t> lUsed, rUsed;
  if (o.lhsBatch.size() != o.rhsBatch.size() || o.lhsContract.size() != o.rhsContract.size() ||
      !valid(o.lhsBatch, l.rank(), lUsed) || !valid(o.lhsContract, l.rank(), lUsed) ||
      !valid(o.rhsBatch, r.rank(), rUsed) || !valid(o.rhsContract, r.rank(), rUsed))
    return fails("`dot_general` batch and contracting dimensions must be distinct dimensions, paired");
  for (size_t i = 0; i < o.lhsBatch.size(); ++i)
    if (l.shape[static_cast<size_t>(o.lhsBatch[i])] != r.shape[static_cast<size_t>(o.rhsBatch[i])])
      return fails("`dot_general` batch dimensions differ in size");
  for (size_t i = 0; i < o.lhsContract.size(); ++i)
    if (l.shape[static_cast<size_t>(o.lhsContract[i])] != r.shape[static_cast<size_t>(o.rhsContract[i])])
      return fails("`dot_general` contracting dimensions differ in size");
  std::vector<int64_t> shape;
  for (int64_t d : o.lhsBatch)
    shape.push_back(l.shape[static_cast<size_t>(d)]);
  for (size_t d = 0; d < l.rank(); ++d)
    if (!lUsed.count(static_cast<int64_t>(d)))
      shape.push_back(l.shape[d]);
  for (size_t d = 0; d < r.rank(); ++d)
    if (!rUsed.count(static_cast<int64_t>(d)))
      shape.push_back(r.shape[d]);
  return gives(withTargetLayout(target.dtype, shape, target), "batch, then lhs free, then rhs free dimensions",
               true);
}

/// copy: the operand's type.
Inferred copyRule(const Op &, const std::vector<TensorType> &x, const TensorType &) {
  return gives(x[0], "operand and result");
}

/// relayout: the operand with the target's layout.
Inferred relayoutRule(const Op &, const std::vector<TensorType> &x, const TensorType &target) {
  TensorType t = x[0];
  t.minorToMajor = target.minorToMajor;
  return gives(t, "relayout changes only the layout");
}

} // namespace

std::string opName(const Op &o) {
  std::string m(opInfo(o.kind).mnemonic);
  switch (o.kind) {
  case OpKind::Unary: return m + "." + std::string(unaryName(o.unary));
  case OpKind::Binary: return m + "." + std::string(binaryName(o.binary));
  case OpKind::Compare: return m + "." + std::string(compareName(o.compare));
  case OpKind::Reduce: return m + "." + std::string(combinerName(o.combiner));
  case OpKind::Select: case OpKind::Convert: case OpKind::Constant: case OpKind::Iota:
  case OpKind::BroadcastInDim: case OpKind::Reshape: case OpKind::Transpose: case OpKind::Slice:
  case OpKind::Concatenate: case OpKind::DotGeneral: case OpKind::Copy: case OpKind::Relayout: case OpKind::Call:
  case OpKind::Return: case OpKind::Fusion:
    return m;
  }
  return m;
}

Inferred inferResultType(const Op &o, const std::vector<TensorType> &x, const TensorType &target) {
  switch (o.kind) {
  case OpKind::Unary: return unaryRule(o, x, target);
  case OpKind::Binary: return binaryRule(o, x, target);
  case OpKind::Compare: return compareRule(o, x, target);
  case OpKind::Select: return selectRule(o, x, target);
  case OpKind::Convert: return convertRule(o, x, target);
  case OpKind::Constant: return constantRule(o, x, target);
  case OpKind::Iota: return iotaRule(o, x, target);
  case OpKind::BroadcastInDim: return broadcastInDimRule(o, x, target);
  case OpKind::Reshape: return reshapeRule(o, x, target);
  case OpKind::Transpose: return transposeRule(o, x, target);
  case OpKind::Slice: return sliceRule(o, x, target);
  case OpKind::Concatenate: return concatenateRule(o, x, target);
  case OpKind::Reduce: return reduceRule(o, x, target);
  case OpKind::DotGeneral: return dotGeneralRule(o, x, target);
  case OpKind::Copy: return copyRule(o, x, target);
  case OpKind::Relayout: return relayoutRule(o, x, target);
  case OpKind::Call: case OpKind::Return: case OpKind::Fusion:
    break; // typed by their callee, function or region (the verifier's checks)
  }
  return fails("`" + opName(o) + "` has no result type rule of its own");
}

} // namespace keel::ir
