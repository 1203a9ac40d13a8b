#include "rewrite/json/scanner.hpp"
#include "rewrite/json/tree.hpp"

#include <catch2/catch.hpp>
#include <nlohmann/json.hpp>
#include <random>

using namespace gistproxy::rewrite;

TEST_CASE("the scanner reports exact byte ranges of member values") {
  std::string doc = R"( {"a": [1, {"b": "x\"}y"}], "c" : "d", "n": -1.5e3, "t": true, "z": null} )";
  json::cursor c(doc);
  std::map<std::string, std::string> values;
  auto r = c.object([&](std::string_view key, json::cursor& v) {
    auto range = v.skip_value();
    if (range) values[std::string(key)] = doc.substr(range->begin, range->size());
    return range.has_value();
  });
  REQUIRE(r);
  CHECK(c.at_end());
  CHECK(values["a"] == R"([1, {"b": "x\"}y"}])");
  CHECK(values["c"] == R"("d")");
  CHECK(values["n"] == "-1.5e3");
  CHECK(values["t"] == "true");
  CHECK(values["z"] == "null");
}

TEST_CASE("malformed JSON fails instead of being misread") {
  auto bad = GENERATE(as<std::string>{}, R"({"a": })", R"({"a": "unterminated})", R"({"a" 1})", R"([1, 2)",
                      R"({"a": [}])", R"(tru)", "");
  json::cursor c(bad);
  CHECK_FALSE(c.skip_value());
}

TEST_CASE("strings unescape to their exact UTF-8 bytes") {
  std::string out;
  REQUIRE(json::unescape(R"(a\"b\\c\/d\n\r\t\b\f\u0000\u00e9\ud83d\ude00)", out));
  CHECK(out == std::string("a\"b\\c/d\n\r\t\b\f") + std::string(1, '\0') + "\xC3\xA9\xF0\x9F\x98\x80");
  std::string bad;
  CHECK_FALSE(json::unescape(R"(\x)", bad));
  CHECK_FALSE(json::unescape(R"(\u12)", bad));
}

TEST_CASE("escape then unescape returns the same bytes for random content") {
  std::mt19937 rng(42);
  for (int round = 0; round < 200; ++round) {
    std::string bytes;
    std::size_t n = rng() % 300;
    for (std::size_t i = 0; i < n; ++i) {
      switch (rng() % 6) {
        case 0: bytes += char(rng() % 32); break;      // control characters incl. NUL
        case 1: bytes += "\"\\"[rng() % 2]; break;     // quote, backslash
        case 2: bytes += "\xC3\xA9"; break;            // 2-byte UTF-8
        case 3: bytes += "\xF0\x9F\x98\x80"; break;    // 4-byte UTF-8
        case 4: bytes += "\r\n"; break;
        default: bytes += char('a' + rng() % 26);
      }
    }
    std::string escaped;
    json::escape_into(escaped, bytes);
    // nlohmann agrees it is a valid JSON string with the same content.
    CHECK(nlohmann::json::parse("\"" + escaped + "\"").get<std::string>() == bytes);
    std::string back;
    REQUIRE(json::unescape(escaped, back));
    CHECK(back == bytes);
  }
}

TEST_CASE("arrays are walked element by element") {
  std::string doc = R"([ "a", {"x": 1}, [2, 3] ])";
  json::cursor c(doc);
  std::vector<json::kind> kinds;
  REQUIRE(c.array([&](std::size_t, json::cursor& e) {
    kinds.push_back(e.peek());
    return e.skip_value().has_value();
  }));
  CHECK(kinds == std::vector<json::kind>{json::kind::string, json::kind::object, json::kind::array});
}

TEST_CASE("deep nesting is bounded, not a stack overflow") {
  std::string deep(100000, '[');
  json::cursor c(deep);
  CHECK_FALSE(c.skip_value());
}

TEST_CASE("parse_tree builds the tree nlohmann's parser builds") {
  const char* docs[] = {
      R"({"prompt_tokens":250,"completion_tokens":1,"total_tokens":251})",
      R"({"input_tokens":12,"cache_creation":{"ephemeral_5m_input_tokens":0},"service_tier":"standard"})",
      R"({"promptTokenCount":9,"promptTokensDetails":[{"modality":"TEXT","tokenCount":9}],"thoughtsTokenCount":null})",
      R"({"big":18446744073709551615,"neg":-9223372036854775808,"huge":1e400,"f":-1.5e3,"z":-0,"zero":0})",
      R"({"a\u00e9\n":"\ud83d\ude00 caf\u00e9","a\u00e9\n":"last wins","t":true,"f":false})",
      R"( [ 1 , [ ] , { } , "" ] )",
      R"("just a string")",
      R"(123456789012345678901234567890)",
  };
  for (const char* d : docs) {
    INFO(d);
    auto theirs = nlohmann::json::parse(d, nullptr, false);
    if (theirs.is_discarded()) {  // nlohmann refuses 1e400 (out of range): so must we
      CHECK_FALSE(json::parse_tree(d));
      continue;
    }
    auto ours = json::parse_tree(d);
    REQUIRE(ours);
    CHECK(*ours == theirs);
    CHECK(ours->dump() == theirs.dump());  // same number types, not just equal values
  }
}

TEST_CASE("parse_tree refuses what is not JSON, too deep, or not UTF-8") {
  for (std::string bad : {std::string(R"({"a":01})"), std::string(R"({"a":nul})"), std::string(R"({"a":1,})"),
                          std::string(R"({"a":1} x)"), std::string(R"({"a":"\x"})"), std::string("{\"a\":\"\xff\"}"),
                          std::string(R"({"a":-})"), std::string(R"({"a":1.})"), std::string("")}) {
    INFO(bad);
    CHECK_FALSE(json::parse_tree(bad));
  }
  std::string deep = std::string(17, '[') + std::string(17, ']');
  CHECK_FALSE(json::parse_tree(deep, 16));
  CHECK(json::parse_tree(deep, 17));
}

TEST_CASE("parse_tree is as strict as nlohmann about strings") {
  for (std::string bad : {std::string("{\"a\":\"line\nbreak\"}"), std::string(R"({"a":"\ud800"})"),
                          std::string(R"({"\udc00":1})"), std::string("[\"\x01\"]")}) {
    INFO(bad);
    CHECK(nlohmann::json::parse(bad, nullptr, false).is_discarded());
    CHECK_FALSE(json::parse_tree(bad));
  }
}

TEST_CASE("step_to moves over known whole values inside an array, and never backwards or past the document") {
  const std::string doc = R"([{"a":1}, "two", 3, [4]])";
  // Stepping over the first two elements lands where a walk of them ends: the walk goes on from there.
  json::cursor c(doc);
  std::vector<std::string> seen;
  auto r = c.array([&](std::size_t index, json::cursor& e) {
    if (index == 0) return e.step_to(doc.find(", 3"));
    auto v = e.skip_value();
    if (v) seen.emplace_back(doc.substr(v->begin, v->size()));
    return v.has_value();
  });
  REQUIRE(r);
  CHECK(seen == std::vector<std::string>{"3", "[4]"});
  CHECK_FALSE(c.failed());

  json::cursor back(doc, 5);
  CHECK_FALSE(back.step_to(4));
  CHECK(back.failed());
  json::cursor past(doc);
  CHECK_FALSE(past.step_to(doc.size() + 1));
  CHECK(past.failed());
  json::cursor end(doc);
  CHECK(end.step_to(doc.size()));
  CHECK_FALSE(end.failed());
}
