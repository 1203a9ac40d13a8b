// The page-in loop and its readers against a fake upstream and a fake client
// channel: no sockets, no threads. The fake upstream answers each hop with a
// turn rendered by the scripted model; the fake channel keeps every byte the
// client would have received (or fails, as a client that left).
#include <catch2/catch.hpp>

#include <boost/asio/co_spawn.hpp>
#include <boost/asio/detached.hpp>
#include <boost/asio/io_context.hpp>
#include <deque>

#include "proxy/exchange/page_in_loop.hpp"
#include "proxy/sessions/http1_channel.hpp"
#include "rewrite/endpoint.hpp"
#include "rewrite/json/checked.hpp"
#include "tests/support/scripted_model.hpp"

using namespace gistproxy;
using namespace gistproxy::proxy;
using gistproxy::testing::llm_api;
using gistproxy::testing::model_turn;
using njson = nlohmann::json;

namespace {

// An HTTP/1.1 channel that keeps what the client would receive; fails every
// write after `fail_after` writes.
class recording_channel final : public http1_channel {
 public:
  explicit recording_channel(const client_request& request)
      : http1_channel(request.version(), request.keep_alive(), draining_) {}
  void watch(client_watch&) override {}  // the client never leaves here
  executor get_executor() override { return io_.get_executor(); }
  std::string received;
  std::size_t fail_after = SIZE_MAX;

 private:
  awaitable<error_code> send(std::span<const asio::const_buffer> bytes) override {
    if (writes_ >= fail_after) co_return asio::error::broken_pipe;
    ++writes_;
    for (const auto& b : bytes) received.append(static_cast<const char*>(b.data()), b.size());
    co_return error_code{};
  }
  inline static const std::atomic<bool> draining_{false};
  std::size_t writes_ = 0;
  asio::io_context io_;
};

// One upstream answer from a string, its body handed out in small pieces.
class canned_answer final : public upstream_answer {
 public:
  canned_answer(int status, std::string content_type, std::string body) : body_(std::move(body)) {
    head_.result(status);
    head_.set(http::field::content_type, content_type);
  }
  const http::response_header<>& head() const override { return head_; }
  std::optional<std::uint64_t> content_length() const override { return body_.size(); }
  awaitable<std::optional<std::string>> read_whole(proxy_error&) override { co_return body_; }
  awaitable<piece> read_piece() override {
    piece p;
    p.bytes = std::string_view(body_).substr(at_, 7);  // splits events anywhere
    at_ += p.bytes.size();
    p.done = at_ >= body_.size();
    co_return p;
  }
  void end(int status, const rewrite::token_usage&) override { ended_status = status; }
  void fail(std::string_view reason) override { failed = std::string(reason); }

  int ended_status = 0;
  std::string failed;

 private:
  http::response_header<> head_;
  std::string body_;
  std::size_t at_ = 0;
};

// Later hops come from a queue; read_blob calls are answered with their arguments.
class scripted_source final : public hop_source {
 public:
  awaitable<sent> send(const std::string& body, int hop, std::string keepalive) override {
    sent_bodies.push_back(body);
    sent_hops.push_back(hop);
    keepalives += keepalive.empty() ? 0 : 1;
    if (answers.empty()) co_return sent{nullptr, proxy_error{error_kind::upstream_reset, "no answer"}};
    auto next = std::move(answers.front());
    answers.pop_front();
    co_return sent{std::move(next), std::nullopt};
  }
  awaitable<std::vector<rewrite::call_result>> resolve(const std::vector<rewrite::blob_call>& calls) override {
    std::vector<rewrite::call_result> out;
    for (const auto& c : calls) out.push_back({c.id, "PAGE OF " + c.arguments, false});
    resolved += calls.size();
    co_return out;
  }
  std::deque<std::unique_ptr<upstream_answer>> answers;
  std::vector<std::string> sent_bodies;
  std::vector<int> sent_hops;
  int keepalives = 0;
  std::size_t resolved = 0;
};

model_turn read_blob_turn(const std::string& id) {
  model_turn t;
  t.calls.push_back({id, "read_blob", {{"handle", "abcdef0123456789"}}});
  return t;
}
model_turn text_turn(const std::string& text) {
  model_turn t;
  t.text = text;
  return t;
}

std::unique_ptr<canned_answer> chat_json(const model_turn& t) {
  return std::make_unique<canned_answer>(200, "application/json", testing::render_response(llm_api::chat, t, "m").dump());
}
std::unique_ptr<canned_answer> chat_sse(const model_turn& t) {
  return std::make_unique<canned_answer>(200, "text/event-stream", testing::render_chat_stream(t, "m", true));
}

const std::string chat_request =
    R"({"model":"m","messages":[{"role":"user","content":"q"}],"tools":[{"type":"function","function":{"name":"read_blob"}}]})";

struct harness {
  enum class kind { relay, json, sse };

  telemetry::registry registry;
  telemetry::metric_catalogue metrics{registry};
  exchange_stats stats{metrics, "chat"};
  client_request request{http::verb::post, "/v1/chat/completions", 11};
  recording_channel channel{request};
  client_writer out{channel, request, true, false};
  scripted_source source;
  const rewrite::wire_format* wire = &rewrite::endpoint_for("POST", "/v1/chat/completions")->wire();
  int hops = -1;
  rewrite::token_usage usage;

  void run(kind k, upstream_answer& first, int max_hops = 3) {
    reader_env env{out, stats, wire, "read_blob"};
    auto reader = k == kind::json ? make_json_reader(env) : k == kind::sse ? make_stream_reader(env, wire->make_stream_filter("read_blob"), rewrite::stream_transport::sse) : make_relay_reader(env);
    asio::io_context io;
    asio::co_spawn(
        io,
        [&]() -> awaitable<void> {
          hops = co_await run_page_in_loop(source, *reader, first, chat_request, {wire, "read_blob", max_hops}, stats);
          usage = reader->usage();
        },
        asio::detached);
    io.run();
  }
  // The body of the one response the client got (after the head).
  std::string body() const { return channel.received.substr(channel.received.find("\r\n\r\n") + 4); }
  std::uint64_t counter(std::string_view family_text) const {
    auto text = registry.render();
    auto at = text.find(family_text);
    if (at == std::string::npos) return 0;
    return std::stoull(text.substr(text.find(' ', at + family_text.size()) + 1));
  }
};

}  // namespace

TEST_CASE("a JSON answer calling read_blob is paged in and the client gets only the final answer, usage summed") {
  harness h;
  auto first = chat_json(read_blob_turn("call_1"));
  h.source.answers.push_back(chat_json(text_turn("the answer")));
  h.run(harness::kind::json, *first);

  CHECK(h.hops == 1);
  CHECK(h.source.resolved == 1);
  REQUIRE(h.source.sent_bodies.size() == 1);
  auto next = njson::parse(h.source.sent_bodies[0]);
  CHECK(next["messages"].back()["role"] == "tool");
  CHECK(next["messages"].back()["content"].get<std::string>().starts_with("PAGE OF "));
  CHECK(h.source.keepalives == 0);  // nothing can be sent before a JSON answer

  CHECK(h.channel.received.starts_with("HTTP/1.1 200"));
  auto answer = njson::parse(h.body());
  CHECK(answer["choices"][0]["message"]["content"] == "the answer");
  CHECK(answer["usage"]["prompt_tokens"] == 200);  // 100 per hop
  CHECK(h.usage.input_tokens == 200);
  CHECK(h.out.reply().status == 200);
  CHECK_FALSE(h.out.reply().error);
  CHECK(first->ended_status == 200);
}

TEST_CASE("read_blob calls past the hop limit are taken out of the client's JSON answer and counted") {
  harness h;
  auto first = chat_json(read_blob_turn("call_1"));
  h.source.answers.push_back(chat_json(read_blob_turn("call_2")));
  h.run(harness::kind::json, *first, 1);

  CHECK(h.hops == 1);
  REQUIRE(h.source.sent_bodies.size() == 1);
  CHECK(njson::parse(h.source.sent_bodies[0])["tool_choice"] == "none");  // the last hop forbids tool calls
  auto answer = njson::parse(h.body());
  CHECK(h.body().find("read_blob") == std::string::npos);
  CHECK(answer["choices"][0]["finish_reason"] == "stop");
  CHECK(h.counter(R"(gistproxy_page_ins_total{api="chat",mode="full",result="hop_limit",source="proxy"})") == 1);
}

TEST_CASE("a JSON answer that is not an object reaches the client byte for byte") {
  harness h;
  canned_answer first(200, "application/json", R"(["not", "an", "answer"])");
  h.run(harness::kind::json, first);
  CHECK(h.hops == 0);
  CHECK(h.body() == R"(["not", "an", "answer"])");
}

TEST_CASE("an error status on a later JSON hop is relayed to the client as the upstream sent it") {
  harness h;
  auto first = chat_json(read_blob_turn("call_1"));
  h.source.answers.push_back(std::make_unique<canned_answer>(429, "application/json", R"({"error":"slow down"})"));
  h.run(harness::kind::json, *first);
  CHECK(h.channel.received.starts_with("HTTP/1.1 429"));
  CHECK(h.body() == R"({"error":"slow down"})");
}

TEST_CASE("a failed later hop of a JSON answer is an error answer, not a partial one") {
  harness h;
  auto first = chat_json(read_blob_turn("call_1"));  // no second answer queued: the send fails
  h.run(harness::kind::json, *first);
  CHECK(h.channel.received.starts_with("HTTP/1.1 502"));
  CHECK(h.out.reply().error->kind == error_kind::upstream_reset);
}

TEST_CASE("a streamed answer calling read_blob becomes one client stream without the call, ended once") {
  harness h;
  auto first = chat_sse(read_blob_turn("call_1"));
  h.source.answers.push_back(chat_sse(text_turn("streamed answer")));
  h.run(harness::kind::sse, *first);

  CHECK(h.hops == 1);
  CHECK(h.source.keepalives == 1);  // the client hears something while the next hop runs
  CHECK(h.channel.received.find("Transfer-Encoding: chunked") != std::string::npos);
  const auto body = h.body();
  CHECK(body.find("read_blob") == std::string::npos);
  CHECK(body.find("streamed") != std::string::npos);
  CHECK(body.find(" answer") != std::string::npos);
  std::size_t done = 0;
  for (auto at = body.find("[DONE]"); at != std::string::npos; at = body.find("[DONE]", at + 1)) ++done;
  CHECK(done == 1);
  CHECK(body.ends_with("0\r\n\r\n"));
  CHECK(h.usage.input_tokens == 200);
  CHECK_FALSE(h.out.reply().error);
}

TEST_CASE("a later hop that fails mid-stream ends the client's stream with the API's error event") {
  harness h;
  auto first = chat_sse(read_blob_turn("call_1"));  // no second answer queued
  h.run(harness::kind::sse, *first);
  REQUIRE(h.out.reply().error);
  CHECK(h.out.reply().error->kind == error_kind::upstream_reset);
  CHECK(h.body().find("gistproxy: no answer") != std::string::npos);
  CHECK(h.body().ends_with("0\r\n\r\n"));
}

TEST_CASE("a later streamed hop answering with an error status ends the stream with an error event") {
  harness h;
  auto first = chat_sse(read_blob_turn("call_1"));
  auto second = std::make_unique<canned_answer>(500, "application/json", "{}");
  auto* second_ptr = second.get();
  h.source.answers.push_back(std::move(second));
  h.run(harness::kind::sse, *first);
  REQUIRE(h.out.reply().error);
  CHECK(h.out.reply().error->kind == error_kind::upstream_bad_response);
  CHECK(h.body().find("HTTP 500") != std::string::npos);
  (void)second_ptr;  // owned and destroyed by the loop
}

TEST_CASE("a client that leaves mid-stream stops the loop without another hop") {
  harness h;
  auto first = chat_sse(read_blob_turn("call_1"));
  h.source.answers.push_back(chat_sse(text_turn("never sent")));
  SECTION("while the first hop streams") {
    h.channel.fail_after = 1;  // the head only
    h.run(harness::kind::sse, *first);
    CHECK(first->failed == "client disconnected");
  }
  SECTION("before the next hop is sent") {
    h.channel.fail_after = 2;  // the head and the first event; the read_blob call's events are withheld
    h.run(harness::kind::sse, *first);
    CHECK(first->ended_status == 200);
  }
  CHECK(h.source.sent_bodies.empty());
  REQUIRE(h.out.reply().error);
  CHECK(h.out.reply().error->kind == error_kind::client_disconnected);
}

TEST_CASE("the relay is the degenerate reader: bytes as sent, no calls looked for") {
  harness h;
  auto first = chat_json(read_blob_turn("call_1"));
  const auto sent = testing::render_response(llm_api::chat, read_blob_turn("call_1"), "m").dump();
  h.run(harness::kind::relay, *first);
  CHECK(h.hops == 0);
  CHECK(h.source.resolved == 0);
  CHECK(h.body() == sent);
  CHECK(h.usage.input_tokens == 100);
}

TEST_CASE("an error answer to a HEAD request states its length and sends no body") {
  harness h;
  h.request.method(http::verb::head);
  client_writer out{h.channel, h.request, true, false};
  asio::io_context io;
  // A named error, not a temporary in the co_await expression (GCC 12 bug 100611).
  const proxy_error failure{error_kind::upstream_reset, "gone"};
  asio::co_spawn(io, [&]() -> awaitable<void> { co_await out.error(failure); }, asio::detached);
  io.run();
  REQUIRE(h.channel.received.starts_with("HTTP/1.1 502"));
  CHECK(h.channel.received.ends_with("\r\n\r\n"));  // the head, and nothing after it
  CHECK(h.channel.received.find("Content-Length: 0") == std::string::npos);
  CHECK(out.reply().bytes_out == 0);
}
