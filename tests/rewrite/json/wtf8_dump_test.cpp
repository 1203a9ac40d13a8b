// Lone UTF-16 surrogates in answers: parse_checked keeps them (as WTF-8),
// checked::dump writes them back as the escapes they came as, and everything
// else is written exactly as nlohmann writes it.
#include <catch2/catch.hpp>

#include <nlohmann/json.hpp>

#include "rewrite/json/checked.hpp"
#include "rewrite/json/tree.hpp"
#include "rewrite/json/wtf8_dump.hpp"
#include "rewrite/text/utf8.hpp"

using namespace gistproxy::rewrite;

TEST_CASE("parse_checked keeps a lone surrogate and checked::dump writes it back as the escape it came as") {
  auto [doc, dumped] = GENERATE(table<std::string, std::string>({
      {R"({"text":"\ud83d"})", R"({"text":"\ud83d"})"},                        // a high surrogate alone
      {R"({"text":"a\udc00b"})", R"({"text":"a\udc00b"})"},                    // a low surrogate alone
      {R"({"text":"\uD83D!"})", R"({"text":"\ud83d!"})"},                      // hex case as nlohmann writes escapes
      {R"({"\ud83d":["\ud83d\ud83d\ude00"]})", R"({"\ud83d":["\ud83d😀"]})"},  // in a key; then a real pair
      {"{\"text\":\"\xED\xA0\xBD\"}", R"({"text":"\ud83d"})"},                 // its three raw bytes (WTF-8)
      {"{\"t\":\"\xED\xA0\xBD\xED\xB8\x80\"}", R"({"t":"😀"})"},                // a pair as two raw halves (CESU-8)
      {"{\"t\":\"\\ud83d\xED\xB8\x80\"}", R"({"t":"😀"})"},                    // an escaped half beside a raw one
      {R"({"a":"\ud83d\n\"q\"","n":1.5,"b":[true,null]})", R"({"a":"\ud83d\n\"q\"","b":[true,null],"n":1.5})"},
  }));
  CAPTURE(doc);
  auto tree = json::parse_checked(doc);
  REQUIRE_FALSE(tree.is_discarded());
  const auto out = checked::dump(tree);
  CHECK(out == dumped);
  CHECK(out.find("\xEF\xBF\xBD") == std::string::npos);  // never U+FFFD
  CHECK(json::parse_checked(out) == tree);                // and it reads back the same
}

TEST_CASE("parse_tree stays as strict as nlohmann, parse_checked refuses all it refuses but lone surrogates") {
  const std::string lone = R"({"a":"\ud800"})";
  CHECK_FALSE(json::parse_tree(lone));
  CHECK(json::parse_tree(lone, 16, json::lone_surrogates::keep));
  for (std::string bad : {std::string("{\"a\":\"line\nbreak\"}"), std::string("{\"a\":\"\xff\"}"),
                          std::string("{\"a\":\"\xC0\x80\"}"), std::string("{\"a\":\"\xED\xA0\"}"),
                          std::string(R"({"a":"\ud83"})"), std::string(R"({"a":"\ud83d)")}) {
    INFO(bad);
    CHECK(json::parse_checked(bad).is_discarded());
  }
}

TEST_CASE("the surrogate-keeping writer writes every tree nlohmann can write exactly as nlohmann does") {
  const auto tree = nlohmann::json::parse(R"({"z":{"":[],"o":{}},"a":"caf\u00e9 \"q\" \\ \/ \b\f\n\r\t \u0001 \u001f \u007f)"
                                          R"( \ud83d\ude00","n":[-0,1e300,-12,18446744073709551615,0.1],"t":[true,false,null]})");
  CHECK(json::dump_wtf8(tree) == tree.dump());
  const nlohmann::ordered_json ordered = nlohmann::ordered_json::parse(R"({"z":1,"a":"x"})");
  CHECK(json::dump_wtf8(ordered) == ordered.dump());
}

TEST_CASE("bytes that are neither UTF-8 nor a surrogate are written as U+FFFD, never a throw") {
  nlohmann::json j = std::string("a\xff" "b\xED\xA0");
  CHECK(checked::dump(j) == "\"a\xEF\xBF\xBD" "b\xEF\xBF\xBD\xEF\xBF\xBD\"");
}

TEST_CASE("UTF-8 with surrogates accepts a surrogate's three bytes and nothing else UTF-8 refuses") {
  CHECK(text::is_utf8_with_surrogates("\xED\xA0\xBD"));
  CHECK(text::is_utf8_with_surrogates("\xED\xBF\xBF"));
  CHECK_FALSE(text::is_valid_utf8("\xED\xA0\xBD"));
  for (std::string bad : {std::string("\xff"), std::string("\xC0\x80"), std::string("\xED\xA0"),
                          std::string("\xF4\x90\x80\x80"), std::string("\xE0\x80\x80")}) {
    INFO(bad.size());
    CHECK_FALSE(text::is_utf8_with_surrogates(bad));
  }
}
