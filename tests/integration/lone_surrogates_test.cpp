// Answers with a lone UTF-16 surrogate escape (`\ud83d` without its pair):
// upstreams echo one from a client's tool description or instructions, and
// models emit them. nlohmann refuses such JSON, so these answers used to be
// relayed as sent, a read_blob call in them included. Through the real binary
// against a byte-exact upstream: the call is intercepted in every API, JSON
// and streamed, and the client gets the surrogate as the escape it came as.
#include <catch2/catch.hpp>

#include "rewrite/eventstream/eventstream.hpp"
#include "rewrite/offload/base64.hpp"
#include "rewrite/sse/event_parser.hpp"
#include "rewrite/stream_framing.hpp"
#include "tests/integration/harness.hpp"
#include "tests/support/api_scenarios.hpp"
#include "tests/support/raw_upstream.hpp"

using namespace gistproxy::testing;
namespace es = gistproxy::rewrite::eventstream;
namespace rw = gistproxy::rewrite;

namespace {

// Rendered answers name the surrogate by this word; on the wire it is `\ud83d`
// (nlohmann cannot write a lone surrogate, so the test puts it in the bytes).
const std::string marker = "LONE_SURROGATE";
const std::string lone = "\\ud83d";

std::string with_lone_surrogates(std::string s) {
  for (std::size_t at; (at = s.find(marker)) != std::string::npos;) s.replace(at, marker.size(), lone);
  return s;
}

// The surrogate in the call's id: every API's call carries one, whole in one
// event, and the next hop must give it back exactly as the upstream sent it.
model_turn read_blob_turn() {
  model_turn t;
  t.calls.push_back({"rb_" + marker, "read_blob", {{"handle", "0000000000000000"}}});
  return t;
}

// The surrogate in the model's text, in the first half (streams split text in halves).
model_turn text_turn() {
  model_turn t;
  t.text = marker + " then the rest of the answer, long enough to be split";
  return t;
}

bool is_eventstream(const std::string& api, bool stream) { return stream && api.starts_with("bedrock-"); }

rw::stream_transport transport_of(const std::string& api) {
  return api == "bedrock-converse" ? rw::stream_transport::eventstream_typed : rw::stream_transport::eventstream_wrapped;
}

// SSE events as Bedrock frames them: ConverseStream names each by its
// :event-type; InvokeModel wraps each event's JSON in base64 in a "chunk".
std::string as_eventstream(const std::string& api, const std::string& sse) {
  std::string body;
  rw::sse::event_parser events;
  events.feed(sse, [&](const rw::sse::event& e) {
    if (e.comment_only) return;
    const std::string data = with_lone_surrogates(std::string(e.data));
    const bool typed = transport_of(api) == rw::stream_transport::eventstream_typed;
    const std::string payload = typed ? data : R"({"bytes":")" + rw::base64_encode(data) + R"("})";
    body += es::encode(es::make_message(
        {{":event-type", typed ? std::string(e.name) : "chunk"}, {":content-type", "application/json"}, {":message-type", "event"}},
        payload));
  });
  return raw_upstream::response(body, "application/vnd.amazon.eventstream");
}

// The turn as the API answers it on the wire.
std::string answer(const std::string& api, const model_turn& turn, bool stream, const nlohmann::json& request = nullptr) {
  const auto scripted = *scripted_api(api);
  if (!stream) return raw_upstream::response(with_lone_surrogates(render_response(scripted, turn, model_for(api), request).dump()));
  const std::string sse = wire_api(api) == "responses" ? render_responses_stream(turn, model_for(api), request) : render_stream(api, turn);
  if (is_eventstream(api, stream)) return as_eventstream(api, sse);
  return raw_upstream::response(with_lone_surrogates(sse), "text/event-stream");
}

http_result ask(const proxy_process& proxy, const std::string& api, bool stream, nlohmann::json body) {
  // The SDKs of APIs that choose streaming in the body say so there too.
  if (stream && wire_api(api) != "gemini" && api != "bedrock-converse") body["stream"] = true;
  return http_request(proxy.port(), "POST", path_for(api, stream), with_lone_surrogates(body.dump()), key_header(api));
}

// What the client got, as text: an event-stream's events as SSE.
std::string client_view(const std::string& api, bool stream, const std::string& body) {
  return is_eventstream(api, stream) ? rw::eventstream_as_sse(body, transport_of(api)) : body;
}

}  // namespace

TEST_CASE("an answer with a lone surrogate escape still has its read_blob call intercepted, in every API, JSON and streamed") {
  auto api = GENERATE(as<std::string>{}, "chat", "responses", "messages", "gemini", "bedrock-converse", "bedrock-messages");
  auto stream = GENERATE(false, true);
  CAPTURE(api, stream);
  raw_upstream upstream({{answer(api, read_blob_turn(), stream)}, {answer(api, text_turn(), stream)}});
  proxy_process proxy({"--upstream", upstream.url(), "--inject-read-blob", "always"});
  auto res = ask(proxy, api, stream, request_for(api, "hello", "a short output"));

  REQUIRE(res.status == 200);
  CHECK(upstream.requests() == 2);  // the call was answered by gistproxy and the turn went on
  const auto seen = client_view(api, stream, res.body);
  CHECK(seen.find("read_blob") == std::string::npos);
  CHECK(seen.find('"' + lone) != std::string::npos);      // the text's first character, as the upstream escaped it
  CHECK(seen.find("\xEF\xBF\xBD") == std::string::npos);  // never U+FFFD
  CHECK(seen.find("\\ufffd") == std::string::npos);
  const auto bodies = upstream.bodies();
  REQUIRE(bodies.size() == 2);
  CHECK(bodies[1].find("rb_" + lone) != std::string::npos);  // the call's id given back as it came
  CHECK(bodies[1].find("\xEF\xBF\xBD") == std::string::npos);
}

TEST_CASE("a Responses answer that echoes a client's tool description with a lone surrogate shows the client its own tools") {
  auto stream = GENERATE(false, true);
  CAPTURE(stream);
  auto request = request_for("responses", "hello", "a short output");
  request["tools"][1]["description"] = "runs " + marker;
  // What the upstream echoes: the tools it was sent, read_blob's among them.
  auto forwarded = request;
  forwarded["tools"].push_back({{"type", "function"}, {"name", "read_blob"}, {"description", "Read a stored tool output."}});
  raw_upstream upstream({{answer("responses", read_blob_turn(), stream, forwarded)},
                         {answer("responses", text_turn(), stream, forwarded)}});
  proxy_process proxy({"--upstream", upstream.url(), "--inject-read-blob", "always"});
  auto res = ask(proxy, "responses", stream, request);

  REQUIRE(res.status == 200);
  CHECK(upstream.requests() == 2);
  CHECK(res.body.find("read_blob") == std::string::npos);
  CHECK(res.body.find(R"("description":"runs )" + lone + "\"") != std::string::npos);  // the client's tools, as it sent them
  CHECK(res.body.find(lone + " then the rest") != std::string::npos);
  CHECK(res.body.find("\xEF\xBF\xBD") == std::string::npos);
}

// The request side is unchanged: a tool output with a lone surrogate has no
// exact UTF-8 form to store and page back, so it stays inline, counted.
TEST_CASE("a tool output with a lone surrogate escape stays inline as sent, counted as lossy") {
  raw_upstream upstream({{raw_upstream::response(render_response(llm_api::chat, text_turn(), "gpt-4o").dump())}});
  proxy_process proxy({"--upstream", upstream.url()});
  const std::string output = haystack() + marker;
  auto res = ask(proxy, "chat", false, request_for("chat", "hello", output));

  REQUIRE(res.status == 200);
  const auto bodies = upstream.bodies();
  REQUIRE(bodies.size() == 1);
  CHECK(bodies[0].find(with_lone_surrogates(nlohmann::json(output).dump())) != std::string::npos);  // whole, as sent
  const std::string series = R"(gistproxy_rewrite_failures_total{api="chat",reason="lossy"})";
  CHECK(series_value(metrics_with(proxy.admin_port(), {series + " 1"}), series) == 1);
}
