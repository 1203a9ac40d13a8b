// OpenAI Responses' adapter on its own: requests read, the next hop's body,
// its stream filter and its stream assembly. What every API must do is in
// ../conformance_test.cpp.
#include <catch2/catch.hpp>
#include <nlohmann/json.hpp>

#include "rewrite/endpoint.hpp"
#include "rewrite/json/splice.hpp"
#include "rewrite/sse/assemble.hpp"
#include "rewrite/sse/event_parser.hpp"
#include "rewrite/stream_filter.hpp"
#include "tests/rewrite/dialects/facts_of.hpp"

using namespace gistproxy::rewrite;
using J = nlohmann::json;
using njson = nlohmann::json;
using gistproxy::testing::facts_of;

namespace {

// One named event.
std::string event(const std::string& name, const J& j) { return "event: " + name + "\ndata: " + j.dump() + "\n\n"; }

}  // namespace

TEST_CASE("responses requests read instructions and a string or list input") {
  auto* d = endpoint_for("POST", "/v1/responses");
  auto a = d->wire().inspect(R"({"model":"gpt-5","instructions":"Be kind.","input":"Hello"})");
  auto b = d->wire().inspect(R"({"model":"gpt-5","instructions":"Be kind.","input":[{"role":"user","content":"Hello"},
      {"type":"function_call_output","call_id":"c1","output":"x"}],"stream":true})");
  REQUIRE(a);
  REQUIRE(b);
  CHECK(a->conversation_key == b->conversation_key);
  CHECK(b->stream);
}

TEST_CASE("responses: with previous_response_id the next hop keeps the client's id and appends to its input") {
  auto* d = endpoint_for("POST", "/v1/responses");
  const njson call = {{"type", "function_call"}, {"call_id", "c"}, {"name", "read_blob"}, {"arguments", "{}"}};
  const njson client_call = {{"type", "function_call"}, {"call_id", "k"}, {"name", "run"}, {"arguments", "{}"}};
  const njson output = {{"type", "function_call_output"}, {"call_id", "c"}, {"output", "out"}};
  njson response = {{"id", "resp_1"}, {"output", {call, client_call}}};
  SECTION("store:false: never chained on the hop's unstored response; a client call beside read_blob is dropped") {
    std::string body = R"({"model":"m","store":false,"previous_response_id":"resp_0","input":[{"role":"user","content":"q"}]})";
    auto next = d->wire().continue_conversation(body, response, "read_blob", {{"c", "out", false}}, true);
    REQUIRE(next);
    auto j = njson::parse(*next);
    CHECK(j["previous_response_id"] == "resp_0");  // was: resp_1, never stored (400)
    CHECK(j["input"] == njson::array({{{"role", "user"}, {"content", "q"}}, call, output}));  // was: no output for "k" (400)
    CHECK(j["tool_choice"] == "none");
  }
  SECTION("a string input becomes its user message, then the items") {
    std::string body = R"({"model":"m","previous_response_id":"resp_0","input":"q"})";
    auto next = d->wire().continue_conversation(body, response, "read_blob", {{"c", "out", false}}, false);
    REQUIRE(next);
    CHECK(njson::parse(*next)["input"] == njson::array({{{"role", "user"}, {"content", "q"}}, call, output}));
  }
}

TEST_CASE("responses echo the client's tools and tool_choice, the last of a duplicated member") {
  const auto& wire = endpoint_named("responses")->wire();
  const auto echoed_of = [&](const std::string& body) {
    top_level_memo top;
    return wire.echoed_members(body, top);
  };
  CHECK(echoed_of(R"({"model":"m","input":"q"})") == J{{"tools", J::array()}, {"tool_choice", "auto"}});
  const auto e = echoed_of(R"({"tool_choice":"none","tools":[{"type":"function","name":"run"}],"tool_choice":"required"})");
  CHECK(e["tool_choice"] == "required");
  CHECK(e["tools"] == J::array({{{"type", "function"}, {"name", "run"}}}));
  // A body that is not an object echoes nothing; Chat Completions echoes nothing of the request.
  CHECK(echoed_of("[1]").empty());
  const std::string chat = R"({"tools":[],"tool_choice":"none"})";
  top_level_memo chat_top;
  CHECK(endpoint_named("chat")->wire().echoed_members(chat, chat_top).empty());
}

TEST_CASE("a spliced Responses stream completes with the last hop's id, whose state holds the whole conversation") {
  auto f = endpoint_named("responses")->wire().make_stream_filter("read_blob");
  sse::event_parser parser;
  std::string out;
  auto feed = [&](const std::string& type, const njson& data) {
    parser.feed("event: " + type + "\ndata: " + data.dump() + "\n\n", [&](const sse::event& e) { out += f->on_event(e); });
  };
  const njson call = {{"type", "function_call"}, {"call_id", "c"}, {"name", "read_blob"}, {"arguments", "{}"}};
  feed("response.created", {{"type", "response.created"}, {"response", {{"id", "resp_hop1"}, {"output", njson::array()}}}});
  feed("response.output_item.added", {{"type", "response.output_item.added"}, {"output_index", 0}, {"item", call}});
  feed("response.output_item.done", {{"type", "response.output_item.done"}, {"output_index", 0}, {"item", call}});
  feed("response.completed", {{"type", "response.completed"}, {"response", {{"id", "resp_hop1"}, {"output", {call}}}}});
  REQUIRE(f->end_hop().calls.size() == 1);
  feed("response.created", {{"type", "response.created"}, {"response", {{"id", "resp_hop2"}, {"output", njson::array()}}}});
  feed("response.completed", {{"type", "response.completed"}, {"response", {{"id", "resp_hop2"}, {"output", njson::array()}}}});
  REQUIRE(f->end_hop().calls.empty());
  const auto end = f->finish();
  const auto data = njson::parse(end.substr(end.find("data: ") + 6));
  CHECK(data["response"]["id"] == "resp_hop2");  // was: resp_hop1, whose stored state ends in the read_blob call
}

TEST_CASE("Responses streams assemble into the response of their terminal event, errors stay errors") {
  std::string s = event("response.created", {{"type", "response.created"}, {"response", {{"id", "r1"}, {"status", "in_progress"}}}}) +
                  event("response.output_text.delta", {{"type", "response.output_text.delta"}, {"delta", "x"}}) +
                  event("response.completed", {{"type", "response.completed"}, {"response", {{"id", "r1"}, {"status", "completed"}, {"output", J::array()}}}});
  auto r = endpoint_named("responses")->wire().assemble_stream(s);
  REQUIRE(r);
  CHECK((*r)["status"] == "completed");
  auto err = endpoint_named("messages")->wire().assemble_stream(event("error", {{"type", "error"}, {"error", {{"type", "overloaded_error"}}}}));
  REQUIRE(err);
  CHECK((*err)["error"]["type"] == "overloaded_error");
  CHECK_FALSE(endpoint_named("chat")->wire().assemble_stream("data: [DONE]\n\n"));
  CHECK(looks_like_sse("event: x\ndata: 1\n\n"));
  CHECK_FALSE(looks_like_sse("{\"id\":1}"));
}

TEST_CASE("a Responses request with background:true is not interceptable (its answer is polled later)") {
  CHECK_FALSE(facts_of("/v1/responses", R"({"model":"m","background":true,"input":"hi"})").answer_interceptable);
  CHECK(facts_of("/v1/responses", R"({"model":"m","background":false,"input":"hi"})").answer_interceptable);
  CHECK(facts_of("/v1/responses", R"({"model":"m","input":"hi"})").answer_interceptable);
}
