//===- Solver.cpp - Normal-form fast path and Z3 -------------------------===//
#include "keel/sema/Solver.h"

#include <chrono>
#include <condition_variable>
#include <mutex>
#include <thread>
#include <z3++.h>

namespace keel::sema {

std::string_view relSpelling(Rel r) {
  switch (r) {
  case Rel::Eq: return "==";
  case Rel::Ne: return "!=";
  case Rel::Lt: return "<";
  case Rel::Le: return "<=";
  case Rel::Gt: return ">";
  case Rel::Ge: return ">=";
  }
  return "?";
}

std::string Comparison::str() const {
  return lhs.str() + " " + std::string(relSpelling(rel)) + " " + rhs.str();
}

std::string ShapeContext::fingerprint() const {
  std::string s;
  for (const Comparison &c : facts)
    s += c.str() + ";";
  for (const auto &[a, b] : volumes) {
    s += "vol(";
    for (const Dim &d : a)
      s += d.str() + ",";
    s += ")=(";
    for (const Dim &d : b)
      s += d.str() + ",";
    s += ");";
  }
  for (const std::string &v : noDefaultLowerBound)
    s += "free " + v + ";";
  return s;
}

namespace {

bool holds(Rel r, int64_t diff) {
  switch (r) {
  case Rel::Eq: return diff == 0;
  case Rel::Ne: return diff != 0;
  case Rel::Lt: return diff < 0;
  case Rel::Le: return diff <= 0;
  case Rel::Gt: return diff > 0;
  case Rel::Ge: return diff >= 0;
  }
  return false;
}

/// The normal form's verdict on one comparison: true or false when it is
/// decided for every value of the variables, nullopt when it is not.
std::optional<bool> decide(const Comparison &c, const ShapeContext &context) {
  std::optional<Dim> diff = Dim::sub(c.lhs, c.rhs);
  if (!diff)
    return std::nullopt;
  if (auto k = diff->asConstant())
    return holds(c.rel, *k);
  // lhs - rhs = k0 + sum(ki * vi) over variables that are all >= 1: its
  // smallest value is k0 + sum(ki) when every ki > 0 (largest when < 0).
  bool allPositive = true, allNegative = true;
  int64_t extreme = diff->constantTerm();
  for (const auto &[atom, k] : diff->terms()) {
    if (atom.kind != DimAtom::Kind::Var || context.noDefaultLowerBound.count(atom.name))
      return std::nullopt;
    allPositive &= k > 0;
    allNegative &= k < 0;
    if (__builtin_add_overflow(extreme, k, &extreme))
      return std::nullopt;
  }
  if (allPositive) { // diff >= extreme > ...
    if ((c.rel == Rel::Ge && extreme >= 0) || (c.rel == Rel::Gt && extreme > 0) ||
        (c.rel == Rel::Ne && extreme > 0))
      return true;
  }
  if (allNegative) { // diff <= extreme
    if ((c.rel == Rel::Le && extreme <= 0) || (c.rel == Rel::Lt && extreme < 0) ||
        (c.rel == Rel::Ne && extreme < 0))
      return true;
  }
  return std::nullopt;
}

std::string goalKey(const Goal &goal) {
  std::string s;
  for (const auto &clause : goal) {
    for (const Comparison &c : clause)
      s += c.str() + "|";
    s += "&";
  }
  return s;
}

} // namespace

struct ShapeSolver::Z3State {
  z3::context ctx;
};

ShapeSolver::ShapeSolver(unsigned timeoutMs) : timeoutMs_(timeoutMs) {}
ShapeSolver::~ShapeSolver() = default;

ProofResult ShapeSolver::prove(const ShapeContext &context, const Goal &goal) {
  ++stats_.obligations;
  // Fast path: every clause has a comparison the normal form proves.
  bool allProved = true;
  for (const auto &clause : goal) {
    bool clauseProved = false;
    for (const Comparison &c : clause)
      if (decide(c, context) == std::optional<bool>(true))
        clauseProved = true;
    allProved &= clauseProved;
  }
  if (allProved) {
    ++stats_.normalForm;
    ProofResult r;
    r.status = ProofResult::Status::Proved;
    r.settledByNormalForm = true;
    return r;
  }
  std::string key = context.fingerprint() + "#" + goalKey(goal);
  if (auto it = cache_.find(key); it != cache_.end()) {
    ++stats_.cached;
    return it->second;
  }
  ProofResult r = proveWithZ3(context, goal);
  cache_.emplace(std::move(key), r);
  return r;
}

namespace {

/// Dimensions as Z3 integer terms: each shape variable one constant, made
/// when first met.
class Z3Encoder {
public:
  explicit Z3Encoder(z3::context &ctx) : ctx_(ctx) {}

  z3::expr dim(const Dim &d) {
    z3::expr e = ctx_.int_val(static_cast<int64_t>(d.constantTerm()));
    for (const auto &[atom, k] : d.terms())
      e = e + ctx_.int_val(static_cast<int64_t>(k)) * this->atom(atom);
    return e;
  }
  z3::expr comparison(const Comparison &c) {
    z3::expr l = dim(c.lhs), r = dim(c.rhs);
    switch (c.rel) {
    case Rel::Eq: return l == r;
    case Rel::Ne: return l != r;
    case Rel::Lt: return l < r;
    case Rel::Le: return l <= r;
    case Rel::Gt: return l > r;
    case Rel::Ge: return l >= r;
    }
    return l == r;
  }
  z3::expr product(const std::vector<Dim> &dims) {
    z3::expr p = ctx_.int_val(1);
    for (const Dim &d : dims)
      p = p * dim(d);
    return p;
  }
  const std::map<std::string, z3::expr> &vars() const { return vars_; }

private:
  z3::expr atom(const DimAtom &atom) {
    switch (atom.kind) {
    case DimAtom::Kind::Var: {
      auto it = vars_.find(atom.name);
      if (it == vars_.end())
        it = vars_.emplace(atom.name, ctx_.int_const(atom.name.c_str())).first;
      return it->second;
    }
    case DimAtom::Kind::Product: {
      z3::expr a = ctx_.int_val(1);
      for (const DimAtom &f : atom.factors)
        a = a * this->atom(f);
      return a;
    }
    case DimAtom::Kind::Div:
    case DimAtom::Kind::Mod: {
      z3::expr q = atom.symbolicDivisor ? dim(*atom.symbolicDivisor) : ctx_.int_val(static_cast<int64_t>(atom.divisor));
      return atom.kind == DimAtom::Kind::Div ? dim(*atom.operand) / q : z3::mod(dim(*atom.operand), q);
    }
    }
    return ctx_.int_val(0);
  }

  z3::context &ctx_;
  std::map<std::string, z3::expr> vars_;
};

/// solver.check() under a deadline. The time limit is kept by a watchdog
/// of Keel's that interrupts Z3 at the deadline. Z3's own `timeout`
/// parameter is not used: in Debian's Z3 4.8.12 its timer can deadlock the
/// solver when it fires during nonlinear arithmetic, so that a check never
/// ends. Sets `interrupted` when the watchdog fired, `reason` when Z3
/// threw or was interrupted.
z3::check_result checkBefore(z3::solver &solver, z3::context &ctx, unsigned timeoutMs, bool &interrupted,
                             std::string &reason) {
  z3::check_result verdict;
  std::mutex mutex;
  std::condition_variable done;
  bool finished = false;
  std::thread watchdog([&] {
    std::unique_lock<std::mutex> lock(mutex);
    if (!done.wait_for(lock, std::chrono::milliseconds(timeoutMs), [&] { return finished; })) {
      interrupted = true;
      ctx.interrupt();
    }
  });
  try {
    verdict = solver.check();
  } catch (const z3::exception &e) {
    verdict = z3::unknown;
    reason = e.msg();
  }
  {
    std::lock_guard<std::mutex> lock(mutex);
    finished = true;
  }
  done.notify_one();
  watchdog.join();
  if (interrupted && verdict == z3::unknown)
    reason = "timeout";
  return verdict;
}

} // namespace

ProofResult ShapeSolver::proveWithZ3(const ShapeContext &context, const Goal &goal) {
  ++stats_.z3Calls;
  auto start = std::chrono::steady_clock::now();
  if (!z3_) // made at the first question for Z3 (8 ms): many programs ask none
    z3_ = std::make_unique<Z3State>();
  z3::context &ctx = z3_->ctx;
  Z3Encoder encode(ctx);
  z3::expr_vector assertions(ctx);
  for (const Comparison &c : context.facts)
    assertions.push_back(encode.comparison(c));
  for (const auto &[lhs, rhs] : context.volumes)
    assertions.push_back(encode.product(lhs) == encode.product(rhs));
  z3::expr negated = ctx.bool_val(false);
  for (const auto &clause : goal) {
    z3::expr any = ctx.bool_val(false);
    for (const Comparison &c : clause)
      any = any || encode.comparison(c);
    negated = negated || !any;
  }
  assertions.push_back(negated);
  // Every variable met so far is a dimension: >= 1 unless a refinement
  // says otherwise.
  for (const auto &[name, v] : encode.vars())
    if (!context.noDefaultLowerBound.count(name))
      assertions.push_back(v >= 1);

  // First Z3's SMT core alone, with a tenth of the time: on these small
  // problems it answers in under a millisecond, where the default solver's
  // strategy selection costs 5-15 ms a call (docs/performance.md, "Compile
  // time"). Its `unsat` is a proof like any other; anything else goes to
  // the default solver, so refutations, their counterexamples and unknowns
  // are exactly the default solver's.
  {
    z3::solver core(ctx, z3::solver::simple());
    core.add(assertions);
    bool interrupted = false;
    std::string reason;
    if (checkBefore(core, ctx, std::max(1u, timeoutMs_ / 10), interrupted, reason) == z3::unsat) {
      ProofResult proved;
      proved.status = ProofResult::Status::Proved;
      stats_.z3Seconds += std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();
      return proved;
    }
  }
  z3::solver solver(ctx);
  solver.add(assertions);

  ProofResult result;
  bool interrupted = false; // by the watchdog, at the deadline
  z3::check_result verdict = checkBefore(solver, ctx, timeoutMs_, interrupted, result.reason);
  if (verdict == z3::unsat) {
    result.status = ProofResult::Status::Proved;
  } else if (verdict == z3::sat) {
    // The watchdog may fire after check() returned and before the model is
    // read: Z3 then cancels get_model, and without a model the refutation
    // has no counterexample to show, so it counts as a timeout.
    try {
      z3::model m = solver.get_model();
      for (const auto &[name, v] : encode.vars()) {
        z3::expr value = m.eval(v, true);
        int64_t n = 0;
        if (value.is_numeral_i64(n))
          result.counterexample[name] = n;
      }
      result.status = ProofResult::Status::Refuted;
    } catch (const z3::exception &e) {
      result.status = ProofResult::Status::Unknown;
      result.counterexample.clear();
      result.reason = interrupted ? "timeout" : e.msg();
    }
  } else {
    result.status = ProofResult::Status::Unknown;
    if (result.reason.empty())
      result.reason = solver.reason_unknown();
  }
  stats_.z3Seconds += std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();
  return result;
}

} // namespace keel::sema
