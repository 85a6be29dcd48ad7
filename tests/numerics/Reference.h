//===- Reference.h - Independent references for the numerics tests -----===//
//
// Expected values in the numerics tests come from two established
// implementations, never from the code under test:
//  - LLVM 22's APFloat (IEEEhalf, BFloat, FloatTF32, Float8E4M3FN,
//    Float8E5M2, IEEEsingle, IEEEdouble), and
//  - GNU MPFR, rounding exact values at the format's precision and exponent
//    range with mpfr_subnormalize.
// Where Keel's contract differs from APFloat's behaviour, the difference is
// named here (contractFromApfloat) rather than skipped.
//
//===----------------------------------------------------------------------===//
#ifndef KEEL_TESTS_NUMERICS_REFERENCE_H
#define KEEL_TESTS_NUMERICS_REFERENCE_H

#include "keel/numerics/Format.h"

#include <llvm/ADT/APFloat.h>
#include <mpfr.h>

#include <functional>
#include <string>

namespace keel::fp::ref {

const llvm::fltSemantics &semantics(Format f);

/// The canonical NaNs as tabled in ../shared/spec/README.md section 4.
uint64_t specCanonicalNaN(Format f, bool negative);

/// Our encoding as an APFloat, and back (tf32: the carrier's top 19 bits).
llvm::APFloat toAP(Format f, uint64_t bits);
uint64_t fromAP(Format f, const llvm::APFloat &v);

/// The exact value of an encoding, decoded by APFloat (NaN for NaNs).
double exactValue(Format f, uint64_t bits);

/// The result APFloat gives for a conversion with round-to-nearest-even,
/// adjusted by the two documented differences from Keel's contract:
///  1. NaN payloads: APFloat keeps (part of) the payload; Keel gives the
///     canonical NaN with the same sign.
///  2. fp8e4m3fn overflow: APFloat has no infinity there and returns NaN;
///     Keel saturates to +-448 (finite overflow and infinity alike).
/// `apfloatDiffered` says whether an adjustment was made.
uint64_t contractFromApfloat(Format to, llvm::APFloat value, bool &apfloatDiffered);
uint64_t apConvert(Format from, Format to, uint64_t bits, bool &apfloatDiffered);

/// MPFR: computes a value at the precision and exponent range of `to`
/// (subnormals included) with `produce`, which must round to nearest and
/// return MPFR's ternary value, then applies Keel's overflow rules.
/// `inexact`, when given, is set from MPFR's ternary value (and for
/// saturation).
uint64_t mpfrRound(Format to, const std::function<int(mpfr_ptr)> &produce,
                   bool *inexact = nullptr);
uint64_t mpfrFromDecimal(Format to, const std::string &decimal, bool *inexact = nullptr);
/// a op b in format f by MPFR, with Keel's NaN rule.
uint64_t mpfrArith(Format f, ArithOp op, uint64_t a, uint64_t b);
/// A decimal string rounded to f64 first (MPFR), then to `to` (APFloat):
/// the double rounding that Keel must not do.
uint64_t viaF64(Format to, const std::string &decimal);

/// The exact decimal expansion of an MPFR value or a double, by MPFR
/// ("1.5e-3" style, every digit, no trailing zeros).
std::string exactDecimalOf(mpfr_srcptr x);
std::string exactDecimalOf(double v);

/// Hex for messages.
std::string hexOf(Format f, uint64_t bits);

} // namespace keel::fp::ref

#endif
