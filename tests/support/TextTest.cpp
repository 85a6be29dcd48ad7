//===- TextTest.cpp -------------------------------------------------------===//
#include "keel/support/Source.h"
#include "keel/support/Text.h"

#include <gtest/gtest.h>

using namespace keel;

TEST(TextTest, FixedHexRequiresPrefixAndExactWidth) {
  EXPECT_EQ(parseFixedHex("0x3c00", 4), 0x3c00u);
  EXPECT_EQ(parseFixedHex("0X3C00", 4), 0x3c00u);
  EXPECT_EQ(parseFixedHex("0xffffffffffffffff", 16), ~uint64_t{0});
  for (const char *bad : {"3c00", "0x3c0", "0x03c00", "0x3g00", "0x", "", "0x3c00 ", "-0x3c00"})
    EXPECT_FALSE(parseFixedHex(bad, 4).has_value()) << bad;
}

TEST(TextTest, FixedHexPrintsLowercaseWithLeadingZeros) {
  EXPECT_EQ(formatFixedHex(0x3c00, 4), "0x3c00");
  EXPECT_EQ(formatFixedHex(0x1, 2), "0x01");
  EXPECT_EQ(formatFixedHex(0xABCDEF, 8), "0x00abcdef");
}

TEST(TextTest, FieldsAndTrim) {
  EXPECT_EQ(trim("  a b\t\r"), "a b");
  auto fields = splitFields(" 0x3c00\t 0x4000  ");
  ASSERT_EQ(fields.size(), 2u);
  EXPECT_EQ(fields[0], "0x3c00");
  EXPECT_EQ(fields[1], "0x4000");
  EXPECT_TRUE(splitFields("   ").empty());
}

// An IR location (file name, 1-based line and column) back to a span of the
// loaded source: what exits report E0915 at.
TEST(SourceManager, SpanAtLineAndColumn) {
  keel::SourceManager sources;
  keel::FileId f = sources.add("a.sfn", "fn f() {\n  let x = 1;\n}\n");
  keel::Span s = sources.spanAt("a.sfn", 2, 7); // the `x`
  ASSERT_TRUE(s.valid());
  EXPECT_EQ(s.file, f);
  EXPECT_EQ(sources.slice(s), "x");
  EXPECT_FALSE(sources.spanAt("b.sfn", 2, 7).valid()); // not loaded
  EXPECT_FALSE(sources.spanAt("a.sfn", 9, 1).valid()); // past the last line
  EXPECT_FALSE(sources.spanAt("a.sfn", 0, 1).valid());
}
