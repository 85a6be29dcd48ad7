//===- Verifier.cpp - One check per rule, each with its message ----------===//
#include "keel/ir/Verifier.h"

#include <algorithm>
#include <map>
#include <set>

namespace keel::ir {

namespace {

class Verifier {
public:
  Verifier(const Module &m, std::vector<VerifierError> &errors) : m_(m), errors_(errors) {}

  void function(const Function &f) {
    f_ = &f;
    defined_.assign(f.valueTypes.size(), false);
    for (ValueId p : f.params)
      define(p, nullptr);
    for (const TensorType &t : f.resultTypes)
      checkType(t, nullptr, "a result type of @" + f.name);
    if (f.ops.empty() || f.ops.back().kind != OpKind::Return)
      error(nullptr, "@" + f.name + " does not end with `return`");
    for (size_t i = 0; i < f.ops.size(); ++i) {
      if (f.ops[i].kind == OpKind::Return && i + 1 != f.ops.size())
        error(&f.ops[i], "`return` before the end of @" + f.name);
      op(f.ops[i], f.resultTypes, /*inRegion=*/false);
    }
  }

private:
  void error(const Op *op, std::string message) { errors_.push_back({f_, op, std::move(message)}); }

  const TensorType &typeOf(ValueId v) const { return f_->valueTypes[v]; }

  bool define(ValueId v, const Op *op) {
    if (v >= defined_.size()) {
      error(op, "value id " + std::to_string(v) + " is not a value of @" + f_->name);
      return false;
    }
    if (defined_[v]) {
      error(op, "a value is defined twice");
      return false;
    }
    defined_[v] = true;
    checkType(typeOf(v), op, "a value's type");
    return true;
  }

  bool checkType(const TensorType &t, const Op *op, const std::string &what) {
    for (int64_t d : t.shape)
      if (d <= 0) {
        error(op, what + " " + typeText(t) + " has a dimension that is not positive");
        return false;
      }
    if (!t.elementCount()) {
      error(op, what + " " + typeText(t) + " has more elements than int64 can count");
      return false;
    }
    if (!t.byteCount()) { // every later stage addresses the tensor's bytes with int64
      error(op, what + " " + typeText(t) + " has more bytes than int64 can count");
      return false;
    }
    std::vector<int64_t> sorted = t.minorToMajor;
    std::sort(sorted.begin(), sorted.end());
    bool permutation = sorted.size() == t.rank();
    for (size_t i = 0; permutation && i < sorted.size(); ++i)
      permutation = sorted[i] == static_cast<int64_t>(i);
    if (!permutation) {
      error(op, what + " " + typeText(t) + " has a layout that is not a permutation of its dimensions");
      return false;
    }
    return true;
  }

  std::string mn(const Op &op) const {
    std::string m(opInfo(op.kind).mnemonic);
    switch (op.kind) {
    case OpKind::Unary: return m + "." + std::string(unaryName(op.unary));
    case OpKind::Binary: return m + "." + std::string(binaryName(op.binary));
    case OpKind::Compare: return m + "." + std::string(compareName(op.compare));
    case OpKind::Reduce: return m + "." + std::string(combinerName(op.combiner));
    default: return m;
    }
  }

  void op(const Op &o, const std::vector<TensorType> &returnTypes, bool inRegion) {
    const OpInfo &info = opInfo(o.kind);
    // Stage 1: structure.
    for (ValueId v : o.operands)
      if (v >= defined_.size() || !defined_[v]) {
        error(&o, "`" + mn(o) + "` uses a value before its definition (or from another function)");
        return;
      }
    if (info.operands >= 0 && o.operands.size() != static_cast<size_t>(info.operands)) {
      error(&o, "`" + mn(o) + "` takes " + std::to_string(info.operands) + " operands, not " +
                    std::to_string(o.operands.size()));
      return;
    }
    if (info.results >= 0 && o.results.size() != static_cast<size_t>(info.results)) {
      error(&o, "`" + mn(o) + "` has " + std::to_string(info.results) + " results, not " +
                    std::to_string(o.results.size()));
      return;
    }
    if (o.results.size() != o.resultTypes.size()) {
      error(&o, "`" + mn(o) + "` names " + std::to_string(o.results.size()) + " results but types " +
                    std::to_string(o.resultTypes.size()));
      return;
    }
    if (inRegion && !info.fusible && o.kind != OpKind::Return)
      error(&o, "`" + mn(o) + "` cannot be inside a fusion region");
    if (o.kind == OpKind::Fusion)
      region(o); // defines the region's values before the results
    for (ValueId r : o.results)
      if (!define(r, &o))
        return;
    // Stage 2: the operation's rule.
    rule(o, returnTypes);
  }

  void region(const Op &o) {
    if (!o.region) {
      error(&o, "`fusion` has no region");
      return;
    }
    if (o.region->params.size() != o.operands.size()) {
      error(&o, "the fusion region has " + std::to_string(o.region->params.size()) + " parameters for " +
                    std::to_string(o.operands.size()) + " operands");
      return;
    }
    // Values of the enclosing function are not visible inside: verify the
    // region with only its parameters defined, then restore.
    std::vector<bool> outside = defined_;
    std::fill(defined_.begin(), defined_.end(), false);
    for (size_t i = 0; i < o.region->params.size(); ++i) {
      ValueId p = o.region->params[i];
      if (!define(p, &o))
        break;
      if (!(typeOf(p) == typeOf(o.operands[i])))
        error(&o, "fusion parameter " + std::to_string(i) + " is " + typeText(typeOf(p)) + " but its operand is " +
                      typeText(typeOf(o.operands[i])));
    }
    const std::vector<Op> &ops = o.region->ops;
    if (ops.empty() || ops.back().kind != OpKind::Return)
      error(&o, "the fusion region does not end with `return`");
    for (const Op &inner : ops)
      op(inner, o.resultTypes, /*inRegion=*/true);
    // A region's values stay inside it: outside they are undefined, so a
    // use there is reported like any use before definition.
    defined_ = outside;
  }

  bool same(const Op &o, const TensorType &a, const TensorType &b, const std::string &what) {
    if (a == b)
      return true;
    error(&o, "`" + mn(o) + "`: " + what + ": " + typeText(a) + " and " + typeText(b) +
                  " differ (no implicit conversion, broadcast or layout change)");
    return false;
  }

  void rule(const Op &o, const std::vector<TensorType> &returnTypes) {
    auto operand = [&](size_t i) -> const TensorType & { return typeOf(o.operands[i]); };
    const TensorType *result = o.resultTypes.empty() ? nullptr : &o.resultTypes[0];
    auto shapeIs = [&](const std::vector<int64_t> &shape, const char *rule) {
      if (result->shape == shape)
        return true;
      TensorType expected = TensorType::make(result->dtype, shape);
      error(&o, "`" + mn(o) + "` must give shape " + typeText(expected).substr(typeText(expected).find('[')) +
                    " (" + rule + "), not " + typeText(*result));
      return false;
    };
    switch (o.kind) {
    case OpKind::Unary:
      if (same(o, operand(0), *result, "operand and result") && !isLegal(o.unary, result->dtype))
        error(&o, "`" + mn(o) + "` is not defined for " + std::string(dtypeName(result->dtype)));
      return;
    case OpKind::Binary:
      if (same(o, operand(0), operand(1), "operands") && same(o, operand(0), *result, "operand and result") &&
          !isLegal(o.binary, result->dtype))
        error(&o, "`" + mn(o) + "` is not defined for " + std::string(dtypeName(result->dtype)));
      return;
    case OpKind::Compare:
      if (same(o, operand(0), operand(1), "operands")) {
        TensorType expected = operand(0);
        expected.dtype = DType::Bool;
        same(o, *result, expected, "the result must be pred of the operands' shape");
      }
      return;
    case OpKind::Select: {
      TensorType predShape = operand(1);
      predShape.dtype = DType::Bool;
      same(o, operand(0), predShape, "the condition must be pred of the values' shape");
      if (same(o, operand(1), operand(2), "the two values"))
        same(o, operand(1), *result, "values and result");
      return;
    }
    case OpKind::Convert: {
      TensorType expected = operand(0);
      expected.dtype = result->dtype;
      same(o, *result, expected, "convert changes only the element type");
      return;
    }
    case OpKind::Constant: {
      int64_t count = result->elementCount().value_or(0);
      if (o.constant.size() != 1 && static_cast<int64_t>(o.constant.size()) != count) {
        error(&o, "`constant` has " + std::to_string(o.constant.size()) + " values for " + std::to_string(count) +
                      " elements (give 1 to splat, or one per element)");
        return;
      }
      int bits = encodingBits(result->dtype);
      for (uint64_t v : o.constant)
        if ((bits < 64 && (v >> bits) != 0) || (result->dtype == DType::TF32 && (v & 0x1FFF))) {
          error(&o, "`constant` value is not an encoding of " + std::string(dtypeName(result->dtype)));
          return;
        }
      return;
    }
    case OpKind::Iota:
      if (o.axis < 0 || static_cast<size_t>(o.axis) >= result->rank() || result->dtype == DType::Bool)
        error(&o, "`iota` needs an axis of the result and a numeric element type");
      return;
    case OpKind::BroadcastInDim: {
      const TensorType &in = operand(0);
      if (in.dtype != result->dtype) {
        same(o, in, *result, "element types");
        return;
      }
      bool ok = o.dims.size() == in.rank();
      for (size_t i = 0; ok && i < o.dims.size(); ++i) {
        int64_t d = o.dims[i];
        ok = d >= 0 && static_cast<size_t>(d) < result->rank() && (i == 0 || d > o.dims[i - 1]) &&
             (in.shape[i] == result->shape[static_cast<size_t>(d)] || in.shape[i] == 1);
      }
      if (!ok)
        error(&o, "`broadcast_in_dim` dims must map each operand dimension, in increasing order, to a result "
                  "dimension of the same size (or from size 1)");
      return;
    }
    case OpKind::Reshape:
      if (operand(0).dtype != result->dtype)
        same(o, operand(0), *result, "element types");
      else if (operand(0).elementCount() != result->elementCount())
        error(&o, "`reshape` must keep the number of elements: " + typeText(operand(0)) + " to " + typeText(*result));
      return;
    case OpKind::Transpose: {
      const TensorType &in = operand(0);
      std::vector<int64_t> sorted = o.dims;
      std::sort(sorted.begin(), sorted.end());
      bool permutation = sorted.size() == in.rank();
      for (size_t i = 0; permutation && i < sorted.size(); ++i)
        permutation = sorted[i] == static_cast<int64_t>(i);
      if (!permutation) {
        error(&o, "`transpose` perm is not a permutation of the operand's dimensions");
        return;
      }
      std::vector<int64_t> shape;
      for (int64_t p : o.dims)
        shape.push_back(in.shape[static_cast<size_t>(p)]);
      if (in.dtype != result->dtype)
        same(o, in, *result, "element types");
      else
        shapeIs(shape, "the permuted operand shape");
      return;
    }
    case OpKind::Slice: {
      const TensorType &in = operand(0);
      if (o.dims.size() != in.rank() || o.limits.size() != in.rank()) {
        error(&o, "`slice` needs a start and a limit for each dimension");
        return;
      }
      std::vector<int64_t> shape;
      for (size_t i = 0; i < in.rank(); ++i) {
        if (o.dims[i] < 0 || o.dims[i] >= o.limits[i] || o.limits[i] > in.shape[i]) {
          error(&o, "`slice` bounds of dimension " + std::to_string(i) + " must satisfy 0 <= start < limit <= " +
                        std::to_string(in.shape[i]));
          return;
        }
        shape.push_back(o.limits[i] - o.dims[i]);
      }
      if (in.dtype != result->dtype)
        same(o, in, *result, "element types");
      else
        shapeIs(shape, "limit - start");
      return;
    }
    case OpKind::Concatenate: {
      if (o.operands.empty()) {
        error(&o, "`concatenate` needs at least one operand");
        return;
      }
      const TensorType &first = operand(0);
      if (o.axis < 0 || static_cast<size_t>(o.axis) >= first.rank()) {
        error(&o, "`concatenate` axis is not a dimension of its operands");
        return;
      }
      std::vector<int64_t> shape = first.shape;
      for (size_t i = 1; i < o.operands.size(); ++i) {
        const TensorType &t = operand(i);
        bool ok = t.dtype == first.dtype && t.rank() == first.rank() && t.minorToMajor == first.minorToMajor;
        for (size_t d = 0; ok && d < t.rank(); ++d)
          ok = static_cast<int64_t>(d) == o.axis || t.shape[d] == first.shape[d];
        if (!ok) {
          error(&o, "`concatenate` operands must agree except along the axis: " + typeText(first) + " and " +
                        typeText(t));
          return;
        }
        shape[static_cast<size_t>(o.axis)] += t.shape[static_cast<size_t>(o.axis)];
      }
      if (first.dtype != result->dtype)
        same(o, first, *result, "element types");
      else
        shapeIs(shape, "the operands joined along the axis");
      return;
    }
    case OpKind::Reduce: {
      const TensorType &in = operand(0);
      std::vector<int64_t> axes = o.dims;
      bool ok = !axes.empty() && std::is_sorted(axes.begin(), axes.end()) &&
                std::adjacent_find(axes.begin(), axes.end()) == axes.end() && axes.front() >= 0 &&
                static_cast<size_t>(axes.back()) < in.rank();
      if (!ok) {
        error(&o, "`reduce` axes must be distinct dimensions of the operand, in increasing order");
        return;
      }
      if (!isLegal(o.combiner, in.dtype)) {
        error(&o, "`" + mn(o) + "` is not defined for " + std::string(dtypeName(in.dtype)));
        return;
      }
      if (!o.acc) {
        error(&o, "`reduce` needs an explicit accumulator type");
        return;
      }
      if (!accumulatorOk(in.dtype, *o.acc, o))
        return;
      bool index = o.combiner == Combiner::ArgMax || o.combiner == Combiner::ArgMin;
      if (index && result->dtype != DType::I64)
        error(&o, "`" + mn(o) + "` gives i64 indices, not " + std::string(dtypeName(result->dtype)));
      std::vector<int64_t> shape;
      for (size_t i = 0; i < in.rank(); ++i)
        if (!std::binary_search(axes.begin(), axes.end(), static_cast<int64_t>(i)))
          shape.push_back(in.shape[i]);
      shapeIs(shape, "the operand without the reduced axes");
      return;
    }
    case OpKind::DotGeneral: {
      const TensorType &l = operand(0), &r = operand(1);
      if (l.dtype != r.dtype) {
        same(o, l, r, "operand element types");
        return;
      }
      if (l.dtype == DType::Bool) { // products and sums of pred are not defined
        error(&o, "`dot_general` is not defined for pred");
        return;
      }
      if (!o.acc) {
        error(&o, "`dot_general` needs an explicit accumulator type");
        return;
      }
      if (!accumulatorOk(l.dtype, *o.acc, o))
        return;
      auto valid = [](const std::vector<int64_t> &dims, size_t rank, std::set<int64_t> &used) {
        for (int64_t d : dims)
          if (d < 0 || static_cast<size_t>(d) >= rank || !used.insert(d).second)
            return false;
        return true;
      };
      std::set<int64_t> lUsed, rUsed;
      if (o.lhsBatch.size() != o.rhsBatch.size() || o.lhsContract.size() != o.rhsContract.size() ||
          !valid(o.lhsBatch, l.rank(), lUsed) || !valid(o.lhsContract, l.rank(), lUsed) ||
          !valid(o.rhsBatch, r.rank(), rUsed) || !valid(o.rhsContract, r.rank(), rUsed)) {
        error(&o, "`dot_general` batch and contracting dimensions must be distinct dimensions, paired");
        return;
      }
      for (size_t i = 0; i < o.lhsBatch.size(); ++i)
        if (l.shape[static_cast<size_t>(o.lhsBatch[i])] != r.shape[static_cast<size_t>(o.rhsBatch[i])]) {
          error(&o, "`dot_general` batch dimensions differ in size");
          return;
        }
      for (size_t i = 0; i < o.lhsContract.size(); ++i)
        if (l.shape[static_cast<size_t>(o.lhsContract[i])] != r.shape[static_cast<size_t>(o.rhsContract[i])]) {
          error(&o, "`dot_general` contracting dimensions differ in size");
          return;
        }
      // Result: batch dimensions, then lhs free, then rhs free (as XLA).
      std::vector<int64_t> shape;
      for (int64_t d : o.lhsBatch)
        shape.push_back(l.shape[static_cast<size_t>(d)]);
      for (size_t d = 0; d < l.rank(); ++d)
        if (!lUsed.count(static_cast<int64_t>(d)))
          shape.push_back(l.shape[d]);
      for (size_t d = 0; d < r.rank(); ++d)
        if (!rUsed.count(static_cast<int64_t>(d)))
          shape.push_back(r.shape[d]);
      shapeIs(shape, "batch, then lhs free, then rhs free dimensions");
      return;
    }
    case OpKind::Copy:
      same(o, operand(0), *result, "operand and result");
      return;
    case OpKind::Relayout: {
      TensorType expected = operand(0);
      expected.minorToMajor = result->minorToMajor;
      same(o, *result, expected, "relayout changes only the layout");
      return;
    }
    case OpKind::Call: {
      const Function *callee = m_.find(o.callee);
      if (!callee) {
        error(&o, "call to unknown function @" + o.callee);
        return;
      }
      if (callee->params.size() != o.operands.size()) {
        error(&o, "@" + o.callee + " takes " + std::to_string(callee->params.size()) + " arguments, not " +
                      std::to_string(o.operands.size()));
        return;
      }
      for (size_t i = 0; i < o.operands.size(); ++i)
        same(o, operand(i), callee->valueTypes[callee->params[i]], "argument " + std::to_string(i) + " and parameter");
      if (o.resultTypes.size() != callee->resultTypes.size()) {
        error(&o, "@" + o.callee + " returns " + std::to_string(callee->resultTypes.size()) + " values, not " +
                      std::to_string(o.resultTypes.size()));
        return;
      }
      for (size_t i = 0; i < o.resultTypes.size(); ++i)
        same(o, o.resultTypes[i], callee->resultTypes[i], "result " + std::to_string(i) + " and the callee's");
      return;
    }
    case OpKind::Return:
      if (o.operands.size() != returnTypes.size()) {
        error(&o, "`return` of " + std::to_string(o.operands.size()) + " values where " +
                      std::to_string(returnTypes.size()) + " are declared");
        return;
      }
      for (size_t i = 0; i < o.operands.size(); ++i)
        same(o, operand(i), returnTypes[i], "returned value " + std::to_string(i) + " and the declared type");
      return;
    case OpKind::Fusion:
      return; // checked by region()
    }
  }

  /// SFEP-0054 §3.6: low precision accumulates in f32 or f64; otherwise an
  /// accumulator of the input's kind, at least as wide.
  bool accumulatorOk(DType in, DType acc, const Op &o) {
    bool lowPrecision = isFloatType(in) && in != DType::F32 && in != DType::F64;
    bool ok = lowPrecision ? (acc == DType::F32 || acc == DType::F64)
              : in == DType::Bool ? acc == DType::Bool
              : isFloatType(in) == isFloatType(acc) && isSignedType(in) == isSignedType(acc) &&
                    encodingBits(acc) >= encodingBits(in);
    if (!ok)
      error(&o, "`" + mn(o) + "`: accumulator " + std::string(dtypeName(acc)) + " is not allowed for " +
                    std::string(dtypeName(in)) + " input");
    return ok;
  }

  const Module &m_;
  std::vector<VerifierError> &errors_;
  const Function *f_ = nullptr;
  std::vector<bool> defined_;
};

} // namespace

namespace {

/// Each call op of `ops`, fusion regions included.
void collectCalls(const std::vector<Op> &ops, std::vector<const Op *> &calls) {
  for (const Op &o : ops) {
    if (o.kind == OpKind::Call)
      calls.push_back(&o);
    if (o.region)
      collectCalls(o.region->ops, calls);
  }
}

/// The IR has no control flow, so a function that calls itself, directly or
/// through others, could never return: each call cycle is an error, reported
/// at the call that closes it.
void checkCallCycles(const Module &m, std::vector<VerifierError> &errors) {
  std::map<std::string, const Function *> byName;
  for (const Function &f : m.functions)
    byName.emplace(f.name, &f);
  enum class Mark { New, Active, Done };
  std::map<const Function *, Mark> mark;
  // Depth-first with an explicit stack: (function, its calls, next call).
  struct Frame {
    const Function *f;
    std::vector<const Op *> calls;
    size_t next = 0;
  };
  for (const Function &root : m.functions) {
    if (mark[&root] != Mark::New)
      continue;
    std::vector<Frame> stack;
    auto enter = [&](const Function *f) {
      mark[f] = Mark::Active;
      Frame frame{f, {}, 0};
      collectCalls(f->ops, frame.calls);
      stack.push_back(std::move(frame));
    };
    enter(&root);
    while (!stack.empty()) {
      Frame &top = stack.back();
      if (top.next == top.calls.size()) {
        mark[top.f] = Mark::Done;
        stack.pop_back();
        continue;
      }
      const Op *call = top.calls[top.next++];
      auto it = byName.find(call->callee);
      if (it == byName.end())
        continue; // an unknown callee is reported with the call
      const Function *callee = it->second;
      if (mark[callee] == Mark::Active) {
        std::string cycle;
        bool in = false;
        for (const Frame &fr : stack) {
          in = in || fr.f == callee;
          if (in)
            cycle += "@" + fr.f->name + " -> ";
        }
        errors.push_back({top.f, call, "call cycle " + cycle + "@" + callee->name +
                                           ": tensor IR has no control flow, so a recursive call never returns"});
      } else if (mark[callee] == Mark::New) {
        enter(callee); // invalidates `top`
      }
    }
  }
}

} // namespace

std::vector<VerifierError> verify(const Module &m) {
  std::vector<VerifierError> errors;
  std::set<std::string> names;
  Verifier v(m, errors);
  for (const Function &f : m.functions) {
    if (!names.insert(f.name).second)
      errors.push_back({&f, nullptr, "function @" + f.name + " is defined twice"});
    v.function(f);
  }
  checkCallCycles(m, errors);
  return errors;
}

} // namespace keel::ir
