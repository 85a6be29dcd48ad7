//===- BigUint.cpp --------------------------------------------------------===//
#include "BigUint.h"

#include <algorithm>
#include <bit>
#include <cassert>

namespace keel::fp::detail {

BigUint::BigUint(uint64_t v) {
  while (v) {
    limbs_.push_back(static_cast<uint32_t>(v));
    v >>= 32;
  }
}

void BigUint::trim() {
  while (!limbs_.empty() && limbs_.back() == 0)
    limbs_.pop_back();
}

int BigUint::bitLength() const {
  if (limbs_.empty())
    return 0;
  return static_cast<int>(32 * (limbs_.size() - 1)) + std::bit_width(limbs_.back());
}

void BigUint::mulAdd(uint32_t m, uint32_t a) {
  uint64_t carry = a;
  for (uint32_t &limb : limbs_) {
    uint64_t t = uint64_t{limb} * m + carry;
    limb = static_cast<uint32_t>(t);
    carry = t >> 32;
  }
  if (carry)
    limbs_.push_back(static_cast<uint32_t>(carry));
  trim();
}

void BigUint::mulPow5(int k) {
  assert(k >= 0);
  constexpr uint32_t kPow5_13 = 1220703125; // 5^13, the largest power below 2^32
  for (; k >= 13; k -= 13)
    mulAdd(kPow5_13, 0);
  uint32_t rest = 1;
  for (; k > 0; --k)
    rest *= 5;
  if (rest != 1)
    mulAdd(rest, 0);
}

void BigUint::shiftLeft(int n) {
  assert(n >= 0);
  if (limbs_.empty() || n == 0)
    return;
  int whole = n / 32, part = n % 32;
  if (part) {
    uint32_t carry = 0;
    for (uint32_t &limb : limbs_) {
      uint32_t next = limb >> (32 - part);
      limb = (limb << part) | carry;
      carry = next;
    }
    if (carry)
      limbs_.push_back(carry);
  }
  limbs_.insert(limbs_.begin(), static_cast<size_t>(whole), 0u);
}

void BigUint::shiftRightOne() {
  for (size_t i = 0; i < limbs_.size(); ++i) {
    uint32_t high = i + 1 < limbs_.size() ? limbs_[i + 1] << 31 : 0;
    limbs_[i] = (limbs_[i] >> 1) | high;
  }
  trim();
}

void BigUint::subtract(const BigUint &other) {
  assert(compare(*this, other) >= 0);
  int64_t borrow = 0;
  for (size_t i = 0; i < limbs_.size(); ++i) {
    int64_t t = int64_t{limbs_[i]} - borrow -
                (i < other.limbs_.size() ? int64_t{other.limbs_[i]} : 0);
    borrow = t < 0;
    limbs_[i] = static_cast<uint32_t>(t + (borrow << 32));
  }
  trim();
}

int compare(const BigUint &a, const BigUint &b) {
  if (a.limbs_.size() != b.limbs_.size())
    return a.limbs_.size() < b.limbs_.size() ? -1 : 1;
  for (size_t i = a.limbs_.size(); i-- > 0;)
    if (a.limbs_[i] != b.limbs_[i])
      return a.limbs_[i] < b.limbs_[i] ? -1 : 1;
  return 0;
}

std::string BigUint::toDecimal() const {
  if (limbs_.empty())
    return "0";
  // Repeated division by 10^9; each remainder is nine digits.
  std::vector<uint32_t> n = limbs_;
  std::vector<uint32_t> chunks;
  while (!n.empty()) {
    uint64_t rem = 0;
    for (size_t i = n.size(); i-- > 0;) {
      uint64_t cur = (rem << 32) | n[i];
      n[i] = static_cast<uint32_t>(cur / 1000000000u);
      rem = cur % 1000000000u;
    }
    chunks.push_back(static_cast<uint32_t>(rem));
    while (!n.empty() && n.back() == 0)
      n.pop_back();
  }
  std::string out = std::to_string(chunks.back());
  for (size_t i = chunks.size() - 1; i-- > 0;) {
    std::string part = std::to_string(chunks[i]);
    out.append(9 - part.size(), '0');
    out += part;
  }
  return out;
}

} // namespace keel::fp::detail
