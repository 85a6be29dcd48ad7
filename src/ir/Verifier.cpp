//===- Verifier.cpp - One check per rule, each with its message ----------===//
#include "keel/ir/Verifier.h"

#include "keel/ir/Infer.h"
#include "keel/support/Permutation.h"

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

  /// The results of an op already reported as malformed, defined so that
  /// their uses report nothing more (one problem, one diagnostic).
  void defineQuietly(const Op &o) {
    for (ValueId r : o.results)
      if (r < defined_.size())
        defined_[r] = true;
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
    if (!isPermutation(t.minorToMajor, t.rank())) {
      error(op, what + " " + typeText(t) + " has a layout that is not a permutation of its dimensions");
      return false;
    }
    return true;
  }

  void op(const Op &o, const std::vector<TensorType> &returnTypes, bool inRegion) {
    const OpInfo &info = opInfo(o.kind);
    // Stage 1: structure.
    for (ValueId v : o.operands)
      if (v >= defined_.size() || !defined_[v]) {
        error(&o, "`" + opName(o) + "` uses a value before its definition (or from another function)");
        defineQuietly(o);
        return;
      }
    if (info.operands >= 0 && o.operands.size() != static_cast<size_t>(info.operands)) {
      error(&o, "`" + opName(o) + "` takes " + std::to_string(info.operands) + " operands, not " +
                    std::to_string(o.operands.size()));
      defineQuietly(o);
      return;
    }
    if (info.results >= 0 && o.results.size() != static_cast<size_t>(info.results)) {
      error(&o, "`" + opName(o) + "` has " + std::to_string(info.results) + " results, not " +
                    std::to_string(o.results.size()));
      return;
    }
    if (o.results.size() != o.resultTypes.size()) {
      error(&o, "`" + opName(o) + "` names " + std::to_string(o.results.size()) + " results but types " +
                    std::to_string(o.resultTypes.size()));
      return;
    }
    if (inRegion && !info.fusible() && o.kind != OpKind::Return)
      error(&o, "`" + opName(o) + "` cannot be inside a fusion region");
    if (o.kind == OpKind::Fusion)
      region(o); // defines the region's values before the results
    for (ValueId r : o.results)
      if (!define(r, &o))
        return;
    // Stage 2: the operation's rule.
    if (o.guarded && !guardable(o))
      error(&o, "`" + opName(o) + "` cannot be `guarded` (only an integer division or remainder, or a conversion "
                "from a float to an integer or into fp8e4m3fn)");
    rule(o, returnTypes);
  }

  /// The ops legalization may mark `guarded` (IR.h).
  bool guardable(const Op &o) {
    if (o.kind == OpKind::Binary)
      return (o.binary == BinaryCode::Div || o.binary == BinaryCode::Rem) && !o.resultTypes.empty() &&
             isIntegerType(o.resultTypes[0].dtype);
    if (o.kind != OpKind::Convert || o.operands.empty() || o.resultTypes.empty())
      return false;
    DType from = typeOf(o.operands[0]).dtype, to = o.resultTypes[0].dtype;
    return (isFloatType(from) && isIntegerType(to)) || to == DType::FP8E4M3FN;
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
    error(&o, "`" + opName(o) + "`: " + what + ": " + typeText(a) + " and " + typeText(b) +
                  " differ (no implicit conversion, broadcast or layout change)");
    return false;
  }

  void rule(const Op &o, const std::vector<TensorType> &returnTypes) {
    auto operand = [&](size_t i) -> const TensorType & { return typeOf(o.operands[i]); };
    switch (o.kind) {
    case OpKind::Unary: case OpKind::Binary: case OpKind::Compare: case OpKind::Select: case OpKind::Convert:
    case OpKind::Constant: case OpKind::Iota: case OpKind::BroadcastInDim: case OpKind::Reshape:
    case OpKind::Transpose: case OpKind::Slice: case OpKind::Concatenate: case OpKind::Reduce:
    case OpKind::DotGeneral: case OpKind::Copy: case OpKind::Relayout:
      inferred(o);
      return;
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

  /// The declared result type against the operation's type rule (Infer.h).
  void inferred(const Op &o) {
    std::vector<TensorType> operands;
    for (ValueId v : o.operands)
      operands.push_back(typeOf(v));
    const TensorType &declared = o.resultTypes[0];
    Inferred rule = inferResultType(o, operands, declared);
    if (!rule.type) {
      error(&o, rule.error);
      return;
    }
    if (*rule.type == declared)
      return;
    if (rule.computesShape && rule.type->dtype == declared.dtype) {
      std::string shape = typeText(*rule.type);
      shape = shape.substr(shape.find('['), shape.find(']') - shape.find('[') + 1);
      error(&o, "`" + opName(o) + "` must give shape " + shape + " (" + rule.rule + "), not " + typeText(declared));
      return;
    }
    same(o, *rule.type, declared, rule.rule);
  }

  const Module &m_;
  std::vector<VerifierError> &errors_;
  const Function *f_ = nullptr;
  std::vector<bool> defined_;
};

} // namespace

namespace {

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
