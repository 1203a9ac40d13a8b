// The mock upstream's Responses WebSocket route, driven in-process by
// ws_client: what gistproxy's WebSocket tests will stand on.
#include <catch2/catch.hpp>

#include "tests/support/mock_upstream.hpp"
#include "tests/support/ws_client.hpp"

using namespace gistproxy::testing;
using nlohmann::json;

namespace {

json user_says(const std::string& text) {
  return {{"type", "message"}, {"role", "user"}, {"content", {{{"type", "input_text"}, {"text", text}}}}};
}

// A conversation whose tool output was offloaded: the scripted model answers
// "find the needle" with read_blob on the reference.
json needle_request() {
  return {{"model", "gpt-mock"},
          {"store", false},
          {"input",
           {user_says("find the needle"),
            {{"type", "function_call"}, {"call_id", "call_1"}, {"name", "shell"}, {"arguments", "{}"}},
            {{"type", "function_call_output"}, {"call_id", "call_1"}, {"output", R"(big output: read_blob("0123456789abcdef"))"}}}}};
}

}  // namespace

TEST_CASE("The WebSocket upstream upgrades and streams one response as text frames", "[ws_upstream]") {
  mock_upstream upstream;
  upstream.set_ws_handshake_headers({{"x-codex-turn-state", "turn-1"}});
  ws_client client("127.0.0.1", upstream.port(),
                   {.headers = {{"Authorization", "Bearer sk-test"}, {"OpenAI-Beta", "responses_websockets=2026-02-06"}}});
  REQUIRE(client.open());
  CHECK(client.handshake_status() == 101);
  CHECK(client.handshake_headers().count("sec-websocket-extensions") == 0);  // permessage-deflate declined
  CHECK(client.handshake_headers().at("x-codex-turn-state") == "turn-1");

  auto answer = client.create({{"model", "gpt-mock"}, {"input", "hi"}, {"stream", true}});
  REQUIRE(answer.end == "response.completed");
  REQUIRE(answer.events.size() == answer.frames.size());  // every frame one JSON event, no SSE framing
  CHECK(answer.events.front()["type"] == "response.created");
  for (std::size_t i = 0; i < answer.events.size(); ++i) CHECK(answer.events[i]["sequence_number"] == int(i));
  const auto& completed = (*answer.last())["response"];
  CHECK(completed["id"].get<std::string>().starts_with("resp_"));
  CHECK(completed["id"] == answer.events.front()["response"]["id"]);
  CHECK(completed["output"][0]["content"][0]["text"] == "Hello from the mock.");
  CHECK(completed["usage"]["input_tokens"] == 100);

  const auto upgrades = upstream.ws_upgrades();
  REQUIRE(upgrades.size() == 1);
  CHECK(upgrades[0].target == "/v1/responses");
  CHECK(upgrades[0].status == 101);
  CHECK(upgrades[0].headers.at("authorization") == "Bearer sk-test");
  CHECK(upgrades[0].headers.at("openai-beta") == "responses_websockets=2026-02-06");
  const auto frames = upstream.ws_frames();
  REQUIRE(frames.size() == 1);
  CHECK(frames[0].connection == 1);
  CHECK(frames[0].text);
  CHECK(json::parse(frames[0].payload)["type"] == "response.create");
  CHECK(upstream.llm_bodies().empty());  // WebSocket messages are recorded as frames only
}

TEST_CASE("The WebSocket upstream resolves previous_response_id on its connection", "[ws_upstream]") {
  mock_upstream upstream;
  ws_client client("127.0.0.1", upstream.port());
  REQUIRE(client.open());

  auto warm_up = needle_request();
  warm_up["generate"] = false;
  auto warmed = client.create(warm_up);
  REQUIRE(warmed.end == "response.completed");
  REQUIRE(warmed.events.size() == 2);
  CHECK(warmed.events[0]["type"] == "response.created");
  CHECK((*warmed.last())["response"]["output"].empty());
  const std::string warm_id = (*warmed.last())["response"]["id"];

  // Only the chained conversation holds the reference: the model asks for it.
  auto first = client.create({{"model", "gpt-mock"}, {"previous_response_id", warm_id}, {"input", json::array()}});
  REQUIRE(first.end == "response.completed");
  const auto& call = (*first.last())["response"]["output"][0];
  REQUIRE(call["name"] == "read_blob");
  CHECK(json::parse(call["arguments"].get<std::string>())["handle"] == "0123456789abcdef");
  const std::string first_id = (*first.last())["response"]["id"];
  CHECK(first_id != warm_id);

  auto page_in = client.create({{"model", "gpt-mock"}, {"previous_response_id", first_id},
                                {"input", {{{"type", "function_call_output"}, {"call_id", call["call_id"]}, {"output", "line 7: NEEDLE port=1"}}}}});
  REQUIRE(page_in.end == "response.completed");
  CHECK((*page_in.last())["response"]["output"][0]["content"][0]["text"] == "found: line 7: NEEDLE port=1");
  CHECK((*page_in.last())["response"]["previous_response_id"] == first_id);

  SECTION("an unknown id is an error event and the socket stays open") {
    auto missing = client.create({{"model", "gpt-mock"}, {"previous_response_id", "resp_nope"}, {"input", "hi"}});
    REQUIRE(missing.end == "error");
    CHECK(*missing.last() == json{{"type", "error"}, {"status", 400},
                                  {"error", {{"type", "invalid_request_error"}, {"code", "previous_response_not_found"},
                                             {"message", "Previous response with id 'resp_nope' not found."},
                                             {"param", "previous_response_id"}}}});
    CHECK(client.open());
    CHECK(client.create({{"model", "gpt-mock"}, {"input", "hi"}}).end == "response.completed");
  }
  SECTION("another connection does not know this one's responses") {
    ws_client other("127.0.0.1", upstream.port());
    auto missing = other.create({{"model", "gpt-mock"}, {"previous_response_id", first_id}, {"input", "hi"}});
    REQUIRE(missing.end == "error");
    CHECK((*missing.last())["error"]["code"] == "previous_response_not_found");
  }
  SECTION("the frames record what reached the upstream") {
    const auto frames = upstream.ws_frames();
    REQUIRE(frames.size() == 3);
    CHECK(json::parse(frames[0].payload)["generate"] == false);
    CHECK(json::parse(frames[2].payload)["previous_response_id"] == first_id);
    CHECK(frames[2].payload.find("NEEDLE port=1") != std::string::npos);
  }
}

TEST_CASE("The WebSocket upstream refuses an upgrade with the scripted status", "[ws_upstream]") {
  mock_upstream upstream;
  const int status = GENERATE(426, 500);
  upstream.set_ws_fault({.what = ws_fault::kind::refuse_upgrade, .status = status});
  ws_client refused("127.0.0.1", upstream.port());
  CHECK_FALSE(refused.open());
  CHECK(refused.handshake_status() == status);
  ws_client next("127.0.0.1", upstream.port());  // the fault was for one upgrade
  CHECK(next.open());
  const auto upgrades = upstream.ws_upgrades();
  REQUIRE(upgrades.size() == 2);
  CHECK(upgrades[0].status == status);
  CHECK(upgrades[1].status == 101);
}

TEST_CASE("The WebSocket upstream plays its scripted faults", "[ws_upstream]") {
  mock_upstream upstream;
  const json hello = {{"model", "gpt-mock"}, {"input", "hi"}};
  SECTION("a close frame mid-stream") {
    upstream.set_ws_fault({.what = ws_fault::kind::close, .after_events = 2});
    ws_client client("127.0.0.1", upstream.port());
    auto cut = client.create(hello);
    CHECK(cut.frames.size() == 2);
    CHECK(cut.end.empty());
    CHECK(client.closed());
    CHECK(client.close_code() == 1011);
  }
  SECTION("the connection dropped mid-stream, no close frame") {
    upstream.set_ws_fault({.what = ws_fault::kind::drop, .after_events = 3});
    ws_client client("127.0.0.1", upstream.port());
    auto cut = client.create(hello);
    CHECK(cut.frames.size() == 3);
    CHECK(client.closed());
    CHECK(client.close_code() == 0);
  }
  SECTION("a frame that is not JSON, then the rest") {
    upstream.set_ws_fault({.what = ws_fault::kind::non_json_text, .after_events = 1});
    ws_client client("127.0.0.1", upstream.port());
    auto answer = client.create(hello);
    CHECK(answer.end == "response.completed");
    CHECK(answer.frames.size() == answer.events.size() + 1);
    CHECK(answer.frames[1].starts_with("mock: this frame is not JSON"));
  }
  SECTION("a binary frame") {
    upstream.set_ws_fault({.what = ws_fault::kind::binary_frame, .after_events = 1});
    ws_client client("127.0.0.1", upstream.port());
    client.send_text(json{{"type", "response.create"}, {"model", "gpt-mock"}, {"input", "hi"}}.dump());
    CHECK(client.read()->text);
    auto binary = client.read();
    REQUIRE(binary);
    CHECK_FALSE(binary->text);
    CHECK(client.read_response().end == "response.completed");
  }
  SECTION("a stall keeps the response in flight: a second create is an error") {
    upstream.set_ws_fault({.what = ws_fault::kind::stall, .after_events = 1});
    ws_client client("127.0.0.1", upstream.port());
    auto stalled = client.create(hello, std::chrono::milliseconds(300));
    CHECK(stalled.frames.size() == 1);
    CHECK(stalled.end.empty());
    auto second = client.create(hello);
    REQUIRE(second.end == "error");
    CHECK((*second.last())["error"]["code"] == "response_already_in_flight");
    CHECK(client.open());
  }
  SECTION("a binary frame from the client is closed with 1003") {
    ws_client client("127.0.0.1", upstream.port());
    client.send_binary("\x01\x02");
    CHECK_FALSE(client.read());
    CHECK(client.closed());
    CHECK(client.close_code() == 1003);
    const auto frames = upstream.ws_frames();
    REQUIRE(frames.size() == 1);
    CHECK_FALSE(frames[0].text);
  }
}
