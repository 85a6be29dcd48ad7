//===- keel/sema/Dim.h - Dimensions in normal form ------------*- C++ -*-===//
//
// A dimension is kept as   c + k1*a1 + k2*a2 + ...   with integer constant
// c, nonzero integer coefficients k, and atoms a sorted by their text:
//   - a shape variable (`D`),
//   - `(e) / q` or `(e) % q` for a dimension e and a constant q >= 1 that
//     did not simplify (floor division, as SMT-LIB's `div`/`mod` for q > 0),
//   - `(e) / (m)` for a dimension m that is not a constant: an exact
//     quotient, which the checker writes only where it has proved
//     e % m == 0 (so `H * (C / H)` is `C`); `(e) % (m)` likewise,
//   - a product of two or more of the atoms above (`B*H`, `N*(D / 8)`):
//     products distribute, so a dimension is a polynomial in the atoms.
// Two dimensions that are equal by this normal form compare equal without a
// solver; whatever the normal form cannot settle goes to Z3 (Solver.h).
//
//===----------------------------------------------------------------------===//
#ifndef KEEL_SEMA_DIM_H
#define KEEL_SEMA_DIM_H

#include <cstdint>
#include <map>
#include <memory>
#include <optional>
#include <set>
#include <string>
#include <vector>

namespace keel::sema {

class Dim;

struct DimAtom {
  enum class Kind { Var, Div, Mod, Product };
  Kind kind = Kind::Var;
  std::string name;                    ///< Var
  std::shared_ptr<const Dim> operand;  ///< Div, Mod
  int64_t divisor = 0;                 ///< Div, Mod by a constant
  std::shared_ptr<const Dim> symbolicDivisor; ///< Div (exact), Mod by a dimension
  std::vector<DimAtom> factors;        ///< Product: Var, Div or Mod atoms, sorted by key
  std::string key;                     ///< canonical text; orders and identifies atoms
};

class Dim {
public:
  /// The most terms (constant included) a product of two sums may expand to.
  static constexpr size_t kMaxProductTerms = 1024;
  Dim() = default;
  static Dim constant(int64_t c);
  static Dim variable(const std::string &name);

  /// Arithmetic in normal form. nullopt when a coefficient overflows int64,
  /// when dividing by a non-positive constant, or for a product of sums
  /// whose expansion could pass kMaxProductTerms terms. Products
  /// distribute: (A + 1) * B is A*B + B.
  static std::optional<Dim> add(const Dim &a, const Dim &b);
  static std::optional<Dim> sub(const Dim &a, const Dim &b);
  static std::optional<Dim> mul(const Dim &a, const Dim &b);
  static std::optional<Dim> div(const Dim &a, int64_t q);
  static std::optional<Dim> mod(const Dim &a, int64_t q);
  /// Division and remainder by a dimension: by its value when constant
  /// (floor), else the exact quotient: the polynomial quotient when q is a
  /// monomial that divides every term of a (`(H*Dh) / H` is `Dh`), else a
  /// non-linear atom (`C / H`). Only for an a that q is known to divide:
  /// a product with the divisor cancels (`H * (C / H)` is `C`).
  static std::optional<Dim> divBy(const Dim &a, const Dim &q);
  static std::optional<Dim> modBy(const Dim &a, const Dim &q);

  std::optional<int64_t> asConstant() const;
  int64_t constantTerm() const { return constant_; }
  const std::vector<std::pair<DimAtom, int64_t>> &terms() const { return terms_; }
  /// No products of atoms: inside the Presburger fragment.
  bool isLinear() const;
  /// The shape variables it mentions (inside div/mod/product atoms too).
  std::set<std::string> variables() const;
  /// Replaces variables; nullopt on overflow.
  std::optional<Dim> substitute(const std::map<std::string, Dim> &bindings) const;
  /// The value under an assignment of every variable; nullopt on overflow or
  /// a missing variable.
  std::optional<int64_t> evaluate(const std::map<std::string, int64_t> &values) const;

  /// Canonical text: `2*D + 1`, `(D + 1) / 8`, `B*H - 3`, `0`.
  std::string str() const;
  bool operator==(const Dim &o) const { return str() == o.str(); }

private:
  /// k times the product of the factors, exact quotients cancelled.
  static std::optional<Dim> productTerm(std::vector<DimAtom> factors, int64_t k);
  /// a / q as polynomials when the monomial q divides every term, else nullopt.
  static std::optional<Dim> exactQuotient(const Dim &a, const Dim &q);
  int64_t constant_ = 0;
  std::vector<std::pair<DimAtom, int64_t>> terms_; ///< sorted by atom key
};

} // namespace keel::sema

#endif // KEEL_SEMA_DIM_H
