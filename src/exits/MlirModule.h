//===- MlirModule.h - The scaffold both MLIR exits write ---------*- C++ -*-===//
//
// Private to the MLIR exits (linalg, StableHLO). What a module of func.func
// needs whatever dialect its bodies use:
//
//   - SSA names, given when a value is written: `%vN` for the value that
//     `keel ir` prints `%N` (a fusion's results name the values its region
//     returns), `%tN` for the exit's own temporaries;
//   - symbols: Keel's function names made unique against the names the
//     module reserves for itself;
//   - the text of a func.func head, of a call, and of the `@main` that
//     calls the entry on fixed arguments.
//
//===----------------------------------------------------------------------===//
#ifndef KEEL_EXITS_MLIRMODULE_H
#define KEEL_EXITS_MLIRMODULE_H

#include "keel/exits/MlirText.h"
#include "keel/ir/IR.h"

#include <map>
#include <set>
#include <string>
#include <string_view>
#include <unordered_map>
#include <vector>

namespace keel::exits::detail {

/// One function's SSA names. A single counter serves the function and every
/// region nested in it (MLIR forbids redefining a name a region can see).
class SsaNames {
public:
  /// Temporaries only (a helper function, a decomposition, `@main`).
  SsaNames() = default;
  /// `%vN` for each value of `f` that `keel ir` prints `%N`.
  explicit SsaNames(const ir::Function &f);

  /// A new temporary, `%tN`.
  std::string fresh() { return "%t" + std::to_string(counter_++); }
  /// The name for the MLIR value about to be written that holds `v`:
  /// `v`'s own (or, after holds(), the outer value's) the first time it is
  /// asked for, a temporary after that.
  std::string of(ir::ValueId v);
  /// The value written for `inner` is also `outer` (a fusion's result): it
  /// takes outer's name. The first claim on an inner value holds.
  void holds(ir::ValueId inner, ir::ValueId outer) { outer_.emplace(inner, outer); }

private:
  int counter_ = 0;
  std::unordered_map<ir::ValueId, std::string> names_;
  std::unordered_map<ir::ValueId, ir::ValueId> outer_;
  std::set<std::string> given_;
};

/// Each function's symbol: its Keel name, with `user.` before one that
/// starts `keel.` (the exits' own namespace) and `_` appended while it is
/// taken (by `reserved`, or by an earlier function). `main`, when given,
/// is `@main`.
std::map<std::string, std::string> symbolTable(const std::vector<const ir::Function *> &functions,
                                               std::set<std::string> reserved, const ir::Function *main = nullptr);

/// `a, b, c`.
std::string commaList(const std::vector<std::string> &items);
/// A result type list: `T` for one, `(T, U)` otherwise (`()` for none).
std::string resultTypeList(const std::vector<std::string> &types);
/// `  func.func VISIBILITY@SYMBOL(%a: T, ...) -> R`; `visibility` is empty
/// or ends in a space (`private `).
std::string functionHead(std::string_view visibility, const std::string &symbol, const std::vector<std::string> &params,
                         const std::vector<std::string> &resultTypes);
/// `@SYMBOL(%a, %b) : (T, U) -> R`: what follows `func.call` or `call`.
std::string callText(const std::string &symbol, const std::vector<std::string> &args,
                     const std::vector<std::string> &argTypes, const std::vector<std::string> &resultTypes);
/// The names a call's results have when `r` names the call: `r` for one
/// result, `r#0`, `r#1`, ... for more; and the `r = ` or `r:N = ` it is
/// written after (empty for no result).
std::vector<std::string> resultNames(const std::string &r, size_t count);
std::string resultsDefined(const std::string &r, size_t count);

/// `@main`'s call of the entry: each argument a dense constant written by
/// `block.op("CONSTANT_OP dense<...> : T")`, then `CALL_OP @entry(...)`;
/// returns the call's results. `Block` is the exit's own block writer
/// (op(rhs) returning the name, line(text), fresh()).
template <typename Block>
std::vector<std::string> writeMainCall(Block &block, const ir::Function &entry, const std::string &symbol,
                                       const std::vector<std::vector<uint64_t>> &args, Integers ints,
                                       std::string_view constantOp, std::string_view callOp) {
  std::vector<std::string> names, types, results;
  for (size_t i = 0; i < entry.params.size(); ++i) {
    const ir::TensorType &t = entry.valueTypes[entry.params[i]];
    std::string type = mlirTensorType(t, ints);
    names.push_back(block.op(std::string(constantOp) + " " + mlirDense(t, args[i], ints) + " : " + type));
    types.push_back(type);
  }
  for (const ir::TensorType &t : entry.resultTypes)
    results.push_back(mlirTensorType(t, ints));
  std::string call = std::string(callOp) + " " + callText(symbol, names, types, results);
  std::string r = results.empty() ? "" : block.fresh();
  block.line(resultsDefined(r, results.size()) + call);
  return resultNames(r, results.size());
}

} // namespace keel::exits::detail

#endif // KEEL_EXITS_MLIRMODULE_H
