#include <catch2/catch.hpp>
#include <nlohmann/json.hpp>

#include "rewrite/endpoint.hpp"
#include "rewrite/usage/usage_fields.hpp"

using namespace gistproxy::rewrite;

TEST_CASE("usage fields: integers two levels deep, named by path") {
  auto f = read_usage_fields(
      R"({"prompt_tokens": 250, "completion_tokens":1, "prompt_tokens_details": {"cached_tokens": 128,
          "audio_tokens": 0}, "note": "x", "ratio": 0.5, "big": 1e3, "list": [1, 2], "deep": {"a": {"b": 7}}})");
  REQUIRE(f);
  CHECK(f->get("prompt_tokens") == 250);
  CHECK(f->get("completion_tokens") == 1);
  CHECK(f->get("prompt_tokens_details.cached_tokens") == 128);
  CHECK(f->get("prompt_tokens_details.audio_tokens") == 0);
  CHECK_FALSE(f->get("note"));
  CHECK_FALSE(f->get("ratio"));  // not an integer
  CHECK_FALSE(f->get("big"));    // an exponent makes it a float, as for nlohmann
  CHECK_FALSE(f->get("list"));
  CHECK_FALSE(f->get("deep.a.b"));  // deeper than any API's usage
  CHECK(f->get_or_zero("absent") == 0);
}

TEST_CASE("usage fields: the text and the tree agree") {
  const char* cases[] = {
      R"({"input_tokens": 5, "output_tokens": 9})",
      R"({"input_tokens": -0, "output_tokens": -12})",
      R"({"a": 9223372036854775807, "b": 9223372036854775808, "c": -9223372036854775808, "d": 18446744073709551616})",
      R"({"in\u0070ut_tokens": 3, "x\"y": 4})",
      R"({"input_tokens": 1, "input_tokens": 2})",
      R"({"d": {"x": 1}, "e": {"y": {"z": 1}}, "f": {}})",
      R"({})",
  };
  for (const char* text : cases) {
    CAPTURE(text);
    auto from_text = read_usage_fields(text);
    REQUIRE(from_text);
    auto from_tree = usage_fields_of(nlohmann::json::parse(text));
    for (std::size_t i = 0; i < from_tree.size(); ++i) CHECK(from_text->get(from_tree.path(i)) == from_tree.value(i));
  }
  // Counts no request can have (negative, over a trillion) are left out: two
  // of INT64_MAX made the token counters wrap.
  CHECK_FALSE(read_usage_fields(R"({"input_tokens":)" "9223372036854775807}")->get("input_tokens"));
  CHECK_FALSE(read_usage_fields(R"({"input_tokens": -5})")->get("input_tokens"));
  CHECK(read_usage_fields(R"({"input_tokens": 1000000000000})")->get("input_tokens") == 1'000'000'000'000);
  CHECK_FALSE(read_usage_fields(R"({"a": 9223372036854775808})")->get("a"));
  CHECK(read_usage_fields(R"({"input_tokens": 1, "input_tokens": 2})")->get("input_tokens") == 2);
  CHECK(read_usage_fields(R"({"in\u0070ut_tokens": 3})")->get("input_tokens") == 3);
}

TEST_CASE("usage fields: hostile shapes are bounded or refused") {
  CHECK_FALSE(read_usage_fields("[1]"));
  CHECK_FALSE(read_usage_fields(R"({"a": 1)"));
  CHECK_FALSE(read_usage_fields(R"({"a": 1} x)"));
  CHECK_FALSE(read_usage_fields(""));
  std::string many = "{";
  for (int i = 0; i < 1000; ++i) many += (i ? "," : "") + ("\"k" + std::to_string(i) + "\":" + std::to_string(i));
  many += "}";
  auto f = read_usage_fields(many);
  REQUIRE(f);
  CHECK(f->size() == usage_fields::max_fields);
  CHECK(f->get("k0") == 0);
  CHECK_FALSE(f->get("k999"));
  std::string long_names = "{";
  for (int i = 0; i < 10; ++i) long_names += (i ? "," : "") + ("\"" + std::string(400, char('a' + i)) + "\":1");
  long_names += "}";
  auto g = read_usage_fields(long_names);
  REQUIRE(g);
  CHECK(g->size() == usage_fields::max_name_bytes / 400);  // names are bounded in bytes too
  CHECK(g->get(std::string(400, 'a')) == 1);
}

TEST_CASE("usage from a response body equals usage from its tree, for every API") {
  const char* body = R"({"id":"x","usage":{"prompt_tokens":10,"completion_tokens":2,"input_tokens":7,
      "output_tokens":3,"cache_read_input_tokens":100,"cache_creation_input_tokens":20,"inputTokens":8,"outputTokens":9},
      "usageMetadata":{"promptTokenCount":4,"candidatesTokenCount":5,"thoughtsTokenCount":6}})";
  for (const auto* d : all_endpoints()) {
    CAPTURE(d->name());
    auto a = d->wire().usage_from_response(std::string_view(body));
    auto b = d->wire().usage_from_response(nlohmann::json::parse(body));
    CHECK(a.input_tokens == b.input_tokens);
    CHECK(a.output_tokens == b.output_tokens);
    CHECK(a.known());
  }
}
