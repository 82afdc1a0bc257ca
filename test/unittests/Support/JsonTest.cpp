//===- JsonTest.cpp - Reading JSON with field-and-rule errors -------------===//

#include "attnc/Support/Json.h"

#include <gtest/gtest.h>

#include <limits>
#include <string>

using namespace attnc;
using namespace attnc::json_util;

namespace {

/// "field: rule" of a failed parse, or "ok".
std::string parseMessage(std::string_view text, std::size_t depth = 8) {
  Result<json> parsed = parseObject(text, "doc", depth);
  if (parsed.ok())
    return "ok";
  EXPECT_EQ(parsed.status().code(), StatusCode::InvalidArgument);
  return parsed.status().message();
}

} // namespace

TEST(Json, ParsesAnObject) {
  Result<json> parsed = parseObject("{\"a\": [1, 2]}", "doc", 8);
  ASSERT_TRUE(parsed.ok()) << parsed.status().message();
  EXPECT_EQ((*parsed)["a"][1], 2);
}

TEST(Json, ParseErrorsNameTheDocumentAndThePosition) {
  EXPECT_EQ(parseMessage(""), "doc: empty input (expected a JSON object)");
  EXPECT_EQ(parseMessage(" \n\t"), "doc: empty input (expected a JSON object)");
  EXPECT_EQ(parseMessage("[1]"),
            "doc: top level must be a JSON object (got an array)");
  EXPECT_EQ(parseMessage("\"x\""),
            "doc: top level must be a JSON object (got string \"x\")");
  std::string syntax = parseMessage("{\n  \"a\": }");
  EXPECT_EQ(syntax.rfind("doc: not valid JSON: parse error at line 2, column "
                         "8: syntax error",
                         0),
            0u)
      << syntax;
}

TEST(Json, SyntaxErrorsQuoteInvalidUtf8AsEscapes) {
  std::string message = parseMessage("{\"a\": \xff}");
  EXPECT_NE(message.find("\\xff"), std::string::npos) << message;
  for (unsigned char c : message)
    EXPECT_LT(c, 0x80) << message;
}

TEST(Json, DepthIsBoundedBeforeTheDomIsBuilt) {
  EXPECT_EQ(parseMessage("{\"a\": [[[]]]}", 4), "ok");
  EXPECT_EQ(parseMessage("{\"a\": [[[[]]]]}", 4),
            "doc: not supported: JSON nested deeper than 4 levels");
  // Far deeper than any stack would survive recursively.
  std::string deep =
      "{\"a\": " + std::string(1000000, '[') + std::string(1000000, ']') + "}";
  EXPECT_EQ(parseMessage(deep, 64),
            "doc: not supported: JSON nested deeper than 64 levels");
}

TEST(Json, Describe) {
  EXPECT_EQ(describe(json(nullptr)), "null");
  EXPECT_EQ(describe(json(true)), "true");
  EXPECT_EQ(describe(json("32")), "string \"32\"");
  EXPECT_EQ(describe(json(32)), "32");
  EXPECT_EQ(describe(json(32.0)), "32.0");
  EXPECT_EQ(describe(json::array({1})), "an array");
  EXPECT_EQ(describe(json::object()), "an object");
}

TEST(Json, QuotingEscapesAndCuts) {
  EXPECT_EQ(inQuotes("a\nb"), "\"a\\x0ab\"");
  EXPECT_EQ(inQuotes(std::string(41, 'x')),
            "\"" + std::string(40, 'x') + "...\"");
  // The cut never splits a UTF-8 character (U+00E9 is two bytes).
  std::string accents = std::string(39, 'x') + "\xc3\xa9" + "yy";
  EXPECT_EQ(inQuotes(accents), "\"" + std::string(39, 'x') + "...\"");
  EXPECT_EQ(printable("\xc3\xa9", /*ascii_only=*/true), "\\xc3\\xa9");
  EXPECT_EQ(printable("\xc3\xa9"), "\xc3\xa9");
}

TEST(Json, FormatNumberIsShortestRoundTrip) {
  EXPECT_EQ(formatNumber(0.334), "0.334");
  EXPECT_EQ(formatNumber(1e-6), "1e-06");
  EXPECT_EQ(formatNumber(150000.0), "1.5e+05"); // %g, shortest
  EXPECT_EQ(formatNumber(0.1 + 0.2), "0.30000000000000004");
}

TEST(Json, Paths) {
  EXPECT_EQ(memberPath("", "a"), "a");
  EXPECT_EQ(memberPath("text_config", "head_dim"), "text_config.head_dim");
  EXPECT_EQ(indexPath("layer_types", 3), "layer_types[3]");
}

TEST(Json, ReadInteger) {
  EXPECT_EQ(*readInteger(json(5), "n", 1, 10), 5);
  EXPECT_EQ(readInteger(json(0), "n", 1, 10).status().message(),
            "n: must be >= 1 (got 0)");
  EXPECT_EQ(readInteger(json(11), "n", 1, 10).status().message(),
            "n: must be <= 10 (got 11)");
  EXPECT_EQ(readInteger(json(-3), "n", 0, 10).status().message(),
            "n: must be >= 0 (got -3)");
  // Above int64's range: compared unsigned, never wrapped.
  EXPECT_EQ(readInteger(json(std::numeric_limits<uint64_t>::max()), "n", 0,
                        std::numeric_limits<int64_t>::max())
                .status()
                .message(),
            "n: must be <= 9223372036854775807 (got 18446744073709551615)");
  EXPECT_EQ(readInteger(json(32.0), "n", 0, 64).status().message(),
            "n: must be an integer (got 32.0)");
  EXPECT_EQ(readInteger(json(true), "n", 0, 64).status().message(),
            "n: must be an integer (got true)");
  EXPECT_EQ(readInteger(json("32"), "n", 0, 64).status().message(),
            "n: must be an integer (got string \"32\")");
}

TEST(Json, ReadOtherTypes) {
  EXPECT_EQ(*readNumber(json(2), "x"), 2.0);
  EXPECT_EQ(readNumber(json("2"), "x").status().message(),
            "x: must be a number (got string \"2\")");
  EXPECT_EQ(*readBool(json(false), "b"), false);
  EXPECT_EQ(readBool(json(0), "b").status().message(),
            "b: must be true or false (got 0)");
  EXPECT_EQ(*readString(json("s"), "s"), "s");
  EXPECT_EQ(readString(json::array(), "s").status().message(),
            "s: must be a string (got an array)");
}

TEST(Json, RequiredAndKnownKeys) {
  json object = {{"a", 1}, {"_note", "x"}};
  Result<const json *> a = required(object, "top", "a");
  ASSERT_TRUE(a.ok());
  EXPECT_EQ(**a, 1);
  EXPECT_EQ(required(object, "top", "b").status().message(),
            "top.b: required field is missing");
  EXPECT_EQ(checkKnownKeys(object, "top", {"a", "b"}).message(),
            "top._note: unknown key (expected one of: a, b)");
  EXPECT_TRUE(checkKnownKeys(object, "top", {"a", "b"},
                             /*underscore_comments=*/true)
                  .ok());
  EXPECT_EQ(checkKnownKeys(json{{"a\n", 1}}, "", {"a"}).message(),
            "a\\x0a: unknown key (expected one of: a)");
  EXPECT_TRUE(checkKnownKeys(json::array(), "", {"a"}).ok());
}

TEST(Json, Identifiers) {
  EXPECT_TRUE(isIdentifier("full_attention"));
  EXPECT_TRUE(isIdentifier("_x9"));
  EXPECT_FALSE(isIdentifier(""));
  EXPECT_FALSE(isIdentifier("9x"));
  EXPECT_FALSE(isIdentifier("my-kernel"));
  EXPECT_FALSE(isIdentifier("caf\xc3\xa9"));
}

TEST(Json, DuplicateKeysAreRefusedWithTheirPath) {
  EXPECT_EQ(parseMessage(R"({"a": 1, "a": 2})"),
            "a: duplicate key: given more than once in one object");
  EXPECT_EQ(parseMessage(R"({"a": {"b": [0, {"c": 1, "c": 1}]}})"),
            "a.b[1].c: duplicate key: given more than once in one object");
  EXPECT_EQ(parseMessage(R"({"a": [[], [], {"x": 1}, {"y": 1, "y": 2}]})"),
            "a[3].y: duplicate key: given more than once in one object");
  // The same key in sibling objects, or after an object closed, is fine.
  EXPECT_EQ(parseMessage(R"({"a": {"k": 1}, "b": {"k": 1}, "c": [{"k": 1}, {"k": 2}]})"),
            "ok");
}
