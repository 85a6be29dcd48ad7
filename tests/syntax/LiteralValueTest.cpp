//===- LiteralValueTest.cpp - Literals carry their rounded encodings -----===//
//
// The checker rounds each float literal once, from its decimal text, into
// the type its context gives it. Expected encodings are worked by hand.
//
//===----------------------------------------------------------------------===//
#include "keel/sema/Checker.h"
#include "keel/syntax/Parser.h"

#include <gtest/gtest.h>

using namespace keel;

namespace {

/// The encoding of the float literal initializing `name`.
uint64_t literalBits(const std::string &program, const std::string &name) {
  SourceManager sources;
  FileId f = sources.add("t.sfn", program);
  DiagnosticEngine diags(sources);
  syntax::Program p = syntax::parse(sources, f, diags);
  sema::CheckedProgram checked = sema::check(sources, p, diags);
  EXPECT_EQ(diags.errorCount(), 0u);
  for (const syntax::FunctionDecl &fn : p.functions)
    for (const syntax::StmtPtr &s : fn.body.stmts)
      if (auto *let = s->as<syntax::LetStmt>(); let && let->name == name) {
        const syntax::Expr *e = let->init.get();
        if (auto *u = e->as<syntax::UnaryExpr>())
          e = u->operand.get();
        if (auto *c = e->as<syntax::CastExpr>())
          e = c->operand.get();
        auto it = checked.floatLiterals.find(e);
        EXPECT_NE(it, checked.floatLiterals.end()) << name;
        return it == checked.floatLiterals.end() ? ~0ull : it->second;
      }
  ADD_FAILURE() << "no let " << name;
  return ~0ull;
}

TEST(LiteralValueTest, LiteralsRoundOnceIntoTheirContextsType) {
  const std::string program = R"(
fn main() ![io] {
    let a: fp8e4m3fn = 1000.0;
    let b: f16 = 1e-8;
    let c: f16 = 1e-7;
    let d: bf16 = 0.1;
    let e = 0.125 as bf16;
    let f: fp8e4m3fn = -1.75;
    let g: f16 = 65519.99999999999999999999;
    let h: tf32 = 3.14159265;
    let i = 0.1;
}
)";
  EXPECT_EQ(literalBits(program, "a"), 0x7Eu);   // saturates to 448
  EXPECT_EQ(literalBits(program, "b"), 0x0000u); // below 2^-25: zero
  EXPECT_EQ(literalBits(program, "c"), 0x0002u); // 1e-7 / 2^-24 = 1.68: two quanta
  EXPECT_EQ(literalBits(program, "d"), 0x3DCDu);
  EXPECT_EQ(literalBits(program, "e"), 0x3E00u); // 2^-3
  EXPECT_EQ(literalBits(program, "f"), 0xBEu);
  EXPECT_EQ(literalBits(program, "g"), 0x7BFFu); // below the overflow threshold 65520
  EXPECT_EQ(literalBits(program, "h"), 0x40490000u);
  EXPECT_EQ(literalBits(program, "i"), 0x3FB999999999999Au); // f64 by default
}

} // namespace
