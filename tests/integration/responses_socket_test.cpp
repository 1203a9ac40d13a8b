// The Responses API over WebSocket through gistproxy (Codex CLI's default
// transport), against a mock upstream that speaks it on its side too.
#include <catch2/catch.hpp>

#include "tests/integration/harness.hpp"
#include "tests/integration/test_pki.hpp"
#include "tests/support/api_scenarios.hpp"
#include "tests/support/connect_proxy.hpp"
#include "tests/support/ws_client.hpp"

using namespace gistproxy::testing;
using nlohmann::json;

namespace {

const std::map<std::string, std::string> codex_headers{{"Authorization", "Bearer sk-test"},
                                                       {"OpenAI-Beta", "responses_websockets=2026-02-06"}};

struct socket_stack {
  mock_upstream upstream;
  std::filesystem::path spans = temp_path("spans.jsonl");
  proxy_process proxy{{"--upstream", upstream.url(), "--span-log", spans.string()}};
};

// The last response.completed's response: what a socket client keeps.
json completed_response(const ws_client::response& r) {
  return r.last() && (*r.last())["type"] == "response.completed" ? (*r.last())["response"] : json();
}

}  // namespace

TEST_CASE("a Responses WebSocket is proxied: a big output offloaded and read_blob paged in inside the socket") {
  socket_stack s;
  ws_client client("127.0.0.1", s.proxy.port(), {.headers = codex_headers});
  REQUIRE(client.open());
  CHECK(client.handshake_status() == 101);

  auto body = request_for("responses", "find the needle", haystack());
  body["stream"] = true;
  auto answer = client.create(body, std::chrono::seconds(20));
  REQUIRE(answer.end == "response.completed");
  for (const auto& frame : answer.frames) CHECK(frame.find("read_blob") == std::string::npos);  // never the client's
  const auto response = completed_response(answer);
  CHECK(answer_text("responses", response) == "found: 2501: config line 2500: NEEDLE secret_port=48213");

  // Upstream: one socket; the first message carried a reference, not the
  // output; the page-in went on the same socket.
  const auto upgrades = s.upstream.ws_upgrades();
  REQUIRE(upgrades.size() == 1);
  CHECK(upgrades[0].headers.at("authorization") == "Bearer sk-test");
  CHECK(upgrades[0].headers.at("openai-beta") == "responses_websockets=2026-02-06");
  const auto frames = s.upstream.ws_frames();
  REQUIRE(frames.size() == 2);
  CHECK(frames[0].connection == frames[1].connection);
  CHECK(frames[0].payload.find("NEEDLE secret_port=48213") == std::string::npos);
  CHECK(json::parse(frames[0].payload)["type"] == "response.create");
  CHECK(frames[1].payload.find("NEEDLE secret_port=48213") != std::string::npos);
  // The id the client keeps names the upstream's last response, whose state
  // holds the whole turn: the next message chains on it.
  auto next = client.create({{"model", "gpt-mock"}, {"previous_response_id", response["id"]}, {"input", "thanks"}});
  CHECK(next.end == "response.completed");
}

TEST_CASE("an upstream that refuses the WebSocket upgrade is answered with its own status at once") {
  const int status = GENERATE(426, 500);
  socket_stack s;
  s.upstream.set_ws_fault({.what = ws_fault::kind::refuse_upgrade, .status = status});
  ws_client client("127.0.0.1", s.proxy.port(), {.headers = codex_headers});
  CHECK_FALSE(client.open());
  CHECK(client.handshake_status() == status);
  // The proxy serves on: the next upgrade is accepted.
  ws_client again("127.0.0.1", s.proxy.port(), {.headers = codex_headers});
  CHECK(again.open());
}

TEST_CASE("a message that is not a JSON request is answered with an error event and the socket stays open") {
  socket_stack s;
  ws_client client("127.0.0.1", s.proxy.port(), {.headers = codex_headers});
  REQUIRE(client.open());
  REQUIRE(client.send_text("not json"));
  auto refused = client.read_response();
  REQUIRE(refused.end == "error");
  CHECK((*refused.last())["status"] == 400);
  auto fine = client.create({{"model", "gpt-mock"}, {"input", "hi"}});
  CHECK(fine.end == "response.completed");
  CHECK(s.upstream.ws_frames().size() == 1);  // the refused message never went upstream
}

TEST_CASE("a binary message closes the client's socket with 1003") {
  socket_stack s;
  ws_client client("127.0.0.1", s.proxy.port(), {.headers = codex_headers});
  REQUIRE(client.open());
  REQUIRE(client.send_binary("\x01\x02"));
  CHECK_FALSE(client.read(std::chrono::seconds(5)));
  CHECK(client.closed());
  CHECK(client.close_code() == 1003);
}

TEST_CASE("the upstream leg is wss through --egress-proxy: TLS verified against the upstream's name and paged in") {
  connect_proxy egress;
  test_pki pki("localhost");
  mock_upstream upstream({"127.0.0.1", 0, pki.cert.string(), pki.key.string()});
  proxy_process proxy({"--upstream", upstream.url(), "--upstream-ca", pki.ca.string(), "--egress-proxy", egress.url()});
  ws_client client("127.0.0.1", proxy.port(), {.headers = codex_headers});
  REQUIRE(client.open());
  auto answer = client.create(request_for("responses", "find the needle", haystack()), std::chrono::seconds(20));
  REQUIRE(answer.end == "response.completed");
  CHECK(answer_text("responses", completed_response(answer)) == "found: 2501: config line 2500: NEEDLE secret_port=48213");
  CHECK(egress.targets() == std::vector<std::string>{"localhost:" + std::to_string(upstream.port())});
  const auto frames = upstream.ws_frames();
  REQUIRE(frames.size() == 2);  // the request and its page-in, on the one tunnelled socket
  CHECK(frames[0].connection == frames[1].connection);
}
