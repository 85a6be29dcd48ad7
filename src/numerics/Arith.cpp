//===- Arith.cpp - Correctly rounded scalar arithmetic -------------------===//
//
// f16, bf16 and tf32 arithmetic is computed in f64 and rounded once more to
// the format. That is exact, not an approximation:
//  - both operands are exact in f64 (precision p <= 11, exponents within
//    f64's normal range, so the f64 step never meets f64 subnormals and is
//    unaffected by flush-to-zero or denormals-are-zero modes);
//  - a product of two p-bit significands has at most 2p <= 22 bits, so
//    x * y is exact in f64 and is rounded only once;
//  - for +, - and /, the f64 result is rounded to 53 bits first; since
//    53 >= 2p + 2, rounding that result to p bits gives the same value as
//    rounding the exact result (S. A. Figueroa, "When is double rounding
//    innocuous?", SIGNUM Newsletter 30(3), 1995). The tests check this
//    against MPFR on every rounding case class.
// f32 and f64 use the hardware operation of their own width, which is
// correctly rounded under the default rounding mode that Keel never changes.
//
//===----------------------------------------------------------------------===//
#include "Exact.h"

#include <bit>
#include <cassert>
#include <cmath>

namespace keel::fp {

std::optional<ArithOp> parseArithOp(std::string_view name) {
  if (name == "add") return ArithOp::Add;
  if (name == "sub") return ArithOp::Sub;
  if (name == "mul") return ArithOp::Mul;
  if (name == "div") return ArithOp::Div;
  return std::nullopt;
}

std::string_view arithOpName(ArithOp op) {
  switch (op) {
  case ArithOp::Add: return "add";
  case ArithOp::Sub: return "sub";
  case ArithOp::Mul: return "mul";
  case ArithOp::Div: return "div";
  }
  return "?";
}

namespace {
template <typename T> T apply(ArithOp op, T x, T y) {
  switch (op) {
  case ArithOp::Add: return x + y;
  case ArithOp::Sub: return x - y;
  case ArithOp::Mul: return x * y;
  case ArithOp::Div: return x / y;
  }
  return x;
}

/// The NaN a NaN-producing operation returns (see Format.h).
uint64_t nanResult(Format f, uint64_t a, uint64_t b) {
  for (uint64_t operand : {a, b})
    if (classify(f, operand) == FpClass::NaN)
      return canonicalNaN(f, signBit(f, operand));
  return canonicalNaN(f, false);
}
} // namespace

uint64_t arith(Format f, ArithOp op, uint64_t a, uint64_t b) {
  assert(hasArithmetic(f) && "no scalar arithmetic in this format");
  uint64_t result;
  if (f == Format::F32) {
    float r = apply(op, std::bit_cast<float>(static_cast<uint32_t>(a)),
                    std::bit_cast<float>(static_cast<uint32_t>(b)));
    result = std::bit_cast<uint32_t>(r);
    if (std::isnan(r))
      return nanResult(f, a, b);
    return result;
  }
  double r = apply(op, toF64(f, a), toF64(f, b));
  if (std::isnan(r))
    return nanResult(f, a, b);
  return f == Format::F64 ? std::bit_cast<uint64_t>(r) : fromF64(f, r);
}

} // namespace keel::fp
