//===- BigUint.h - Just enough arbitrary-precision unsigned arithmetic ---===//
//
// Exact decimal <-> binary conversion needs integers far wider than 64 bits
// (5^1100 has 2554 bits). This is the small, obviously-correct subset that the
// numerics library needs: schoolbook operations on 32-bit limbs, least
// significant limb first, always normalized (no high zero limbs).
//
//===----------------------------------------------------------------------===//
#ifndef KEEL_NUMERICS_BIGUINT_H
#define KEEL_NUMERICS_BIGUINT_H

#include <cstdint>
#include <string>
#include <vector>

namespace keel::fp::detail {

class BigUint {
public:
  BigUint() = default;
  explicit BigUint(uint64_t v);

  bool isZero() const { return limbs_.empty(); }
  /// Number of significant bits; 0 for zero.
  int bitLength() const;

  /// this = this * m + a.
  void mulAdd(uint32_t m, uint32_t a);
  /// this *= 5^k.
  void mulPow5(int k);
  /// this <<= n.
  void shiftLeft(int n);
  /// this >>= 1.
  void shiftRightOne();
  /// this -= other; precondition: other <= this.
  void subtract(const BigUint &other);
  /// Three-way comparison.
  friend int compare(const BigUint &a, const BigUint &b);

  /// Decimal digits, most significant first ("0" for zero).
  std::string toDecimal() const;

private:
  void trim();
  std::vector<uint32_t> limbs_;
};

} // namespace keel::fp::detail

#endif // KEEL_NUMERICS_BIGUINT_H
