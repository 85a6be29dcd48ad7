//===- keel/sema/Solver.h - Shape obligations, fast path then Z3 -*- C++ -*-===//
//
// A shape obligation is a goal (a conjunction of clauses, each a disjunction
// of comparisons between dimensions) under a context: the function's
// `requires` clause, every shape variable >= 1, and the volume equalities
// asserted by reshapes (Phase 0 §10, §14). The normal form of Dim settles
// what it can; the rest goes to Z3 with the goal negated:
//   unsat   -> proved;
//   sat     -> refuted, with the model as a counterexample;
//   unknown -> "could not prove" (a timeout included): never accepted.
// Results are cached per (context, goal).
//
//===----------------------------------------------------------------------===//
#ifndef KEEL_SEMA_SOLVER_H
#define KEEL_SEMA_SOLVER_H

#include "keel/sema/Dim.h"

#include <map>
#include <memory>
#include <string>
#include <unordered_map>
#include <vector>

namespace keel::sema {

enum class Rel { Eq, Ne, Lt, Le, Gt, Ge };
std::string_view relSpelling(Rel r);

struct Comparison {
  Dim lhs;
  Rel rel = Rel::Eq;
  Dim rhs;
  std::string str() const;
};

/// A conjunction of clauses; each clause holds when one of its comparisons
/// does.
using Goal = std::vector<std::vector<Comparison>>;

/// What is known about the shape variables of one function.
struct ShapeContext {
  std::vector<Comparison> facts;
  /// Asserted volume equalities: product(lhs) == product(rhs).
  std::vector<std::pair<std::vector<Dim>, std::vector<Dim>>> volumes;
  /// Variables without the default lower bound 1 (a refinement says so).
  std::set<std::string> noDefaultLowerBound;
  std::string fingerprint() const;
};

struct ProofResult {
  enum class Status { Proved, Refuted, Unknown };
  Status status = Status::Unknown;
  bool settledByNormalForm = false;
  /// Refuted: values of the variables that break the goal.
  std::map<std::string, int64_t> counterexample;
  /// Unknown: why (Z3's reason, e.g. "timeout").
  std::string reason;
};

struct SolverStats {
  size_t obligations = 0, normalForm = 0, cached = 0, z3Calls = 0;
  double z3Seconds = 0;
};

class ShapeSolver {
public:
  explicit ShapeSolver(unsigned timeoutMs = 2000);
  ~ShapeSolver();
  ProofResult prove(const ShapeContext &context, const Goal &goal);
  const SolverStats &stats() const { return stats_; }

private:
  struct Z3State;
  ProofResult proveWithZ3(const ShapeContext &context, const Goal &goal);
  unsigned timeoutMs_;
  std::unique_ptr<Z3State> z3_; ///< made at the first proveWithZ3
  std::unordered_map<std::string, ProofResult> cache_;
  SolverStats stats_;
};

} // namespace keel::sema

#endif // KEEL_SEMA_SOLVER_H
