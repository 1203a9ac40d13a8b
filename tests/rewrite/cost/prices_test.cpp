#include <catch2/catch.hpp>

#include <array>
#include <initializer_list>
#include <string>
#include <utility>

#include "rewrite/cost/prices.hpp"

using namespace gistproxy::rewrite;

TEST_CASE("prices: the longest entry that the model name equals or continues with '-' wins") {
  std::string error;
  auto t = price_table::parse(R"({"date":"2026-01-01","models":[
      {"match":"gpt-4o","input":2.5,"cache_read":1.25,"output":10},
      {"match":"gpt-4o-mini","input":0.15,"cache_read":0.075,"output":0.6},
      {"match":"claude-sonnet-4","input":3,"cache_write":3.75,"cache_read":0.3,"output":15}]})",
                              error);
  REQUIRE(t);
  CHECK(t->date() == "2026-01-01");
  CHECK(t->find("gpt-4o")->input == 2.5);
  CHECK(t->find("gpt-4o-2024-08-06")->input == 2.5);
  CHECK(t->find("gpt-4o-mini-2024-07-18")->input == 0.15);
  CHECK(t->find("claude-sonnet-4-20250514")->cache_write == 3.75);
  CHECK_FALSE(t->find("gpt-4o1"));      // not a continuation
  CHECK_FALSE(t->find("gpt-4o.5"));     // a later version is unpriced, not mispriced
  CHECK_FALSE(t->find("gpt-4"));
  CHECK_FALSE(continues("claude-sonnet-4-6", "claude-sonnet-4"));  // another version, not a snapshot
  CHECK(t->lookup("claude-sonnet-4-6")->fallback);                  // so priced only as its family
  CHECK(t->find("claude-sonnet-4-latest"));
  CHECK(t->find("litellm_proxy/claude-sonnet-4-20250514"));
  CHECK(t->find("us.anthropic.claude-sonnet-4-20250514-v1:0"));
  CHECK(t->find("openai/gpt-4o-mini")->input == 0.15);
  CHECK_FALSE(t->find(""));
  // Without cache prices, cached tokens cost what input costs.
  CHECK(t->find("gpt-4o")->cache_write == 2.5);
}

TEST_CASE("prices: the longest match wins whatever the table order and the first of equal entries stays") {
  // Entries of different first bytes interleaved, the longer match first and
  // last, and two entries with the same match (the first listed prices).
  std::string error;
  auto t = price_table::parse(R"({"models":[
      {"match":"gpt-4o-mini","input":0.15,"output":0.6},
      {"match":"claude-3","input":3,"output":15},
      {"match":"gpt-4o","input":2.5,"output":10},
      {"match":"o3","input":2,"output":8},
      {"match":"gpt-4o","input":99,"output":99},
      {"match":"gpt-4o-mini-audio","input":0.5,"output":1},
      {"match":"\u00e9-model","input":7,"output":7}]})",
                              error);
  REQUIRE(t);
  CHECK(t->find("gpt-4o-mini-2024-07-18")->input == 0.15);
  CHECK(t->find("gpt-4o-mini-audio-2024-12-17")->input == 0.5);
  CHECK(t->find("gpt-4o-2024-08-06")->input == 2.5);
  CHECK(t->lookup("gpt-4o")->priced_as == "gpt-4o");
  CHECK(t->find("o3")->input == 2);
  CHECK(t->find("claude-3-20240229")->input == 3);
  CHECK(t->find("\xc3\xa9-model")->input == 7);  // a first byte above 127
  CHECK_FALSE(t->find("hpt-4o"));
}

TEST_CASE("prices: model names lose routing and vendor prefixes, versions are not snapshots") {
  CHECK(base_model_name("models/gemini-2.5-flash") == "gemini-2.5-flash");
  CHECK(base_model_name("litellm_proxy/anthropic.claude-3-5-sonnet-20241022-v2:0") == "claude-3-5-sonnet-20241022-v2:0");
  CHECK(base_model_name("gpt-4.1-mini") == "gpt-4.1-mini");
  CHECK(base_model_name("gemini-2.5-pro") == "gemini-2.5-pro");
  CHECK(continues("claude-opus-4-20250514", "claude-opus-4"));
  CHECK(continues("gpt-4o-2024-08-06", "gpt-4o"));
  CHECK(continues("gemini-2.5-flash-preview-09-2025", "gemini-2.5-flash"));
  CHECK_FALSE(continues("claude-opus-4-6", "claude-opus-4"));
  CHECK_FALSE(continues("claude-opus-4-10", "claude-opus-4"));
  CHECK_FALSE(continues("gpt-5.4", "gpt-5"));
  CHECK_FALSE(continues("gpt-5-", "gpt-5"));
}

TEST_CASE("prices: a malformed table is refused with a reason") {
  std::string error;
  for (const char* bad : {"[]", "{}", R"({"models":{}})", R"({"models":[{"input":1,"output":1}]})",
                          R"({"models":[{"match":"m","input":-1,"output":1}]})",
                          R"({"models":[{"match":"m","input":"1","output":1}]})",
                          R"({"models":[{"match":"m","output":1}]})", "not json"}) {
    error.clear();
    CAPTURE(bad);
    CHECK_FALSE(price_table::parse(bad, error));
    CHECK_FALSE(error.empty());
  }
}

TEST_CASE("prices: cost arithmetic with and without a reported cache split") {
  model_price p{3.0, 0.3, 3.75, 15.0};
  token_usage u;
  u.input_tokens = 3050;
  u.cache_read_tokens = 2000;
  u.cache_write_tokens = 1000;
  u.output_tokens = 30;
  auto c = cost_of(u, p);
  CHECK(c.input == Approx(50 * 3.0e-6));
  CHECK(c.cache_read == Approx(2000 * 0.3e-6));
  CHECK(c.cache_write == Approx(1000 * 3.75e-6));
  CHECK(c.output == Approx(30 * 15.0e-6));
  CHECK(c.total() == Approx(0.00015 + 0.0006 + 0.00375 + 0.00045));
  token_usage unknown_split;
  unknown_split.input_tokens = 1000;
  unknown_split.output_tokens = 10;
  auto d = cost_of(unknown_split, p);
  CHECK(d.input == Approx(1000 * 3.0e-6));
  CHECK(d.cache_read == 0);
  CHECK(input_cost(1'000'000, p) == Approx(3.0));
  token_usage none;
  CHECK(cost_of(none, p).total() == 0);
}

TEST_CASE("prices: the built-in table loads and prices the current and previous model families") {
  const auto& t = price_table::defaults();
  REQUIRE(t.size() > 20);
  CHECK_FALSE(t.date().empty());
  for (const char* model : {"gpt-4o-2024-08-06", "gpt-4o-mini", "gpt-4.1-2025-04-14", "gpt-4.1-mini", "gpt-5", "gpt-5-mini",
                            "gpt-5-nano-2025-08-07", "o3", "o4-mini", "claude-3-5-sonnet-20241022", "claude-3-7-sonnet-20250219",
                            "claude-sonnet-4-20250514", "claude-sonnet-4-5-20250929", "claude-opus-4-1-20250805",
                            "claude-haiku-4-5-20251001", "claude-opus-4-5-20251101", "gemini-2.0-flash", "gemini-2.5-pro",
                            "gemini-2.5-flash", "gemini-2.5-flash-lite", "models/gemini-2.5-flash", "claude-sonnet-4-0",
                            "litellm_proxy/anthropic.claude-3-5-sonnet-20241022-v2:0", "gpt-3.5-turbo-0125"}) {
    CAPTURE(model);
    auto p = t.find(model);
    REQUIRE(p);
    CHECK(p->input > 0);
    CHECK(p->output > p->input);
    CHECK(p->cache_read <= p->input);
  }
  CHECK(t.find("claude-sonnet-4-5")->cache_write == Approx(3.75));
  CHECK(t.find("claude-opus-4-5")->input == Approx(5.0));   // not Opus 4's 15
  CHECK(t.find("gpt-5-mini-2025-08-07")->input == Approx(0.25));  // not gpt-5's
  CHECK_FALSE(t.find("some-local-model"));
  CHECK_FALSE(t.find("acme-llm-1"));  // no listed family: unpriced
}

TEST_CASE("prices: the built-in table is dated this month and prices the current Claude GPT and Gemini lines") {
  const auto& t = price_table::defaults();
  CHECK(t.date() == "2026-11-29");
  for (const char* model : {"claude-opus-4-8", "claude-opus-4-6", "claude-sonnet-4-6", "claude-sonnet-4-6@20260101",
                            "claude-opus-5-5", "claude-sonnet-5-5", "claude-haiku-5-5", "claude-fable-5-2",
                            "gpt-6.2-sol", "gpt-6-luna", "gpt-5.6-terra", "gpt-5.4-mini-2026-03-17", "gemini-4-carbon",
                            "gemini-3.8-flash", "gemini-3.1-pro-preview", "gemini-3.5-flash-preview"}) {
    CAPTURE(model);
    auto m = t.lookup(model);
    REQUIRE(m);
    CHECK_FALSE(m->fallback);  // listed: an exact price
    CHECK(m->price.input > 0);
    CHECK(m->price.output > m->price.input);
    CHECK(m->price.cache_read <= m->price.input);
  }
  CHECK(t.find("claude-opus-4-8")->input == Approx(5.0));
  CHECK(t.find("claude-sonnet-4-6")->cache_write == Approx(3.75));
  CHECK(t.find("claude-opus-5-5")->cache_read == Approx(0.2));  // 0.05x input: not the usual 0.1x
}

TEST_CASE("prices: an absurd price is refused at load, so cost counters can never reach +Inf") {
  for (const char* price : {"1e300", "100001", "-1"}) {
    CAPTURE(price);
    std::string error;
    auto t = price_table::parse(std::string(R"({"models":[{"match":"m","input":)") + price + R"(,"output":1}]})", error);
    CHECK_FALSE(t);
    CHECK(error.find("models[0]") != std::string::npos);
  }
  std::string error;
  CHECK(price_table::parse(R"({"models":[{"match":"m","input":100000,"output":1}]})", error));
}

TEST_CASE("prices: cloud model ids (Bedrock, its inference profiles and ARNs, Vertex) find the model's own entry") {
  const auto& t = price_table::defaults();
  const auto direct = t.find("claude-sonnet-4-5");
  REQUIRE(direct);
  for (std::string_view id : {"anthropic.claude-sonnet-4-5-20250929-v1:0", "us.anthropic.claude-sonnet-4-5-20250929-v1:0",
                              "global.anthropic.claude-sonnet-4-5-20250929-v1:0", "claude-sonnet-4-5@20250929",
                              "arn:aws:bedrock:us-east-1:123456789012:inference-profile/us.anthropic.claude-sonnet-4-5-20250929-v1:0"}) {
    INFO(id);
    auto found = t.find(id);
    REQUIRE(found);
    CHECK(found->input == direct->input);
    CHECK(found->cache_read == direct->cache_read);
    CHECK(found->output == direct->output);
  }
  CHECK(t.lookup("claude-sonnet-4-5@")->fallback);  // no snapshot after the '@': not the entry itself
  CHECK(t.lookup("claude-sonnet-4-6@20260101")->priced_as == "claude-sonnet-4-6");  // listed since 2026-11-29
  CHECK(t.lookup("us.anthropic.claude-opus-4-9-20260301-v1:0")->priced_as == "claude-opus-4-8");  // by family
}

// The fallback as the built-in table applies it: the model, the entry that prices it.
TEST_CASE("prices: an unlisted version is priced as its family's nearest older entry and says so") {
  const auto& t = price_table::defaults();
  for (auto [model, entry] : std::initializer_list<std::pair<const char*, const char*>>{
           {"claude-opus-4-9", "claude-opus-4-8"},                // a newer minor
           {"claude-opus-4-10", "claude-opus-4-8"},               // compared as numbers: 10 > 8
           {"claude-opus-4-9-20260101", "claude-opus-4-8"},       // a dated snapshot of it
           {"claude-opus-4-9@20260101", "claude-opus-4-8"},       // Vertex's '@' snapshot
           {"claude-sonnet-5-7", "claude-sonnet-5-5"},
           {"claude-sonnet-6", "claude-sonnet-5-5"},              // a new major: the latest listed
           {"claude-opus-4.8", "claude-opus-4-8"},                // the same version spelt with a dot
           {"gpt-5.9-mini-2026-12-01", "gpt-5.4-mini"},           // the tier stays: not gpt-5.6
           {"gpt-5.7", "gpt-5.6"},
           {"gpt-6.3-sol", "gpt-6.2-sol"},
           {"gpt-6.1-terra", "gpt-5.6-terra"},
           {"o5-mini", "o4-mini"},
           {"gemini-3.9-flash", "gemini-3.8-flash"},
           {"gemini-3.9-flash-preview", "gemini-3.8-flash"},      // a release stage is not a tier
           {"gemini-3.9-flash-lite", "gemini-3.5-flash-lite"},    // -flash-lite is not -flash
           {"gemini-3.2-pro-preview-11-2026", "gemini-3.1-pro"},
           {"gemini-5-carbon", "gemini-4-carbon"},
           {"models/gemini-3.9-flash", "gemini-3.8-flash"}}) {
    CAPTURE(model);
    auto m = t.lookup(model);
    REQUIRE(m);
    CHECK(m->fallback);
    CHECK(m->priced_as == entry);
    CHECK(m->price.input == t.find(entry)->input);
  }
}

TEST_CASE("prices: a family with no listed member at or below the version stays unpriced") {
  const auto& t = price_table::defaults();
  for (const char* model : {"acme-llm-1", "claude-sonata-5", "claude-haiku-3-9",  // no family or only newer members
                            "gemini-4-xenon",                                       // a tier nobody lists
                            "gpt-4", "gpt-7-ultra", "gpt-5.9-micro",                // gpt-4.1 is newer than gpt-4
                            "gemini-exp-1206",                                      // a date is not a version
                            "claude-opus", "o", ""}) {
    CAPTURE(model);
    CHECK_FALSE(t.lookup(model));
  }
  // A name longer than any model's is not read at all.
  CHECK_FALSE(t.lookup("claude-opus-4-9-" + std::string(200, 'x')));
  CHECK_FALSE(t.lookup(std::string(100000, '9')));
}

TEST_CASE("prices: a model name reads as family version and tier") {
  auto v = read_model_version("claude-opus-4-9-20260101");
  REQUIRE(v);
  CHECK(v->family == "claude-opus-");
  CHECK(v->number == std::array<std::uint16_t, 4>{4, 9, 0, 0});
  CHECK(v->tier.empty());
  CHECK(v->snapshot);
  v = read_model_version("gpt-5.4-mini");
  REQUIRE(v);
  CHECK(v->family == "gpt-");
  CHECK(v->number == std::array<std::uint16_t, 4>{5, 4, 0, 0});
  CHECK(v->tier == "-mini");
  CHECK_FALSE(v->snapshot);
  v = read_model_version("gpt-4o-2024-05-13");
  REQUIRE(v);
  CHECK(v->tier == "o");
  CHECK(v->snapshot);
  v = read_model_version("claude-3-5-sonnet-20241022-v2:0");
  REQUIRE(v);
  CHECK(v->family == "claude-");
  CHECK(v->tier == "-sonnet");
  v = read_model_version("gemini-2.5-flash-lite-preview-09-2025");
  REQUIRE(v);
  CHECK(v->tier == "-flash-lite");
  CHECK(v->snapshot);
  CHECK_FALSE(read_model_version("some-local-model"));
  CHECK_FALSE(read_model_version("4o"));               // no family
  CHECK_FALSE(read_model_version("gemini-exp-1206"));  // a date where the version would be
  CHECK_FALSE(read_model_version("us.anthropic.claude-opus-4"));  // prefixes are the caller's to strip
}

TEST_CASE("prices: a dated entry prices its snapshot and never its family") {
  std::string error;
  auto t = price_table::parse(R"({"models":[
      {"match":"gpt-4o","input":2.5,"output":10},
      {"match":"gpt-4o-2024-05-13","input":5,"output":15},
      {"match":"house-9-mini-20260101","input":1,"output":2}]})",
                              error);
  REQUIRE(t);
  CHECK(t->lookup("gpt-4o-2024-05-13")->price.input == 5);
  CHECK(t->lookup("gpt-5o")->priced_as == "gpt-4o");
  CHECK_FALSE(t->lookup("house-10-mini"));
  CHECK_FALSE(t->lookup("gpt-3o"));  // only newer members: never priced as a newer version
}
