//===- DiagnosticsTest.cpp - Rendering, JSON, documented codes -----------===//
#include "keel/support/Diagnostics.h"
#include "keel/support/Codes.h"

#include <fstream>
#include <gtest/gtest.h>
#include <sstream>

using namespace keel;

TEST(DiagnosticsTest, RendersTheSpecificationsExample) {
  // The rendering shown in the front-end issue, character for character.
  SourceManager sources;
  FileId f = sources.add("model.sfn", "fn f(a: f16, b: bf16) {\n  \n    let c = a + b;\n}\n");
  DiagnosticEngine diags(sources);
  uint32_t at = static_cast<uint32_t>(std::string(sources.text(f)).find("a + b"));
  diags.error("E0911", {f, at, at + 5}, "mixed low-precision formats `f16` and `bf16` in `+`")
      .help("convert explicitly, e.g. `(a as f32) + (b as f32)`");
  EXPECT_EQ(renderText(sources, diags.diagnostics()[0], false),
            "error[E0911]: mixed low-precision formats `f16` and `bf16` in `+`\n"
            "  --> model.sfn:3:13\n"
            "   |\n"
            " 3 |     let c = a + b;\n"
            "   |             ^^^^^\n"
            "   = help: convert explicitly, e.g. `(a as f32) + (b as f32)`\n");
}

TEST(DiagnosticsTest, JsonHasEveryFieldAndEscapes) {
  SourceManager sources;
  FileId f = sources.add("a \"b\".sfn", "x\ny = 1;\n");
  DiagnosticEngine diags(sources);
  diags.error("E0100", {f, 2, 3}, "`y` is \"not\" defined").note({f, 0, 1}, "see\there");
  EXPECT_EQ(renderJson(sources, diags.diagnostics()[0]),
            "{\"code\":\"E0100\",\"severity\":\"error\",\"message\":\"`y` is \\\"not\\\" defined\","
            "\"file\":\"a \\\"b\\\".sfn\",\"line\":2,\"column\":1,\"end_line\":2,\"end_column\":2,"
            "\"notes\":[{\"message\":\"see\\there\",\"file\":\"a \\\"b\\\".sfn\",\"line\":1,"
            "\"column\":1,\"end_line\":1,\"end_column\":2}],\"help\":[]}");
}

TEST(DiagnosticsTest, InternalErrorsSayTheyAreKeelsBugs) {
  SourceManager sources;
  FileId f = sources.add("x.sfn", "fn f() {}\n");
  DiagnosticEngine diags(sources);
  diags.internalError({f, 0, 2}, "verifier failed after fusion");
  std::string text = renderText(sources, diags.diagnostics()[0], false);
  EXPECT_EQ(text.rfind("internal compiler error: verifier failed after fusion\n", 0), 0u) << text;
  EXPECT_NE(text.find("this is a bug in Keel"), std::string::npos);
  EXPECT_EQ(diags.errorCount(), 1u);
  EXPECT_NE(renderJson(sources, diags.diagnostics()[0]).find("\"severity\":\"internal\""), std::string::npos);
}

TEST(DiagnosticsTest, ColourOnlyWhenAsked) {
  SourceManager sources;
  FileId f = sources.add("x.sfn", "x\n");
  DiagnosticEngine diags(sources);
  diags.warning("W0901", {f, 0, 1}, "w");
  EXPECT_EQ(renderText(sources, diags.diagnostics()[0], false).find('\x1b'), std::string::npos);
  EXPECT_NE(renderText(sources, diags.diagnostics()[0], true).find("\x1b[1;33mwarning"), std::string::npos);
}

TEST(DiagnosticsTest, EveryCodeIsDocumented) {
  std::ifstream in(KEEL_TEST_SOURCE_DIR "/../docs/diagnostics.md");
  ASSERT_TRUE(in) << "docs/diagnostics.md";
  std::stringstream buffer;
  buffer << in.rdbuf();
  std::string docs = buffer.str();
  for (const DiagnosticCodeInfo &c : allDiagnosticCodes())
    EXPECT_NE(docs.find("## " + std::string(c.code)), std::string::npos)
        << c.code << " (" << c.meaning << ") has no section in docs/diagnostics.md";
}
