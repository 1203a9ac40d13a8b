#include <catch2/catch.hpp>

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
  CHECK_FALSE(t->find("claude-sonnet-4-6"));  // another version, not a snapshot of claude-sonnet-4
  CHECK(t->find("claude-sonnet-4-latest"));
  CHECK(t->find("litellm_proxy/claude-sonnet-4-20250514"));
  CHECK(t->find("us.anthropic.claude-sonnet-4-20250514-v1:0"));
  CHECK(t->find("openai/gpt-4o-mini")->input == 0.15);
  CHECK_FALSE(t->find(""));
  // Without cache prices, cached tokens cost what input costs.
  CHECK(t->find("gpt-4o")->cache_write == 2.5);
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
  CHECK_FALSE(t.find("acme-llm-1"));
}

TEST_CASE("prices: the built-in table is dated this month and prices the current Claude GPT and Gemini lines") {
  const auto& t = price_table::defaults();
  CHECK(t.date() == "2026-11-29");
  for (const char* model : {"claude-opus-4-8", "claude-opus-4-6", "claude-sonnet-4-6", "claude-sonnet-4-6@20260101",
                            "claude-opus-5-5", "claude-sonnet-5-5", "claude-haiku-5-5", "claude-fable-5-2",
                            "gpt-6.2-sol", "gpt-6-luna", "gpt-5.6-terra", "gpt-5.4-mini-2026-03-17", "gemini-4-carbon",
                            "gemini-3.8-flash", "gemini-3.1-pro-preview", "gemini-3.5-flash-preview"}) {
    CAPTURE(model);
    auto p = t.find(model);
    REQUIRE(p);
    CHECK(p->input > 0);
    CHECK(p->output > p->input);
    CHECK(p->cache_read <= p->input);
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
  CHECK_FALSE(t.find("claude-sonnet-4-5@"));       // no snapshot after the '@'
  CHECK(t.find("claude-sonnet-4-6@20260101"));  // listed since 2026-11-29
}
