//===- CounterexampleTest.cpp - Counterexamples really break the rule ----===//
//
// For programs with one shape bug, the checker's counterexample (the values
// in "which fails for ...") must satisfy the function's context and violate
// the obligation, both written here independently as plain C++ predicates.
//
//===----------------------------------------------------------------------===//
#include "keel/sema/Checker.h"
#include "keel/syntax/Parser.h"

#include <functional>
#include <gtest/gtest.h>
#include <regex>

using namespace keel;

namespace {

using Values = std::map<std::string, int64_t>;

struct Case {
  const char *program;
  const char *code;
  std::function<bool(Values &)> context;    ///< the requires clause and >= 1
  std::function<bool(Values &)> obligation; ///< what the rule needs
};

Values counterexample(const std::string &program, const std::string &code) {
  SourceManager sources;
  FileId f = sources.add("t.sfn", program);
  DiagnosticEngine diags(sources);
  syntax::Program p = syntax::parse(sources, f, diags);
  sema::check(sources, p, diags);
  Values values;
  for (const Diagnostic &d : diags.diagnostics()) {
    EXPECT_EQ(d.code, code) << d.message;
    for (const DiagNote &n : d.notes) {
      std::smatch m;
      if (!std::regex_search(n.message, m, std::regex("which fails for (.*)$")))
        continue;
      std::string list = m[1];
      std::regex item("([A-Za-z_][A-Za-z0-9_]*) = (-?[0-9]+)");
      for (auto it = std::sregex_iterator(list.begin(), list.end(), item); it != std::sregex_iterator(); ++it)
        values[(*it)[1]] = std::stoll((*it)[2]);
    }
  }
  EXPECT_EQ(diags.errorCount(), 1u) << program;
  return values;
}

TEST(CounterexampleTest, ValuesSatisfyTheContextAndBreakTheRule) {
  auto positive = [](std::vector<std::string> names) {
    return [names](Values &v) {
      for (const std::string &n : names)
        if (v[n] < 1)
          return false;
      return true;
    };
  };
  const Case cases[] = {
      {"fn f(a: Tensor<f32, [M, K]>, b: Tensor<f32, [J, N]>) { let c = matmul(a, b); }", "E0201",
       positive({"K", "J"}), [](Values &v) { return v["K"] == v["J"]; }},
      {"fn f(x: Tensor<f32, [N, D]>) -> Tensor<f32, [N, 4]> requires D >= 3 {\n"
       "  return slice(x, axis: 1, start: 2, stop: 6); }",
       "E0206", [](Values &v) { return v["D"] >= 3; }, [](Values &v) { return 6 <= v["D"]; }},
      {"fn g(x: Tensor<f32, [N, D]>) -> Tensor<f32, [N, D]> requires D % 4 == 0 { return x; }\n"
       "fn f(x: Tensor<f32, [A, C]>) -> Tensor<f32, [A, C]> requires C % 2 == 0 { return g(x); }",
       "E0208", [](Values &v) { return v["C"] >= 1 && v["C"] % 2 == 0; },
       [](Values &v) { return v["C"] % 4 == 0; }},
      {"fn f(x: Tensor<f32, [N, D]>, y: Tensor<f32, [N, E]>) requires D + E == 10 { let z = x + y; }", "E0200",
       [](Values &v) { return v["D"] >= 1 && v["E"] >= 1 && v["D"] + v["E"] == 10; },
       [](Values &v) { return v["D"] == v["E"]; }},
      {"fn f(x: Tensor<f32, [N, D]>) requires D % 8 == 0 { let r = reshape(x, [N, D / 8, 8]);\n"
       "  let w: Tensor<f32, [N, D / 4, 8]> = r; }",
       "E0210", [](Values &v) { return v["D"] >= 1 && v["D"] % 8 == 0; },
       [](Values &v) { return v["D"] / 8 == v["D"] / 4; }},
  };
  for (const Case &c : cases) {
    SCOPED_TRACE(c.program);
    Values v = counterexample(c.program, c.code);
    ASSERT_FALSE(v.empty()) << "no counterexample";
    EXPECT_TRUE(c.context(v)) << "the counterexample must be an allowed size";
    EXPECT_FALSE(c.obligation(v)) << "the counterexample must break the rule";
  }
}

} // namespace
