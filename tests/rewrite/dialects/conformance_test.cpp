// The adapter conformance suite: one set of expectations run over every
// registered dialect (all_endpoints()), so an API is done when it passes it.
// What the suite needs of a new API is its client side, in tests/support:
// request_for / answer_text / read_stream / render_stream in api_scenarios.hpp
// and the scripted model's answers in scripted_model.hpp. An API registered
// without them fails the first case below.
#include <catch2/catch.hpp>
#include <nlohmann/json.hpp>

#include "rewrite/blob/memory_blob_store.hpp"
#include "rewrite/endpoint.hpp"
#include "rewrite/offload/engine.hpp"
#include "rewrite/page_in/page_in.hpp"
#include "rewrite/prompt_cache/prefix_fingerprint.hpp"
#include "rewrite/replay/replay_run.hpp"
#include "rewrite/sse/event_parser.hpp"
#include "rewrite/stream_filter.hpp"
#include "rewrite/tokens/bpe_tokenizer.hpp"
#include "tests/support/api_scenarios.hpp"

using namespace gistproxy::rewrite;
using gistproxy::testing::model_turn;
using J = nlohmann::json;
namespace t = gistproxy::testing;

namespace {

constexpr std::string_view tenant = "tenant";
const std::string needle = "NEEDLE secret_port=48213";

// The proxy's rewrite with serve's defaults, on an in-memory store.
struct engine_env {
  memory_blob_store store{[] { return std::int64_t(1000); }};
  char_ratio_estimator estimator;
  offload_engine engine{offload_config{}, store, estimator, [] { return std::uint64_t(1); }};
};

// A turn of the conversation request_for starts: the user asks, the model
// called "cat", whose ~200 KB output holds one needle line.
std::string first_turn(const std::string& api) { return t::request_for(api, "find the needle", t::haystack()).dump(); }

// The same conversation one turn later: an item appended to its list.
std::string next_turn(const endpoint& d, const std::string& body) {
  auto j = J::parse(body);
  auto& list = j[std::string(d.wire().cache_prefix().conversation)];
  list.push_back(list[0]);
  return j.dump();
}

std::string rewritten(engine_env& env, const endpoint& d, const std::string& body) {
  auto r = env.engine.rewrite(d.wire(), body, tenant);
  REQUIRE(r.report.outcome == rewrite_outcome::rewritten);
  return r.body;
}

// read_blob's answers, as the proxy's pager makes them (exact bytes, re-hashed).
std::vector<call_result> page_in_calls(engine_env& env, const std::vector<blob_call>& calls) {
  std::vector<call_result> out;
  for (const auto& c : calls) {
    std::string error;
    auto request = parse_page_request(c.arguments, error);
    REQUIRE(request);
    auto r = page_in(env.store, tenant, *request, page_limits{});
    CHECK(r.ok);
    CHECK(r.integrity_ok);
    out.push_back({c.id, r.text, !r.ok});
  }
  return out;
}

std::string tools_text(const endpoint& d, const std::string& body) {
  request_scan scan;
  REQUIRE(d.wire().scan(body, scan));
  REQUIRE(scan.tools);
  return body.substr(scan.tools->begin, scan.tools->size());
}

// Every event of an SSE text through a filter: the client's bytes.
std::string feed(stream_filter& f, std::string_view sse_text) {
  std::string out;
  sse::event_parser parser;
  parser.feed(sse_text, [&](const sse::event& e) { out += f.on_event(e); });
  return out;
}

}  // namespace

TEST_CASE("conformance: every registered API has its client side in the suite") {
  REQUIRE(all_endpoints().size() >= 4);
  for (const auto* d : all_endpoints()) {
    INFO(d->name());
    CHECK(t::scripted_api(std::string(d->name())));
  }
}

TEST_CASE("conformance: a large tool output becomes a reference, read_blob is offered once after the client's tools, which stay byte for byte") {
  for (const auto* d : all_endpoints()) {
    const std::string api(d->name());
    DYNAMIC_SECTION(api) {
      engine_env env;
      const auto body = first_turn(api);
      auto r = env.engine.rewrite(d->wire(), body, tenant);
      REQUIRE(r.report.outcome == rewrite_outcome::rewritten);
      REQUIRE(r.report.offloads.size() == 1);
      const auto& o = r.report.offloads[0];
      CHECK(o.tool_name == "cat");
      CHECK(env.store.contains(tenant, o.hash));
      CHECK(r.report.tool_injected);
      CHECK(r.body.size() < body.size() / 10);
      CHECK(r.body.find(o.hash.substr(0, 16)) != std::string::npos);  // the reference names its handle

      request_scan before, after;
      REQUIRE(d->wire().scan(body, before));
      REQUIRE(d->wire().scan(r.body, after));
      CHECK(after.declared_tools == std::vector<std::string>{"cat", "run", r.report.tool_name});
      REQUIRE(after.tool_ranges.size() == before.tool_ranges.size() + 1);
      for (std::size_t i = 0; i < before.tool_ranges.size(); ++i)
        CHECK(r.body.substr(after.tool_ranges[i].begin, after.tool_ranges[i].size()) ==
              body.substr(before.tool_ranges[i].begin, before.tool_ranges[i].size()));
      CHECK_NOTHROW(J::parse(r.body));
    }
  }
}

TEST_CASE("conformance: the cached prefix the adapter declares survives the next turn, as the client sent it and as forwarded") {
  for (const auto* d : all_endpoints()) {
    const std::string api(d->name());
    DYNAMIC_SECTION(api) {
      engine_env env;
      const auto layout = d->wire().cache_prefix();
      const auto turn1 = first_turn(api), turn2 = next_turn(*d, turn1);
      const auto sent1 = fingerprint_prefix(turn1, layout), sent2 = fingerprint_prefix(turn2, layout);
      REQUIRE(sent1);
      REQUIRE(sent2);
      CHECK(sent1->cumulative.size() == 3);  // the user's ask, the call, its output
      CHECK(extends(summary_of(*sent1), *sent2));
      const auto fwd1 = fingerprint_prefix(rewritten(env, *d, turn1), layout);
      const auto fwd2 = fingerprint_prefix(rewritten(env, *d, turn2), layout);
      REQUIRE(fwd1);
      REQUIRE(fwd2);
      CHECK(extends(summary_of(*fwd1), *fwd2));
      CHECK(keeps_prefix(turn1, turn2, layout));
    }
  }
}

TEST_CASE("conformance: a JSON answer's read_blob call is found, paged in exactly, the conversation continued, the last hop forbids tools") {
  for (const auto* d : all_endpoints()) {
    const std::string api(d->name());
    DYNAMIC_SECTION(api) {
      engine_env env;
      const auto llm = *t::scripted_api(api);
      const auto forwarded = rewritten(env, *d, first_turn(api));
      const auto turn = t::script_model(llm, J::parse(forwarded));
      REQUIRE(turn.calls.size() == 1);
      const auto answer = t::render_response(llm, turn, t::model_for(api));
      const auto calls = d->wire().find_blob_calls(answer, "read_blob");
      REQUIRE(calls.blob_calls.size() == 1);
      CHECK(calls.client_calls == 0);
      const auto results = page_in_calls(env, calls.blob_calls);
      CHECK(results[0].text.find(needle) != std::string::npos);

      const auto next = d->wire().continue_conversation(forwarded, answer, "read_blob", results, false);
      REQUIRE(next);
      CHECK(tools_text(*d, *next) == tools_text(*d, forwarded));
      CHECK_FALSE(t::forbids_tools(api, *next));
      const auto final_turn = t::script_model(llm, J::parse(*next));
      CHECK(final_turn.calls.empty());
      CHECK(final_turn.text.find(needle) != std::string::npos);  // the model read the exact bytes

      const auto last = d->wire().continue_conversation(forwarded, answer, "read_blob", results, true);
      REQUIRE(last);
      CHECK(t::forbids_tools(api, *last));
      CHECK(tools_text(*d, *last) == tools_text(*d, forwarded));
    }
  }
}

TEST_CASE("conformance: in a stream, read_blob's events never reach the client and the hops splice into one answer") {
  for (const auto* d : all_endpoints()) {
    const std::string api(d->name());
    DYNAMIC_SECTION(api) {
      engine_env env;
      const auto llm = *t::scripted_api(api);
      const auto forwarded = rewritten(env, *d, first_turn(api));
      auto filter = d->wire().make_stream_filter("read_blob");
      REQUIRE(filter);
      std::string client = feed(*filter, t::render_stream(api, t::script_model(llm, J::parse(forwarded))));
      auto hop1 = filter->end_hop();
      CHECK(hop1.complete);
      REQUIRE(hop1.calls.size() == 1);
      const auto results = page_in_calls(env, hop1.calls);
      const auto next = d->wire().continue_conversation(forwarded, hop1.response, "read_blob", results, false);
      REQUIRE(next);
      const auto final_turn = t::script_model(llm, J::parse(*next));
      REQUIRE(final_turn.calls.empty());
      client += feed(*filter, t::render_stream(api, final_turn));
      auto hop2 = filter->end_hop();
      CHECK(hop2.complete);
      CHECK(hop2.calls.empty());
      client += filter->finish();

      CHECK(client.find("read_blob") == std::string::npos);
      const auto seen = t::read_stream(api, client);
      CHECK(seen.text.find(needle) != std::string::npos);
      CHECK(seen.client_calls.empty());
      CHECK(filter->usage().output_tokens == 20);  // 10 per hop, summed
    }
  }
}

TEST_CASE("conformance: usage is read from an answer, input tokens including the prompt cache's") {
  for (const auto* d : all_endpoints()) {
    const std::string api(d->name());
    DYNAMIC_SECTION(api) {
      model_turn text;
      text.text = "hello";
      const auto answer = t::render_response(*t::scripted_api(api), text, t::model_for(api));
      const std::string text_body = answer.dump();
      for (const auto& usage : {d->wire().usage_from_response(answer), d->wire().usage_from_response(std::string_view(text_body))}) {
        CHECK(usage.input_tokens == 100);
        CHECK(usage.output_tokens == 10);
        CHECK(usage.cache_read_tokens == 64);
      }
      CHECK(t::answer_text(api, answer) == "hello");
    }
  }
}

TEST_CASE("conformance: odd answers and bodies fail open: no throw, nothing continued from what is not a request") {
  const std::vector<J> odd = {
      J(), J(1), J("x"), J::array(), J::object(),
      J::parse(R"({"choices":"x","output":{},"content":5,"candidates":[1],"usage":"lots","usageMetadata":[]})"),
      J::parse(R"({"choices":[{"message":5}],"output":[5,{"type":"function_call"}],"content":[{"type":"tool_use","name":5}]})"),
      J::parse(R"({"candidates":[{"content":{"parts":[{"functionCall":5},{"functionCall":{"name":"read_blob","args":7}}]}}]})"),
      J::parse(R"({"output":[{"type":"function_call","name":"read_blob","arguments":5,"call_id":[]}]})"),
      J::parse(R"({"choices":[{"message":{"tool_calls":[{"id":1,"function":{"name":"read_blob","arguments":{}}}]}}]})"),
  };
  const std::vector<std::string> odd_events = {
      "data: not json\n\n", "data: [DONE]\n\n", "event: x\ndata: 5\n\n", "data: {\"type\":5,\"index\":-1}\n\n",
      "data: {\"choices\":[{\"delta\":{\"tool_calls\":[{\"index\":99999999}]}}]}\n\n", ": ping\n\n",
      "event: content_block_start\ndata: {\"type\":\"content_block_start\",\"index\":1e300}\n\n",
      "data: {\"candidates\":[{\"content\":{\"parts\":[{\"functionCall\":{\"name\":\"read_blob\"}}]}}]}\n\n"};
  for (const auto* d : all_endpoints()) {
    const std::string api(d->name());
    DYNAMIC_SECTION(api) {
      const auto body = first_turn(api);
      for (const auto& answer : odd) {
        INFO(answer.dump());
        CHECK_NOTHROW(d->wire().find_blob_calls(answer, "read_blob"));
        CHECK_NOTHROW(d->wire().continue_conversation(body, answer, "read_blob", {{"x", "y", false}}, false));
        auto copy = answer;
        CHECK_NOTHROW(d->wire().remove_blob_calls(copy, "read_blob"));
        CHECK_NOTHROW(d->wire().usage_from_response(answer));
        const std::string text = answer.dump();
        CHECK_NOTHROW(d->wire().usage_from_response(std::string_view(text)));
        // As a request body: what is not a JSON object is never continued
        // (an object may be: Responses' input is optional).
        if (!answer.is_object()) CHECK_FALSE(d->wire().continue_conversation(text, J::object(), "read_blob", {}, true));
        else CHECK_NOTHROW(d->wire().continue_conversation(text, J::object(), "read_blob", {}, true));
      }
      auto filter = d->wire().make_stream_filter("read_blob");
      REQUIRE(filter);
      for (const auto& e : odd_events) CHECK_NOTHROW(feed(*filter, e));
      CHECK_NOTHROW(filter->end_hop());
      CHECK_NOTHROW(filter->finish());
      CHECK_NOTHROW(d->wire().assemble_stream("data: {\"x\":\n\n"));
      request_scan scan;
      CHECK_FALSE(d->wire().scan("{\"unterminated\":", scan));
    }
  }
}

TEST_CASE("conformance: a recorded conversation replays through its adapter, offloaded the same way every turn") {
  for (const auto* d : all_endpoints()) {
    const std::string api(d->name());
    DYNAMIC_SECTION(api) {
      CHECK(endpoint_for("POST", d->request_path(t::model_for(api))) == d);
      // A bare body (a trace that does not name its API) is read as this
      // API's; a cloud endpoint's body that carries no mark of its cloud
      // (Azure's are OpenAI's exactly) as the API it hosts.
      const auto bare = read_trace(J::array({J::parse(first_turn(api))}).dump());
      REQUIRE(bare.requests.size() == 1);
      const bool marked = d->request_affinity(J::parse(first_turn(api))) > 0;
      const endpoint* own = d;  // the hosted API's own endpoint: same wire format, another family
      for (const auto* e : all_endpoints())
        if (&e->wire() == &d->wire() && e->upstream().name != d->upstream().name) own = e;
      CHECK(bare.requests[0].api == (marked ? d : own));
      engine_env env;
      replayer r{env.engine, env.store, env.estimator};
      recorded_trace trace;
      const auto turn1 = first_turn(api);
      trace.requests.push_back(recorded_request::as_sent(d, turn1));
      trace.requests.push_back(recorded_request::as_sent(d, next_turn(*d, turn1)));
      std::vector<std::string> forwarded;
      auto stats = r.run(trace, tenant, [&](const replayed_request& q) { forwarded.emplace_back(q.forwarded); });
      CHECK(stats.turns == 2);
      CHECK(stats.conversations == 1);
      CHECK(stats.offloads == 2);
      CHECK(stats.distinct_blobs == 1);
      CHECK(stats.prefix_stable_before == 1);
      CHECK(stats.prefix_stable_after == 1);
      CHECK(stats.tokens_after < stats.tokens_before / 5);
      REQUIRE(forwarded.size() == 2);
      CHECK(forwarded[0] == rewritten(env, *d, turn1));  // replay forwards what serve would
    }
  }
}

TEST_CASE("conformance: read_blob's definition stays within 80 o200k tokens in every API's format") {
  std::string error;
  const auto o200k = tokens::builtin_tokenizer("o200k_base", &error);
  REQUIRE(o200k);
  for (const auto* d : all_endpoints()) {
    const std::string api(d->name());
    DYNAMIC_SECTION(api) {
      const auto definition = d->wire().read_blob_tool("read_blob");
      CHECK_NOTHROW(J::parse(definition));
      const auto tokens = o200k->estimate(definition, content_kind::text);
      INFO(api << ": " << tokens << " tokens");
      CHECK(tokens <= 80);
      // Every way to narrow a read stays on offer.
      for (const char* argument : {"handle", "pattern", "start_line", "end_line", "offset", "query"})
        CHECK(definition.find(argument) != std::string::npos);
    }
  }
}
