//===- Dim.cpp - Normal-form dimension arithmetic ------------------------===//
//
// Simplifications, each exact for integers:
//   k*x + m*x -> (k+m)*x              (x + 3) - x -> 3
//   c * (e) -> distributed             (8*D + 16) / 8 -> D + 2
//   (8*D + 3) % 8 -> 3                 constant / q, constant % q -> folded
// Division and remainder by a constant are floor-based: (e) / q =
// floor(e / q) and (e) % q = e - q * floor(e / q), for q >= 1. Division by
// a dimension is an exact quotient (the checker proves e % q == 0 wherever
// one is written), so it simplifies as polynomials divide:
//   (H*Dh) / H -> Dh                  H * (C / H) -> C
//   (H*Dh) % H -> 0                   KV * (C / H) stays a product
//
//===----------------------------------------------------------------------===//
#include "keel/sema/Dim.h"

#include <algorithm>

namespace keel::sema {

namespace {

bool checkedAdd(int64_t a, int64_t b, int64_t &out) { return !__builtin_add_overflow(a, b, &out); }
bool checkedMul(int64_t a, int64_t b, int64_t &out) { return !__builtin_mul_overflow(a, b, &out); }

int64_t floorDiv(int64_t a, int64_t q) {
  int64_t d = a / q;
  return (a % q != 0 && (a < 0) != (q < 0)) ? d - 1 : d;
}
int64_t floorMod(int64_t a, int64_t q) { return a - q * floorDiv(a, q); }

DimAtom varAtom(const std::string &name) {
  DimAtom a;
  a.kind = DimAtom::Kind::Var;
  a.name = name;
  a.key = name;
  return a;
}

DimAtom productAtom(std::vector<DimAtom> factors) {
  std::sort(factors.begin(), factors.end(),
            [](const DimAtom &x, const DimAtom &y) { return x.key < y.key; });
  DimAtom a;
  a.kind = DimAtom::Kind::Product;
  for (size_t i = 0; i < factors.size(); ++i) {
    bool compound = factors[i].kind != DimAtom::Kind::Var;
    a.key += (i ? "*" : "") + (compound ? "(" + factors[i].key + ")" : factors[i].key);
  }
  a.factors = std::move(factors);
  return a;
}

DimAtom divModAtom(DimAtom::Kind kind, const Dim &operand, int64_t q) {
  DimAtom a;
  a.kind = kind;
  a.operand = std::make_shared<const Dim>(operand);
  a.divisor = q;
  bool simple = operand.terms().size() == 1 && operand.constantTerm() == 0 &&
                operand.terms()[0].second == 1;
  std::string inner = simple ? operand.str() : "(" + operand.str() + ")";
  a.key = inner + (kind == DimAtom::Kind::Div ? " / " : " % ") + std::to_string(q);
  return a;
}

/// The factors of an atom: itself, or a product's factors.
std::vector<DimAtom> factorsOf(const DimAtom &a) {
  if (a.kind == DimAtom::Kind::Product)
    return a.factors;
  return {a};
}

} // namespace

namespace {
DimAtom symbolicDivModAtom(DimAtom::Kind kind, const Dim &operand, const Dim &q) {
  DimAtom a;
  a.kind = kind;
  a.operand = std::make_shared<const Dim>(operand);
  a.symbolicDivisor = std::make_shared<const Dim>(q);
  auto wrap = [](const Dim &d) {
    bool simple = d.terms().size() == 1 && d.constantTerm() == 0 && d.terms()[0].second == 1;
    return simple ? d.str() : "(" + d.str() + ")";
  };
  a.key = wrap(operand) + (kind == DimAtom::Kind::Div ? " / " : " % ") + wrap(q);
  return a;
}

/// `whole` less the factors of `part` (both sorted by key), or nullopt
/// when `part` is not a sub-multiset of `whole`.
std::optional<std::vector<DimAtom>> withoutFactors(const std::vector<DimAtom> &whole, const std::vector<DimAtom> &part) {
  std::vector<DimAtom> rest;
  size_t j = 0;
  for (const DimAtom &f : whole) {
    if (j < part.size() && f.key == part[j].key)
      ++j;
    else
      rest.push_back(f);
  }
  if (j != part.size())
    return std::nullopt;
  return rest;
}

/// A monomial m = c * a (c >= 1, no constant term), or nullopt.
std::optional<std::pair<DimAtom, int64_t>> monomial(const Dim &m) {
  if (m.terms().size() != 1 || m.constantTerm() != 0 || m.terms()[0].second < 1)
    return std::nullopt;
  return m.terms()[0];
}

} // namespace

std::optional<Dim> Dim::productTerm(std::vector<DimAtom> factors, int64_t k) {
  std::sort(factors.begin(), factors.end(), [](const DimAtom &x, const DimAtom &y) { return x.key < y.key; });
  // An exact quotient times its divisor cancels: H * (C / H) is C.
  for (size_t i = 0; i < factors.size(); ++i) {
    const DimAtom &f = factors[i];
    if (f.kind != DimAtom::Kind::Div || !f.symbolicDivisor)
      continue;
    std::optional<std::pair<DimAtom, int64_t>> m = monomial(*f.symbolicDivisor);
    if (!m || k % m->second != 0)
      continue;
    std::vector<DimAtom> others = factors;
    others.erase(others.begin() + static_cast<std::ptrdiff_t>(i));
    std::optional<std::vector<DimAtom>> rest = withoutFactors(others, factorsOf(m->first));
    if (!rest)
      continue;
    std::optional<Dim> out = mul(*f.operand, constant(k / m->second));
    if (!rest->empty() && out) {
      std::optional<Dim> r = productTerm(std::move(*rest), 1);
      out = r ? mul(*out, *r) : std::nullopt;
    }
    return out;
  }
  Dim out;
  if (k == 0)
    return out;
  out.terms_.push_back({factors.size() == 1 ? factors[0] : productAtom(std::move(factors)), k});
  return out;
}

std::optional<Dim> Dim::exactQuotient(const Dim &a, const Dim &q) {
  std::optional<std::pair<DimAtom, int64_t>> m = monomial(q);
  if (!m || a.constant_ != 0)
    return std::nullopt;
  std::vector<DimAtom> divisor = factorsOf(m->first);
  std::optional<Dim> out = constant(0);
  for (const auto &[atom, k] : a.terms_) {
    std::optional<std::vector<DimAtom>> rest = withoutFactors(factorsOf(atom), divisor);
    if (!rest || k % m->second != 0)
      return std::nullopt;
    std::optional<Dim> term = rest->empty() ? constant(k / m->second) : productTerm(std::move(*rest), k / m->second);
    out = term && out ? add(*out, *term) : std::nullopt;
  }
  return out;
}

std::optional<Dim> Dim::divBy(const Dim &a, const Dim &q) {
  if (auto c = q.asConstant())
    return div(a, *c);
  if (std::optional<Dim> exact = exactQuotient(a, q))
    return exact;
  Dim out;
  out.terms_.push_back({symbolicDivModAtom(DimAtom::Kind::Div, a, q), 1});
  return out;
}

std::optional<Dim> Dim::modBy(const Dim &a, const Dim &q) {
  if (auto c = q.asConstant())
    return mod(a, *c);
  if (exactQuotient(a, q))
    return constant(0);
  Dim out;
  out.terms_.push_back({symbolicDivModAtom(DimAtom::Kind::Mod, a, q), 1});
  return out;
}

Dim Dim::constant(int64_t c) {
  Dim d;
  d.constant_ = c;
  return d;
}

Dim Dim::variable(const std::string &name) {
  Dim d;
  d.terms_.push_back({varAtom(name), 1});
  return d;
}

std::optional<int64_t> Dim::asConstant() const {
  if (terms_.empty())
    return constant_;
  return std::nullopt;
}

bool Dim::isLinear() const {
  for (const auto &[atom, k] : terms_) {
    if (atom.kind == DimAtom::Kind::Product)
      return false;
    if (atom.symbolicDivisor || (atom.operand && !atom.operand->isLinear()))
      return false;
  }
  return true;
}

std::set<std::string> Dim::variables() const {
  std::set<std::string> out;
  for (const auto &[atom, k] : terms_) {
    switch (atom.kind) {
    case DimAtom::Kind::Var: out.insert(atom.name); break;
    case DimAtom::Kind::Product:
      for (const DimAtom &f : atom.factors) {
        Dim single;
        single.terms_.push_back({f, 1});
        std::set<std::string> inner = single.variables();
        out.insert(inner.begin(), inner.end());
      }
      break;
    case DimAtom::Kind::Div:
    case DimAtom::Kind::Mod: {
      std::set<std::string> inner = atom.operand->variables();
      out.insert(inner.begin(), inner.end());
      if (atom.symbolicDivisor) {
        std::set<std::string> divisor = atom.symbolicDivisor->variables();
        out.insert(divisor.begin(), divisor.end());
      }
      break;
    }
    }
  }
  return out;
}

std::optional<Dim> Dim::add(const Dim &a, const Dim &b) {
  Dim out;
  if (!checkedAdd(a.constant_, b.constant_, out.constant_))
    return std::nullopt;
  // Merge two sorted term lists.
  size_t i = 0, j = 0;
  while (i < a.terms_.size() || j < b.terms_.size()) {
    if (j == b.terms_.size() || (i < a.terms_.size() && a.terms_[i].first.key < b.terms_[j].first.key)) {
      out.terms_.push_back(a.terms_[i++]);
    } else if (i == a.terms_.size() || b.terms_[j].first.key < a.terms_[i].first.key) {
      out.terms_.push_back(b.terms_[j++]);
    } else {
      int64_t k;
      if (!checkedAdd(a.terms_[i].second, b.terms_[j].second, k))
        return std::nullopt;
      if (k != 0)
        out.terms_.push_back({a.terms_[i].first, k});
      ++i;
      ++j;
    }
  }
  return out;
}

std::optional<Dim> Dim::sub(const Dim &a, const Dim &b) {
  std::optional<Dim> negated = mul(b, constant(-1));
  return negated ? add(a, *negated) : std::nullopt;
}

std::optional<Dim> Dim::mul(const Dim &a, const Dim &b) {
  if (auto c = b.asConstant(); c || a.asConstant()) {
    const Dim &e = c ? a : b;
    int64_t factor = c ? *c : *a.asConstant();
    Dim out;
    if (factor == 0)
      return out;
    if (!checkedMul(e.constant_, factor, out.constant_))
      return std::nullopt;
    for (const auto &[atom, k] : e.terms_) {
      int64_t nk;
      if (!checkedMul(k, factor, nk))
        return std::nullopt;
      out.terms_.push_back({atom, nk});
    }
    return out;
  }
  // A polynomial: distributed over both sums, each pair of terms
  // k1*a1 * k2*a2 = (k1*k2) * (a1*a2), like terms merged by add. Bounded:
  // a product of sums multiplies their term counts, so (A + B)^30 would
  // have 2^30 terms; past kMaxProductTerms it is no dimension.
  if ((a.terms_.size() + 1) * (b.terms_.size() + 1) > kMaxProductTerms)
    return std::nullopt;
  std::optional<Dim> out = mul(a, constant(b.constant_));
  if (!out)
    return std::nullopt;
  for (const auto &[atom, k] : b.terms_) {
    Dim single;
    single.terms_.push_back({atom, k});
    std::optional<Dim> scaled = mul(single, constant(a.constant_));
    if (!scaled || !(out = add(*out, *scaled)))
      return std::nullopt;
    for (const auto &[atomA, kA] : a.terms_) {
      int64_t kk;
      if (!checkedMul(kA, k, kk))
        return std::nullopt;
      std::vector<DimAtom> factors = factorsOf(atomA), fb = factorsOf(atom);
      factors.insert(factors.end(), fb.begin(), fb.end());
      std::optional<Dim> term = productTerm(std::move(factors), kk);
      if (!term || !(out = add(*out, *term)))
        return std::nullopt;
    }
  }
  return out;
}

std::optional<Dim> Dim::div(const Dim &a, int64_t q) {
  if (q <= 0)
    return std::nullopt;
  if (q == 1)
    return a;
  if (auto c = a.asConstant())
    return constant(floorDiv(*c, q));
  // Every coefficient a multiple of q: (q*x + r) / q = x + floor(r / q).
  bool allDivisible = std::all_of(a.terms_.begin(), a.terms_.end(),
                                  [&](const auto &t) { return t.second % q == 0; });
  if (allDivisible) {
    Dim out;
    out.constant_ = floorDiv(a.constant_, q);
    for (const auto &[atom, k] : a.terms_)
      out.terms_.push_back({atom, k / q});
    return out;
  }
  Dim out;
  out.terms_.push_back({divModAtom(DimAtom::Kind::Div, a, q), 1});
  return out;
}

std::optional<Dim> Dim::mod(const Dim &a, int64_t q) {
  if (q <= 0)
    return std::nullopt;
  if (q == 1)
    return constant(0);
  if (auto c = a.asConstant())
    return constant(floorMod(*c, q));
  bool allDivisible = std::all_of(a.terms_.begin(), a.terms_.end(),
                                  [&](const auto &t) { return t.second % q == 0; });
  if (allDivisible)
    return constant(floorMod(a.constant_, q));
  Dim out;
  out.terms_.push_back({divModAtom(DimAtom::Kind::Mod, a, q), 1});
  return out;
}

std::optional<Dim> Dim::substitute(const std::map<std::string, Dim> &bindings) const {
  std::optional<Dim> out = constant(constant_);
  for (const auto &[atom, k] : terms_) {
    std::optional<Dim> value;
    switch (atom.kind) {
    case DimAtom::Kind::Var: {
      auto it = bindings.find(atom.name);
      value = it != bindings.end() ? it->second : variable(atom.name);
      break;
    }
    case DimAtom::Kind::Product: {
      value = constant(1);
      for (const DimAtom &f : atom.factors) {
        Dim single;
        single.terms_.push_back({f, 1});
        std::optional<Dim> fv = single.substitute(bindings);
        value = value && fv ? mul(*value, *fv) : std::nullopt;
      }
      break;
    }
    case DimAtom::Kind::Div:
    case DimAtom::Kind::Mod: {
      std::optional<Dim> inner = atom.operand->substitute(bindings);
      if (inner && atom.symbolicDivisor) {
        std::optional<Dim> q = atom.symbolicDivisor->substitute(bindings);
        if (q)
          value = atom.kind == DimAtom::Kind::Div ? divBy(*inner, *q) : modBy(*inner, *q);
      } else if (inner) {
        value = atom.kind == DimAtom::Kind::Div ? div(*inner, atom.divisor) : mod(*inner, atom.divisor);
      }
      break;
    }
    }
    if (!value || !out)
      return std::nullopt;
    std::optional<Dim> term = mul(*value, constant(k));
    out = term ? add(*out, *term) : std::nullopt;
  }
  return out;
}

std::optional<int64_t> Dim::evaluate(const std::map<std::string, int64_t> &values) const {
  std::map<std::string, Dim> bindings;
  for (const std::string &v : variables()) {
    auto it = values.find(v);
    if (it == values.end())
      return std::nullopt;
    bindings[v] = constant(it->second);
  }
  std::optional<Dim> d = substitute(bindings);
  return d ? d->asConstant() : std::nullopt;
}

std::string Dim::str() const {
  std::string out;
  for (const auto &[atom, k] : terms_) {
    bool negative = k < 0;
    uint64_t magnitude = negative ? uint64_t{0} - static_cast<uint64_t>(k) : static_cast<uint64_t>(k);
    if (out.empty())
      out += negative ? "-" : "";
    else
      out += negative ? " - " : " + ";
    if (magnitude != 1)
      out += std::to_string(magnitude) + "*";
    bool compound = atom.kind == DimAtom::Kind::Div || atom.kind == DimAtom::Kind::Mod;
    out += compound && magnitude != 1 ? "(" + atom.key + ")" : atom.key;
  }
  if (out.empty())
    return std::to_string(constant_);
  if (constant_ > 0)
    out += " + " + std::to_string(constant_);
  else if (constant_ < 0)
    out += " - " + std::to_string(uint64_t{0} - static_cast<uint64_t>(constant_));
  return out;
}

} // namespace keel::sema
