//===- Verifier.cpp - One check per rule, each with its message ----------===//
#include "keel/ir/Verifier.h"

#include "keel/ir/Infer.h"
#include "keel/ir/Text.h"
#include "keel/support/Permutation.h"
#include "keel/support/Text.h"

#include <algorithm>
#include <map>
#include <set>
#include <unordered_map>

namespace keel::ir {

namespace {

class Verifier {
public:
  Verifier(const Module &m, std::vector<VerifierError> &errors) : m_(m), errors_(errors) {}

  void function(const Function &f) {
    f_ = &f;
    names_.clear();
    defined_.assign(f.valueTypes.size(), false);
    poisoned_.assign(f.valueTypes.size(), false);
    state_.assign(f.valueTypes.size(), State::Undefined);
    for (size_t i = 0; i < f.params.size(); ++i)
      define(f.params[i], nullptr, i < f.paramSpans.size() ? f.paramSpans[i] : Span{});
    for (size_t i = 0; i < f.resultTypes.size(); ++i)
      checkType(f.resultTypes[i], nullptr, "result type " + std::to_string(i) + " of @" + f.name,
                i < f.resultSpans.size() ? f.resultSpans[i] : Span{});
    if (f.ops.empty() || f.ops.back().kind != OpKind::Return)
      error(nullptr, "@" + f.name + " does not end with `return`");
    for (size_t i = 0; i < f.ops.size(); ++i) {
      if (f.ops[i].kind == OpKind::Return && i + 1 != f.ops.size())
        error(&f.ops[i], "`return` before the end of @" + f.name);
      op(f.ops[i], f.resultTypes, /*inRegion=*/false);
    }
  }

private:
  void error(const Op *op, std::string message, Span at = {}) {
    errors_.push_back({f_, op, std::move(message), at});
  }
  std::string name(ValueId v) {
    if (names_.empty())
      names_ = displayNames(*f_);
    auto it = names_.find(v);
    return it != names_.end() ? it->second : "%<value " + std::to_string(v) + ">";
  }

  const TensorType &typeOf(ValueId v) const { return f_->valueTypes[v]; }

  bool define(ValueId v, const Op *op, Span at = {}) {
    if (v >= defined_.size()) {
      error(op, "value id " + std::to_string(v) + " is not a value of @" + f_->name);
      return false;
    }
    if (defined_[v]) {
      error(op, "value " + name(v) + " is defined twice");
      return false;
    }
    defined_[v] = true;
    state_[v] = State::Defined;
    if (checkType(typeOf(v), op, (op ? "the type of " : "the type of parameter ") + name(v), at))
      return true;
    poisoned_[v] = true;
    return false;
  }

  /// Why `o` may not read `v`: the rule it breaks.
  std::string undefinedUse(const Op &o, ValueId v) {
    std::string op = "`" + opName(o) + "`";
    if (v >= defined_.size())
      return op + " uses value id " + std::to_string(v) + ", which is not a value of @" + f_->name;
    if (enclosing_ && (*enclosing_)[v])
      return op + " uses " + name(v) + ", a value of @" + f_->name +
             " outside the fusion region: a region reads only its parameters (pass " + name(v) +
             " to the fusion as an operand)";
    if (state_[v] == State::InClosedRegion)
      return op + " uses " + name(v) +
             ", a value inside a fusion region: only the values the region returns leave it, as the fusion's results";
    return op + " uses " + name(v) + (definedAnywhere(f_->ops, v) ? " before its definition: a value is defined before "
                                                                    "it is used"
                                                                  : ", which is never defined");
  }
  static bool definedAnywhere(const std::vector<Op> &ops, ValueId v) {
    for (const Op &o : ops) {
      if (std::find(o.results.begin(), o.results.end(), v) != o.results.end())
        return true;
      if (o.region && (std::find(o.region->params.begin(), o.region->params.end(), v) != o.region->params.end() ||
                       definedAnywhere(o.region->ops, v)))
        return true;
    }
    return false;
  }

  /// The results of an op already reported as malformed, defined so that
  /// their uses report nothing more (one problem, one diagnostic).
  void defineQuietly(const Op &o) {
    for (ValueId r : o.results)
      if (r < defined_.size())
        defined_[r] = true;
  }

  /// `at`: where the type is written in a signature (else the op's span).
  bool checkType(const TensorType &t, const Op *op, const std::string &what, Span at = {}) {
    for (size_t i = 0; i < t.shape.size(); ++i)
      if (t.shape[i] <= 0) {
        error(op, what + ", " + typeText(t) + ", has dimension " + std::to_string(i) + " of size " +
                      std::to_string(t.shape[i]) + ": sizes are positive",
              at);
        return false;
      }
    if (!t.elementCount()) {
      error(op, what + ", " + typeText(t) + ", has more elements than int64 can count", at);
      return false;
    }
    if (!t.byteCount()) { // every later stage addresses the tensor's bytes with int64
      error(op, what + ", " + typeText(t) + ", has more bytes than int64 can count", at);
      return false;
    }
    if (!isPermutation(t.minorToMajor, t.rank())) {
      error(op, what + ", " + typeText(t) + ", has layout " + layoutText(t) + ", which is not a permutation of 0 to " +
                    std::to_string(static_cast<int64_t>(t.rank()) - 1) + " (minor to major)",
            at);
      return false;
    }
    return true;
  }

  void op(const Op &o, const std::vector<TensorType> &returnTypes, bool inRegion) {
    const OpInfo &info = opInfo(o.kind);
    // Stage 1: structure. A malformed op still defines its results, so
    // that their uses report nothing more (one problem, one diagnostic).
    for (ValueId v : o.operands)
      if (v >= defined_.size() || !defined_[v]) {
        error(&o, undefinedUse(o, v));
        defineQuietly(o);
        return;
      }
    for (ValueId v : o.operands)
      if (poisoned_[v]) { // its type was reported: nothing more about what reads it
        for (ValueId r : o.results)
          if (r < poisoned_.size())
            poisoned_[r] = true;
        defineQuietly(o);
        return;
      }
    if (info.operands >= 0 && o.operands.size() != static_cast<size_t>(info.operands)) {
      error(&o, "`" + opName(o) + "` takes " + countOf(static_cast<size_t>(info.operands), "operand") + ", not " +
                    std::to_string(o.operands.size()));
      defineQuietly(o);
      return;
    }
    if (info.results >= 0 && o.results.size() != static_cast<size_t>(info.results)) {
      error(&o, "`" + opName(o) + "` has " + countOf(static_cast<size_t>(info.results), "result") + ", not " +
                    std::to_string(o.results.size()));
      defineQuietly(o);
      return;
    }
    if (o.results.size() != o.resultTypes.size()) {
      error(&o, "`" + opName(o) + "` names " + countOf(o.results.size(), "result") + " but gives " +
                    countOf(o.resultTypes.size(), "type"));
      defineQuietly(o);
      return;
    }
    if (inRegion && !info.fusible() && o.kind != OpKind::Return)
      error(&o, "`" + opName(o) + "` cannot be inside a fusion region");
    if (o.kind == OpKind::Fusion)
      region(o); // defines the region's values before the results
    bool typed = true;
    for (ValueId r : o.results)
      typed = define(r, &o) && typed;
    if (!typed)
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
      error(&o, "the fusion region has " + countOf(o.region->params.size(), "parameter") + " for " +
                    countOf(o.operands.size(), "operand"));
      return;
    }
    // Values of the enclosing function are not visible inside: verify the
    // region with only its parameters defined, then restore.
    std::vector<bool> outside = defined_;
    const std::vector<bool> *enclosing = enclosing_;
    enclosing_ = &outside;
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
    // A region's values stay inside it: outside they are undefined, and a
    // use there is reported as an escape.
    for (size_t v = 0; v < defined_.size(); ++v)
      if (defined_[v] && !outside[v])
        state_[v] = State::InClosedRegion;
    defined_ = outside;
    enclosing_ = enclosing;
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
        error(&o, "@" + o.callee + " takes " + countOf(callee->params.size(), "argument") + ", not " +
                      std::to_string(o.operands.size()));
        return;
      }
      for (size_t i = 0; i < o.operands.size(); ++i) {
        // The parameter's name is built only for a message: this runs on every
        // call of every verification.
        const TensorType &param = callee->valueTypes[callee->params[i]];
        if (operand(i) != param)
          same(o, operand(i), param,
               "argument " + std::to_string(i) + " and @" + o.callee + "'s parameter " +
                   valueName(*callee, callee->params[i]));
      }
      if (o.resultTypes.size() != callee->resultTypes.size()) {
        error(&o, "@" + o.callee + " returns " + countOf(callee->resultTypes.size(), "value") + ", not " +
                      std::to_string(o.resultTypes.size()));
        return;
      }
      for (size_t i = 0; i < o.resultTypes.size(); ++i)
        same(o, o.resultTypes[i], callee->resultTypes[i], "result " + std::to_string(i) + " and the callee's");
      return;
    }
    case OpKind::Return:
      if (o.operands.size() != returnTypes.size()) {
        error(&o, "`return` of " + countOf(o.operands.size(), "value") + " where " +
                      std::to_string(returnTypes.size()) + (returnTypes.size() == 1 ? " is" : " are") + " declared");
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
  /// What a value not defined here is: never defined yet, or defined inside
  /// a fusion region already closed (an escape).
  enum class State : uint8_t { Undefined, Defined, InClosedRegion };
  std::vector<State> state_;
  std::vector<bool> poisoned_; ///< values whose type was reported malformed
  /// Inside a region: the values defined outside it (a leak when used).
  const std::vector<bool> *enclosing_ = nullptr;
  std::unordered_map<ValueId, std::string> names_; ///< displayNames(*f_), made on the first message
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
                                           ": tensor IR has no control flow, so a recursive call never returns", {}});
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
      errors.push_back({&f, nullptr, "function @" + f.name + " is defined twice", {}});
    v.function(f);
  }
  checkCallCycles(m, errors);
  return errors;
}

} // namespace keel::ir
