// The Responses WebSocket's bounds and ends: a message over the size bound,
// an upstream that closes mid-response, a drain, and the metrics that count
// sockets, messages and closes; the first-event and socket-age deadlines.
#include <catch2/catch.hpp>
#include <csignal>

#include "tests/integration/harness.hpp"
#include "tests/support/api_scenarios.hpp"
#include "tests/support/ws_client.hpp"

using namespace gistproxy::testing;
using nlohmann::json;

namespace {

const std::map<std::string, std::string> codex_headers{{"Authorization", "Bearer sk-test"},
                                                       {"OpenAI-Beta", "responses_websockets=2026-02-06"}};

const json small_create{{"model", "gpt-mock"}, {"input", "hi"}};

// Polls until the client sees its socket closed (bounded).
bool closed_within(ws_client& client, std::chrono::seconds limit) {
  const auto deadline = std::chrono::steady_clock::now() + limit;
  while (std::chrono::steady_clock::now() < deadline) {
    if (client.closed()) return true;
    (void)client.read(std::chrono::milliseconds(200));
  }
  return client.closed();
}

}  // namespace

TEST_CASE("a WebSocket message over the body bound closes the socket with 1009 and the proxy serves on") {
  mock_upstream upstream;
  proxy_process proxy{{"--upstream", upstream.url(), "--max-body", "64KiB"}};
  ws_client client("127.0.0.1", proxy.port(), {.headers = codex_headers});
  REQUIRE(client.open());
  json big = small_create;
  big["input"] = std::string(100 * 1024, 'x');
  big["type"] = "response.create";
  // The write itself may fail: the proxy refuses the message from its
  // frame header and closes while the client is still writing it.
  (void)client.send_text(big.dump());
  REQUIRE(closed_within(client, std::chrono::seconds(10)));
  CHECK(client.close_code() == 1009);
  CHECK(upstream.ws_frames().empty());  // nothing of it went upstream
  const auto metrics = metrics_with(proxy.admin_port(), {"gistproxy_websocket_closes_total{side=\"gistproxy\",code=\"too_big\"} 1"});
  CHECK(metrics.find("gistproxy_websocket_closes_total{side=\"gistproxy\",code=\"too_big\"} 1") != std::string::npos);
  ws_client again("127.0.0.1", proxy.port(), {.headers = codex_headers});
  REQUIRE(again.open());
  CHECK(again.create(small_create).end == "response.completed");
}

TEST_CASE("an upstream that closes its socket mid-response closes the client's with the upstream's code") {
  mock_upstream upstream;
  proxy_process proxy{{"--upstream", upstream.url()}};
  upstream.set_ws_fault({.what = ws_fault::kind::close, .after_events = 2, .close_code = 1001});
  ws_client client("127.0.0.1", proxy.port(), {.headers = codex_headers});
  REQUIRE(client.open());
  auto cut = client.create(small_create);
  CHECK(cut.end.empty());  // no terminal event: the client knows the response did not finish
  REQUIRE(closed_within(client, std::chrono::seconds(10)));
  CHECK(client.close_code() == 1001);
  const std::string series = "gistproxy_websocket_closes_total{side=\"upstream\",code=\"going_away\"} 1";
  CHECK(metrics_with(proxy.admin_port(), {series}).find(series) != std::string::npos);
}

TEST_CASE("a drain closes an idle WebSocket with 1001 and the proxy exits") {
  mock_upstream upstream;
  proxy_process proxy{{"--upstream", upstream.url(), "--drain-timeout", "120s"}};
  ws_client client("127.0.0.1", proxy.port(), {.headers = codex_headers});
  REQUIRE(client.open());
  REQUIRE(client.create(small_create).end == "response.completed");
  REQUIRE(::kill(proxy.pid(), SIGTERM) == 0);
  // Far below the drain's 120 s: the idle socket is closed at once, not waited for.
  REQUIRE(closed_within(client, std::chrono::seconds(10)));
  CHECK(client.close_code() == 1001);
  CHECK(proxy.stop() == 0);
}

TEST_CASE("WebSocket metrics count upgrades messages and open sockets and label requests WebSocket") {
  mock_upstream upstream;
  proxy_process proxy{{"--upstream", upstream.url()}};
  {
    ws_client client("127.0.0.1", proxy.port(), {.headers = codex_headers});
    REQUIRE(client.open());
    CHECK(client.create(small_create).end == "response.completed");
    REQUIRE(client.send_text("[]"));
    CHECK(client.read_response().end == "error");
    const auto open = metrics_with(proxy.admin_port(), {"gistproxy_active_websockets 1"});
    CHECK(series_value(open, "gistproxy_active_websockets") == 1);
    CHECK(series_value(open, "gistproxy_websockets_total{result=\"accepted\"}") == 1);
    CHECK(series_value(open, "gistproxy_websocket_messages_total{kind=\"create\"}") == 1);
    CHECK(series_value(open, "gistproxy_websocket_messages_total{kind=\"refused\"}") == 1);
    CHECK(open.find("protocol=\"WebSocket\"") != std::string::npos);
    client.close();
  }
  const auto after = metrics_with(proxy.admin_port(), {"gistproxy_active_websockets 0",
                                                       "gistproxy_websocket_closes_total{side=\"client\",code=\"normal\"} 1"});
  CHECK(series_value(after, "gistproxy_active_websockets") == 0);
  upstream.set_ws_fault({.what = ws_fault::kind::refuse_upgrade, .status = 426});
  ws_client refused("127.0.0.1", proxy.port(), {.headers = codex_headers});
  CHECK_FALSE(refused.open());
  const auto counted = metrics_with(proxy.admin_port(), {"gistproxy_websockets_total{result=\"refused\"} 1"});
  CHECK(series_value(counted, "gistproxy_websockets_total{result=\"refused\"}") == 1);
}

TEST_CASE("an upstream that closes its socket between two responses closes the client's at once with its code") {
  mock_upstream upstream;
  proxy_process proxy{{"--upstream", upstream.url()}};
  ws_client client("127.0.0.1", proxy.port(), {.headers = codex_headers});
  REQUIRE(client.open());
  // Every event of the response, then the upstream's close: seen while the
  // client sends nothing, not at its next message.
  upstream.set_ws_fault({.what = ws_fault::kind::close, .after_events = 1000, .close_code = 1001});
  REQUIRE(client.create(small_create).end == "response.completed");
  REQUIRE(closed_within(client, std::chrono::seconds(10)));
  CHECK(client.close_code() == 1001);
  const std::string series = "gistproxy_websocket_closes_total{side=\"upstream\",code=\"going_away\"} 1";
  CHECK(metrics_with(proxy.admin_port(), {series}).find(series) != std::string::npos);
}

TEST_CASE("an upstream that goes silent mid-response is given up after the stream idle timeout") {
  mock_upstream upstream;
  proxy_process proxy{{"--upstream", upstream.url(), "--stream-idle-timeout", "1s"}};
  upstream.set_ws_fault({.what = ws_fault::kind::stall, .after_events = 2});
  ws_client client("127.0.0.1", proxy.port(), {.headers = codex_headers});
  REQUIRE(client.open());
  auto cut = client.create(small_create, std::chrono::seconds(15));
  CHECK(cut.end.empty());  // no terminal event: the response did not finish
  REQUIRE(closed_within(client, std::chrono::seconds(15)));
  CHECK(client.close_code() == 1011);
}

TEST_CASE("a response longer than the idle timeout keeps the client's socket: its pongs are read meanwhile") {
  mock_upstream upstream;
  // Pings at 0.5 s; a client whose pongs went unread would be dropped at 1 s.
  proxy_process proxy{{"--upstream", upstream.url(), "--idle-timeout", "1s"}};
  ws_client client("127.0.0.1", proxy.port(), {.headers = codex_headers});
  REQUIRE(client.open());
  auto body = request_for("responses", "slow second hop", haystack());
  auto answer = client.create(body, std::chrono::seconds(20));  // the page-in hop takes 1.5 s
  REQUIRE(answer.end == "response.completed");
  CHECK(client.open());
}

TEST_CASE("a message of another type goes upstream as it is and the upstream's answer to it is relayed") {
  mock_upstream upstream;
  proxy_process proxy{{"--upstream", upstream.url()}};
  ws_client client("127.0.0.1", proxy.port(), {.headers = codex_headers});
  REQUIRE(client.open());
  const std::string cancel = R"({"type":"response.cancel","response_id":"resp_none"})";
  REQUIRE(client.send_text(cancel));
  // The mock answers a type it does not serve with an error event, outside
  // any response: the client reads it as the upstream sent it.
  auto answer = client.read_response();
  REQUIRE(answer.end == "error");
  CHECK((*answer.last())["error"]["code"] == "unknown_event_type");
  const auto frames = upstream.ws_frames();
  REQUIRE(frames.size() == 1);
  CHECK(frames[0].payload == cancel);
  // The socket serves on.
  CHECK(client.create(small_create).end == "response.completed");
  const std::string series = "gistproxy_websocket_messages_total{kind=\"upstream_relayed\"} 1";
  CHECK(metrics_with(proxy.admin_port(), {series}).find(series) != std::string::npos);
}

TEST_CASE("an upstream that never starts its response is given up after the upstream timeout") {
  mock_upstream upstream;
  // The stream idle bound is far away: only --upstream-timeout can end the wait.
  proxy_process proxy{{"--upstream", upstream.url(), "--upstream-timeout", "1s", "--stream-idle-timeout", "300s"}};
  upstream.set_ws_fault({.what = ws_fault::kind::stall, .after_events = 0});
  ws_client client("127.0.0.1", proxy.port(), {.headers = codex_headers});
  REQUIRE(client.open());
  auto cut = client.create(small_create, std::chrono::seconds(15));
  CHECK(cut.end.empty());
  REQUIRE(closed_within(client, std::chrono::seconds(15)));
  CHECK(client.close_code() == 1011);
}

TEST_CASE("an idle WebSocket older than its max age is closed with 1001") {
  mock_upstream upstream;
  proxy_process proxy{{"--upstream", upstream.url(), "--websocket-max-age", "1s"}};
  ws_client client("127.0.0.1", proxy.port(), {.headers = codex_headers});
  REQUIRE(client.open());
  REQUIRE(client.create(small_create).end == "response.completed");
  REQUIRE(closed_within(client, std::chrono::seconds(10)));
  CHECK(client.close_code() == 1001);
  const std::string series = "gistproxy_websocket_closes_total{side=\"gistproxy\",code=\"going_away\"} 1";
  CHECK(metrics_with(proxy.admin_port(), {series}).find(series) != std::string::npos);
}

TEST_CASE("a WebSocket that reaches its max age inside a response is closed after the response") {
  mock_upstream upstream;
  proxy_process proxy{{"--upstream", upstream.url(), "--websocket-max-age", "500ms"}};
  ws_client client("127.0.0.1", proxy.port(), {.headers = codex_headers});
  REQUIRE(client.open());
  auto body = request_for("responses", "slow second hop", haystack());
  auto answer = client.create(body, std::chrono::seconds(20));  // the page-in hop takes 1.5 s: past the age
  CHECK(answer.end == "response.completed");  // never cut inside a response
  REQUIRE(closed_within(client, std::chrono::seconds(10)));
  CHECK(client.close_code() == 1001);
}

TEST_CASE("an upstream message that is not a JSON event or is over the bound ends the response and the proxy serves on") {
  mock_upstream upstream;
  proxy_process proxy{{"--upstream", upstream.url(), "--max-body", "256KiB"}};
  for (const auto fault : {ws_fault::kind::non_json_text, ws_fault::kind::binary_frame, ws_fault::kind::oversized_event}) {
    INFO("fault " << int(fault));
    upstream.set_ws_fault({.what = fault, .after_events = 1});
    ws_client client("127.0.0.1", proxy.port(), {.headers = codex_headers});
    REQUIRE(client.open());
    auto cut = client.create(small_create, std::chrono::seconds(15));
    CHECK(cut.end != "response.completed");  // the rest of that response is not the upstream's to trust
    REQUIRE(closed_within(client, std::chrono::seconds(15)));
    CHECK(client.close_code() == 1011);
  }
  ws_client again("127.0.0.1", proxy.port(), {.headers = codex_headers});
  REQUIRE(again.open());
  CHECK(again.create(small_create).end == "response.completed");
}
