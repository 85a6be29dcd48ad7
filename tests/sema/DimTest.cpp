//===- DimTest.cpp - Normal forms and the solver -------------------------===//
#include "keel/sema/Solver.h"

#include <gtest/gtest.h>

using namespace keel::sema;

namespace {

Dim v(const char *name) { return Dim::variable(name); }
Dim c(int64_t k) { return Dim::constant(k); }
Dim add(Dim a, Dim b) { return *Dim::add(a, b); }
Dim mul(Dim a, Dim b) { return *Dim::mul(a, b); }

TEST(DimTest, NormalFormMakesEqualDimensionsEqual) {
  // (D + 3) - D == 3; 2*D + D == 3*D; D*B == B*D.
  EXPECT_EQ(Dim::sub(add(v("D"), c(3)), v("D"))->str(), "3");
  EXPECT_EQ(add(mul(c(2), v("D")), v("D")).str(), "3*D");
  EXPECT_EQ(mul(v("D"), v("B")), mul(v("B"), v("D")));
  EXPECT_EQ(add(v("S"), mul(c(-2), v("B"))).str(), "-2*B + S");
  // (8*D + 16) / 8 == D + 2 and (8*D + 3) % 8 == 3, by hand.
  EXPECT_EQ(Dim::div(add(mul(c(8), v("D")), c(16)), 8)->str(), "D + 2");
  EXPECT_EQ(Dim::mod(add(mul(c(8), v("D")), c(3)), 8)->str(), "3");
  EXPECT_EQ(Dim::div(v("D"), 8)->str(), "D / 8");
  EXPECT_EQ(Dim::div(c(-7), 2)->str(), "-4"); // floor
  EXPECT_EQ(Dim::mod(c(-7), 2)->str(), "1");
  EXPECT_FALSE(Dim::div(v("D"), 0).has_value());
  // Products distribute into a polynomial normal form: (A + 1) * B = A*B + B,
  // (B + H) * (B - H) = B*B - H*H, and H * B * 2 = 2*B*H whatever the order.
  EXPECT_EQ(mul(add(v("A"), c(1)), v("B")).str(), add(mul(v("A"), v("B")), v("B")).str());
  EXPECT_EQ(mul(add(v("B"), v("H")), add(v("B"), mul(c(-1), v("H")))),
            add(mul(v("B"), v("B")), mul(c(-1), mul(v("H"), v("H")))));
  EXPECT_EQ(mul(mul(v("H"), v("B")), c(2)), mul(c(2), mul(v("B"), v("H"))));
  EXPECT_EQ(*mul(add(v("A"), c(1)), add(v("B"), c(2))).evaluate({{"A", 3}, {"B", 5}}), 28); // 4 * 7
  // A product of sums is bounded: (A1 + ... + A40) squared would have 820
  // terms (1681 pairs to expand), past Dim::kMaxProductTerms.
  Dim wide = c(0);
  for (int i = 0; i < 40; ++i)
    wide = add(wide, v(("A" + std::to_string(i)).c_str()));
  EXPECT_FALSE(Dim::mul(wide, wide).has_value());
  EXPECT_TRUE(Dim::mul(wide, add(v("B"), c(1))).has_value()); // 41 * 2 pairs
  EXPECT_FALSE(Dim::mul(c(INT64_MAX), c(2)).has_value());        // overflow
  EXPECT_EQ(Dim::div(v("D"), 8)->substitute({{"D", c(24)}})->str(), "3");
  EXPECT_EQ(*add(mul(c(2), v("S")), c(1)).evaluate({{"S", 5}}), 11);
}

TEST(DimTest, ExactQuotientsDivideAsPolynomials) {
  Dim ch = *Dim::divBy(v("C"), v("H"));
  EXPECT_EQ(ch.str(), "C / H");
  // H * (C / H) is C, whichever side the quotient is on, with coefficients.
  EXPECT_EQ(mul(v("H"), ch).str(), "C");
  EXPECT_EQ(mul(ch, mul(c(3), v("H"))).str(), "3*C");
  // KV * (C / H) stays a product; B*H*(C / H) is B*C.
  EXPECT_EQ(mul(v("KV"), ch).str(), "(C / H)*KV");
  EXPECT_EQ(mul(mul(v("B"), v("H")), ch).str(), "B*C");
  // A quotient of a sum: H * ((C + H) / H) is C + H.
  EXPECT_EQ(mul(v("H"), *Dim::divBy(add(v("C"), v("H")), v("H"))).str(), "C + H");
  // The monomial divides each term: (2*H*Dh + H) / H is 2*Dh + 1, its remainder 0.
  Dim wide = add(mul(c(2), mul(v("H"), v("Dh"))), v("H"));
  EXPECT_EQ(Dim::divBy(wide, v("H"))->str(), "2*Dh + 1");
  EXPECT_EQ(Dim::modBy(wide, v("H"))->str(), "0");
  // (H*Dh + 1) / H does not divide as polynomials: an atom.
  EXPECT_EQ(Dim::divBy(add(mul(v("H"), v("Dh")), c(1)), v("H"))->str(), "(Dh*H + 1) / H");
  // A coefficient the divisor's does not divide is kept: (3*C) / (2*H).
  EXPECT_EQ(mul(v("H"), *Dim::divBy(v("C"), mul(c(2), v("H")))).str(), "(C / (2*H))*H");
  EXPECT_EQ(mul(mul(c(2), v("H")), *Dim::divBy(v("C"), mul(c(2), v("H")))).str(), "C");
  // By a constant it is floor division, as before.
  EXPECT_EQ(Dim::divBy(v("C"), c(4))->str(), "C / 4");
  // Bound sizes: 24 / 4 = 6.
  EXPECT_EQ(*mul(v("KV"), ch).evaluate({{"KV", 2}, {"C", 24}, {"H", 4}}), 12);
}

TEST(DimTest, SolverProvesRefutesAndReportsCounterexamples) {
  ShapeSolver solver;
  ShapeContext none;
  // K == N fails: the counterexample must actually break it.
  ProofResult r = solver.prove(none, {{{v("K"), Rel::Eq, v("N")}}});
  ASSERT_EQ(r.status, ProofResult::Status::Refuted);
  EXPECT_NE(r.counterexample.at("K"), r.counterexample.at("N"));
  EXPECT_GE(r.counterexample.at("K"), 1);
  // D >= 1 by default: 0 <= D - 1 by the normal form alone.
  r = solver.prove(none, {{{c(0), Rel::Le, Dim::sub(v("D"), c(1)).value()}}});
  EXPECT_EQ(r.status, ProofResult::Status::Proved);
  EXPECT_TRUE(r.settledByNormalForm);
  // D % 8 == 0 proves (D / 8) * 8 == D, which needs Z3.
  ShapeContext aligned;
  aligned.facts.push_back({*Dim::mod(v("D"), 8), Rel::Eq, c(0)});
  r = solver.prove(aligned, {{{mul(*Dim::div(v("D"), 8), c(8)), Rel::Eq, v("D")}}});
  EXPECT_EQ(r.status, ProofResult::Status::Proved);
  EXPECT_FALSE(r.settledByNormalForm);
  r = solver.prove(none, {{{mul(*Dim::div(v("D"), 8), c(8)), Rel::Eq, v("D")}}});
  ASSERT_EQ(r.status, ProofResult::Status::Refuted);
  EXPECT_NE(r.counterexample.at("D") % 8, 0);
  // A disjunction: d == e or d == 1.
  ShapeContext one;
  one.facts.push_back({v("A"), Rel::Eq, c(1)});
  r = solver.prove(one, {{{v("A"), Rel::Eq, v("B")}, {v("A"), Rel::Eq, c(1)}}});
  EXPECT_EQ(r.status, ProofResult::Status::Proved);
  EXPECT_EQ(solver.stats().obligations, 5u);
}

TEST(DimTest, HardNonLinearObligationIsNeverAccepted) {
  // x^3 + y^3 == z^3 has no positive solution (Fermat, n = 3), but proving
  // it is beyond Z3's nonlinear arithmetic within the timeout: the answer
  // must be "unknown", never "proved".
  ShapeSolver solver(200);
  ShapeContext context;
  Dim x3 = mul(mul(v("X"), v("X")), v("X"));
  Dim y3 = mul(mul(v("Y"), v("Y")), v("Y"));
  Dim z3 = mul(mul(v("Z"), v("Z")), v("Z"));
  ProofResult r = solver.prove(context, {{{add(x3, y3), Rel::Ne, z3}}});
  EXPECT_NE(r.status, ProofResult::Status::Proved);
  EXPECT_NE(r.status, ProofResult::Status::Refuted);
}

} // namespace
