// Page-in hops against an upstream that keeps Responses state as the real API
// does (tests/support/responses_state.hpp): ids per response, store:false
// responses never kept, previous_response_id naming only a kept response whose
// function calls all have outputs. The client's next turn chains on the id it
// got, as the OpenAI SDKs and the Agents SDK do.
#include <catch2/catch.hpp>

#include "tests/support/api_scenarios.hpp"
#include "tests/integration/harness.hpp"

using namespace gistproxy::testing;

namespace {

struct answered {
  int status = 0;
  std::string id;
  std::string text;
  std::vector<std::string> client_calls;
};

answered ask(const proxy_process& proxy, const nlohmann::json& body) {
  auto res = http_request(proxy.port(), "POST", "/v1/responses", body.dump(), key_header("responses"));
  answered a{res.status, {}, {}, {}};
  if (res.status != 200) {
    a.text = res.body;
    return a;
  }
  if (body.value("stream", false)) {
    auto got = read_stream("responses", res.body);
    a.text = got.text;
    a.client_calls = got.client_calls;
    for (const auto& data : sse_data(res.body)) {
      auto e = nlohmann::json::parse(data, nullptr, false);
      if (e.is_object() && e.value("type", "") == "response.completed") a.id = e["response"].value("id", "");
    }
    return a;
  }
  auto j = nlohmann::json::parse(res.body);
  a.id = j.value("id", "");
  a.text = answer_text("responses", j);
  for (const auto& item : j["output"])
    if (item["type"] == "function_call") a.client_calls.push_back(item["call_id"]);
  return a;
}

}  // namespace

TEST_CASE("Responses page-in hops keep the API's stored-state rules, and the client's next turn chains on its id") {
  auto [script, store, stream] = GENERATE(table<std::string, bool, bool>({
      {"find the needle", true, false}, {"find the needle", false, false}, {"find the needle", false, true},
      {"two calls", false, false}, {"with client call", true, false}, {"with client call", false, true},
      {"loop forever", false, false}, {"loop forever", true, true},
  }));
  CAPTURE(script, store, stream);
  mock_upstream upstream;
  proxy_process proxy({"--upstream", upstream.url(), "--max-page-in-hops", "2"});

  auto first = request_for("responses", script, haystack());
  first["store"] = store;
  if (stream) first["stream"] = true;
  auto a = ask(proxy, first);
  REQUIRE(a.status == 200);  // the enforcing upstream answers 400 to a hop chained on an unkept response
  CHECK(a.id.rfind("resp_", 0) == 0);
  if (script == "find the needle" || script == "two calls") CHECK(a.text.find("NEEDLE secret_port=48213") != std::string::npos);
  if (script == "with client call") CHECK(a.client_calls == std::vector<std::string>{"run_1"});
  if (script == "loop forever") CHECK(a.text == "gave up after 2 reads");

  // Every hop the upstream saw chained (if at all) on the client's own
  // previous_response_id: none here, the client sent the whole input.
  for (const auto& body : upstream.llm_bodies()) CHECK_FALSE(nlohmann::json::parse(body).contains("previous_response_id"));

  if (!store) return;  // the client cannot chain on an unkept response either
  // The id the client got holds the whole conversation: the next turn needs
  // only its new input (and an output for each of its own calls).
  auto input = nlohmann::json::array();
  for (const auto& call : a.client_calls)
    input.push_back({{"type", "function_call_output"}, {"call_id", call}, {"output", "a.txt b.txt"}});
  input.push_back({{"role", "user"}, {"content", "thanks"}});
  nlohmann::json next = {{"model", "gpt-5"}, {"previous_response_id", a.id}, {"input", input}, {"store", true},
                         {"tools", first["tools"]}};
  auto b = ask(proxy, next);
  CHECK(b.status == 200);
  CHECK(b.id != a.id);
}

TEST_CASE("a client turn that chains on its own previous response keeps that id on every hop") {
  mock_upstream upstream;
  proxy_process proxy({"--upstream", upstream.url()});
  // Turn 1: a question, answered without a read (nothing offloaded yet).
  nlohmann::json opening = {{"model", "gpt-5"}, {"input", "find the needle once I send the file"}, {"store", true}};
  auto a = ask(proxy, opening);
  REQUIRE(a.status == 200);
  // Turn 2 chains on turn 1 and brings a large output: the model pages it in.
  auto turn2 = request_for("responses", "find the needle", haystack());
  turn2["previous_response_id"] = a.id;
  turn2["store"] = true;
  auto b = ask(proxy, turn2);
  REQUIRE(b.status == 200);
  CHECK(b.text.find("NEEDLE secret_port=48213") != std::string::npos);
  auto seen = upstream.llm_bodies();
  REQUIRE(seen.size() == 3);  // turn 1, turn 2, its page-in hop
  for (std::size_t i = 1; i < seen.size(); ++i)
    CHECK(nlohmann::json::parse(seen[i]).value("previous_response_id", "") == a.id);
  // And turn 3 chains on the id turn 2 returned.
  nlohmann::json turn3 = {{"model", "gpt-5"}, {"previous_response_id", b.id}, {"input", "thanks"}, {"store", true}};
  CHECK(ask(proxy, turn3).status == 200);
}
