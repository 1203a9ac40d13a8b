// The WebSocket channel's framing (proxy/sessions/ws_channel.hpp): what the
// exchange answers, as the messages a Responses WebSocket client reads.
#include <catch2/catch.hpp>

#include <boost/asio/co_spawn.hpp>
#include <boost/asio/detached.hpp>
#include <functional>
#include <nlohmann/json.hpp>
#include <string>
#include <vector>

#include "proxy/sessions/ws_channel.hpp"

using namespace gistproxy::proxy;

namespace {

// Keeps each message as the client would receive it; no socket.
class recording_channel final : public ws_channel {
 public:
  explicit recording_channel(std::size_t max = 1 << 20) : ws_channel(nullptr, max) {}
  void watch(client_watch&) override {}
  executor get_executor() override { return io_.get_executor(); }
  void run(std::function<awaitable<void>(recording_channel&)> write) {
    asio::co_spawn(io_, write(*this), asio::detached);
    io_.run();
    io_.restart();
  }
  std::vector<std::string> messages;

 private:
  awaitable<error_code> send_text(std::string_view text) override {
    messages.emplace_back(text);
    co_return error_code{};
  }
  asio::io_context io_;
};

http::fields sse_fields() {
  http::fields f;
  f.set(http::field::content_type, "text/event-stream");
  return f;
}

}  // namespace

TEST_CASE("a stream of SSE events becomes one message per event, split however its bytes arrive") {
  recording_channel ch;
  const auto fields = sse_fields();
  const std::string sse =
      "event: response.created\ndata: {\"type\":\"response.created\",\"response\":{\"id\":\"r1\"}}\n\n"
      ": keep-alive\n\n"
      "event: response.completed\ndata: {\"type\":\"response.completed\",\"response\":{\"id\":\"r1\"}}\n\n";
  ch.run([&](recording_channel& c) -> awaitable<void> {
    co_await c.begin_response(reply_head{200, {}, fields, std::nullopt});
    for (std::size_t at = 0; at < sse.size(); at += 7) co_await c.write_body(std::string_view(sse).substr(at, 7), false);
    co_await c.write_body({}, true);
  });
  REQUIRE(ch.messages.size() == 2);  // the keep-alive comment sends nothing
  CHECK(nlohmann::json::parse(ch.messages[0])["type"] == "response.created");
  CHECK(ch.messages[1] == R"({"type":"response.completed","response":{"id":"r1"}})");
  CHECK(ch.ended());
}

TEST_CASE("a stream cut before its last event has not ended the response") {
  recording_channel ch;
  const auto fields = sse_fields();
  ch.run([&](recording_channel& c) -> awaitable<void> {
    co_await c.begin_response(reply_head{200, {}, fields, std::nullopt});
    co_await c.write_body("data: {\"type\":\"response.output_text.delta\",\"delta\":\"hi\"}\n\n", false);
  });
  CHECK(ch.messages.size() == 1);
  CHECK_FALSE(ch.ended());
}

TEST_CASE("any other answer becomes one error event carrying its status and its error object") {
  recording_channel ch;
  const http::fields json_fields;
  const std::string body = R"({"error":{"type":"invalid_request_error","message":"bad model"}})";
  ch.run([&](recording_channel& c) -> awaitable<void> {
    co_await c.begin_response(reply_head{400, {}, json_fields, body.size()});
    co_await c.write_body(std::string_view(body).substr(0, 10), false);
    co_await c.write_body(std::string_view(body).substr(10), true);
  });
  REQUIRE(ch.messages.size() == 1);
  const auto event = nlohmann::json::parse(ch.messages[0]);
  CHECK(event["type"] == "error");
  CHECK(event["status"] == 400);
  CHECK(event["error"]["message"] == "bad model");
  CHECK(ch.ended());
}

TEST_CASE("a whole answer that is not an event stream is one error event too") {
  recording_channel ch;
  const http::fields none;
  ch.run([&](recording_channel& c) -> awaitable<void> {
    co_await c.whole_response(reply_head{502, {}, none, std::nullopt}, "upstream said <html>");
  });
  REQUIRE(ch.messages.size() == 1);
  const auto event = nlohmann::json::parse(ch.messages[0]);
  CHECK(event["status"] == 502);
  CHECK(ch.messages[0].find("<html>") == std::string::npos);  // a body that is not JSON is never echoed
}
