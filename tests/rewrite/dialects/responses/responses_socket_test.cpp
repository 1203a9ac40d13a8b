// The Responses API's WebSocket messages mapped to and from the HTTP forms:
// client frames read, upstream create frames written, upstream events as SSE
// and back, and answers that are not streams as error events.
#include "rewrite/dialects/responses/responses_socket.hpp"

#include <catch2/catch.hpp>
#include <nlohmann/json.hpp>
#include <string>
#include <vector>

#include "rewrite/sse/event_parser.hpp"

using namespace gistproxy::rewrite;
using J = nlohmann::json;

namespace {

constexpr std::size_t bound = 1 << 20;

std::string nested(std::size_t depth) { return std::string(depth, '[') + std::string(depth, ']'); }

// The client frames the SSE bytes make, fed in pieces of `piece` bytes.
std::vector<std::string> frames_of(std::string_view sse, std::size_t piece, std::size_t max = bound) {
  sse_to_client_frames cut(max);
  std::vector<std::string> out;
  for (std::size_t i = 0; i < sse.size(); i += piece)
    cut.feed(sse.substr(i, piece), [&](std::string_view f) { out.emplace_back(f); });
  return out;
}

struct parsed_event {
  std::string name, data;
};

std::vector<parsed_event> events_of(std::string_view sse) {
  sse::event_parser parser;
  std::vector<parsed_event> out;
  parser.feed(sse, [&](const sse::event& e) { out.push_back({std::string(e.name), std::string(e.data)}); });
  return out;
}

}  // namespace

TEST_CASE("a response.create frame becomes its request body with every member but type kept byte for byte in order") {
  const std::string frame =
      R"({"model":"gpt-5.x", "type":"response.create","in\u0070ut":[{"type":"message","content":"caf\u00e9 \"q\""}],)"
      R"("temperature":1.0e+0,"reasoning":{ "effort" : "medium" },"stream":true})";
  auto read = read_client_frame(frame, bound);
  REQUIRE(read.kind == client_frame_kind::create);
  CHECK(read.request_body ==
      R"({"model":"gpt-5.x","in\u0070ut":[{"type":"message","content":"caf\u00e9 \"q\""}],)"
      R"("temperature":1.0e+0,"reasoning":{ "effort" : "medium" },"stream":true})");
  CHECK(read.refusal.empty());
}

TEST_CASE("a response.create frame is always streamed: stream added when absent and replaced when not true") {
  CHECK(read_client_frame(R"({"type":"response.create","model":"m"})", bound).request_body ==
      R"({"model":"m","stream":true})");
  CHECK(read_client_frame(R"({"type":"response.create"})", bound).request_body == R"({"stream":true})");
  CHECK(read_client_frame(R"({"stream":false,"type":"response.create","model":"m"})", bound).request_body ==
      R"({"stream":true,"model":"m"})");
  CHECK(read_client_frame(R"({"type":"response.create","stream":"no","stream":null})", bound).request_body ==
      R"({"stream":true,"stream":true})");
}

TEST_CASE("client frames of another type are forwarded as they are") {
  for (const char* frame : {R"({"type":"response.cancel"})", R"({"type":"response.processed","response_id":"r"})",
                            R"({"type":"response.creat"})"}) {
    auto read = read_client_frame(frame, bound);
    CHECK(read.kind == client_frame_kind::other);
    CHECK(read.request_body.empty());
  }
  // An escaped spelling means the same type.
  CHECK(read_client_frame(R"({"type":"response.\u0063reate"})", bound).kind == client_frame_kind::create);
}

TEST_CASE("client frames that are not one JSON object with a string type are refused with a reason") {
  const std::vector<std::string> frames = {
      "not json", "[{\"type\":\"response.create\"}]", "\"response.create\"", "{\"type\":42}", "{\"type\":null}",
      "{\"model\":\"m\"}", "{\"type\":\"response.create\"", "{\"type\":\"response.create\"} {}", "",
      "{\"type\":\"response.create\",\"input\":[1,]}"};
  for (const auto& frame : frames) {
    INFO(frame);
    auto read = read_client_frame(frame, bound);
    CHECK(read.kind == client_frame_kind::refused);
    CHECK_FALSE(read.refusal.empty());
    CHECK(read.request_body.empty());
  }
}

TEST_CASE("client frames over the bound or not UTF-8 are refused before they are read") {
  const std::string frame = R"({"type":"response.create","model":"m"})";
  CHECK(read_client_frame(frame, frame.size()).kind == client_frame_kind::create);
  CHECK(read_client_frame(frame, frame.size() - 1).kind == client_frame_kind::refused);
  CHECK(read_client_frame(frame, frame.size() - 1).refusal == "message over the size limit");
  const std::string latin1 = "{\"type\":\"response.create\",\"input\":\"caf\xe9\"}";
  CHECK(read_client_frame(latin1, bound).refusal == "message is not UTF-8");
}

TEST_CASE("a client frame nested 10000 deep is refused without recursion") {
  const std::string frame = R"({"type":"response.create","input":)" + nested(10000) + "}";
  auto read = read_client_frame(frame, bound);
  CHECK(read.kind == client_frame_kind::refused);
  CHECK(read.refusal == "message is not one well-formed JSON object");
}

TEST_CASE("a client frame with two members that spell type is refused") {
  for (const char* frame : {R"({"type":"response.cancel","type":"response.create"})",
                            R"({"\u0074ype":"response.cancel","type":"response.create"})"}) {
    auto read = read_client_frame(frame, bound);
    CHECK(read.kind == client_frame_kind::refused);
    CHECK(read.refusal == "message has more than one type");
  }
}

TEST_CASE("a request body becomes a response.create frame with its members byte for byte and stream kept") {
  const std::string body = R"({"model":"m","input":[{"type":"function_call_output","call_id":"c","output":"x\ny"}],)"
                           R"("previous_response_id":"resp_1", "stream":true})";
  auto frame = response_create_frame(body);
  REQUIRE(frame);
  CHECK(*frame == R"({"type":"response.create","model":"m","input":[{"type":"function_call_output","call_id":"c",)"
                  R"("output":"x\ny"}],"previous_response_id":"resp_1","stream":true})");
  CHECK(response_create_frame("{}") == std::optional<std::string>(R"({"type":"response.create"})"));
  // A read client frame comes back as the frame it was (the stream forced on).
  auto read = read_client_frame(R"({"type":"response.create","model":"m","stream":true})", bound);
  CHECK(response_create_frame(read.request_body) ==
        std::optional<std::string>(R"({"type":"response.create","model":"m","stream":true})"));
}

TEST_CASE("a request body's own type member is dropped from the response.create frame") {
  CHECK(response_create_frame(R"({"type":"x","model":"m"})") ==
        std::optional<std::string>(R"({"type":"response.create","model":"m"})"));
  CHECK_FALSE(response_create_frame("[]"));
  CHECK_FALSE(response_create_frame("{\"model\":"));
}

TEST_CASE("upstream event frames become SSE events named by their type and the four last events end a response") {
  const std::string frame = R"({"type":"response.output_text.delta","sequence_number":3,"delta":"hi"})";
  auto e = sse_of_upstream_frame(frame, bound);
  REQUIRE(e);
  CHECK(e->sse == "event: response.output_text.delta\ndata: " + frame + "\n\n");
  CHECK_FALSE(e->ends_response);
  for (const char* type : {"response.completed", "response.failed", "response.incomplete", "error"}) {
    INFO(type);
    auto last = sse_of_upstream_frame(std::string(R"({"type":")") + type + R"("})", bound);
    REQUIRE(last);
    CHECK(last->ends_response);
  }
  for (const char* type : {"response.created", "response.output_item.done", "codex.rate_limits"})
    CHECK_FALSE(sse_of_upstream_frame(std::string(R"({"type":")") + type + R"("})", bound)->ends_response);
}

TEST_CASE("upstream frames that are not a JSON object with a string type are protocol errors") {
  const std::string ok = R"({"type":"response.created"})";
  CHECK(sse_of_upstream_frame(ok, ok.size()));
  const std::vector<std::string> frames = {
      "[DONE]", "[]", "{\"type\":1}", "{}", "{\"type\":\"a\",\"type\":\"b\"}", "{\"type\":\"a\"", "",
      "{\"type\":\"a\",\"x\":" + nested(10000) + "}", "{\"type\":\"a\",\"x\":\"\xff\"}"};
  for (const auto& frame : frames) {
    INFO(frame.substr(0, 40));
    CHECK_FALSE(sse_of_upstream_frame(frame, bound));
  }
  CHECK_FALSE(sse_of_upstream_frame(ok, ok.size() - 1));
}

TEST_CASE("an upstream frame survives the SSE round trip byte for byte") {
  const std::string compact = R"({"type":"response.completed","response":{"id":"resp_A","output":[]}})";
  const std::string pretty = "{\n  \"type\": \"response.created\",\n  \"response\": {\"id\": \"r\"}\n}";
  const std::string leading_blank = "\n{\"type\":\"error\",\"status\":400}";
  auto piece = GENERATE(1u, 5u, 4096u);
  for (const std::string& frame : {compact, pretty, leading_blank}) {
    auto e = sse_of_upstream_frame(frame, bound);
    REQUIRE(e);
    auto events = events_of(e->sse);
    REQUIRE(events.size() == 1);
    CHECK(events[0].data == frame);
    auto back = frames_of(e->sse, piece);
    REQUIRE(back.size() == 1);
    CHECK(back[0] == frame);
  }
  // CR is JSON whitespace that SSE reads as a line end: it comes back as LF.
  auto crlf = sse_of_upstream_frame("{\"type\":\"a\",\r\n\"b\":1}", bound);
  REQUIRE(crlf);
  CHECK(frames_of(crlf->sse, 3) == std::vector<std::string>{"{\"type\":\"a\",\n\"b\":1}"});
}

TEST_CASE("an upstream type with a control character gets no event line but keeps its data") {
  const std::string frame = R"({"type":"evil\ndata: injected","x":1})";
  auto e = sse_of_upstream_frame(frame, bound);
  REQUIRE(e);
  auto events = events_of(e->sse);
  REQUIRE(events.size() == 1);
  CHECK(events[0].name.empty());
  CHECK(events[0].data == frame);
}

TEST_CASE("keep-alive comments and DONE make no client frame") {
  const std::string sse = ": keep-alive\n\nevent: response.created\ndata: {\"type\":\"response.created\"}\n\n"
                          ":\n\nevent: ping\n\ndata:\n\nid: 7\n\ndata: [DONE]\n\n";
  auto piece = GENERATE(1u, 2u, 7u, 4096u);
  CHECK(frames_of(sse, piece) == std::vector<std::string>{R"({"type":"response.created"})"});
}

TEST_CASE("an SSE event that outgrows the bound stops the client frames") {
  const std::string first = "data: {\"type\":\"a\"}\n\n";
  const std::string big = "data: {\"type\":\"b\",\"x\":\"" + std::string(200, 'x') + "\"}\n\n";
  const std::string after = "data: {\"type\":\"c\"}\n\n";
  sse_to_client_frames cut(100);
  std::vector<std::string> seen;
  auto keep = [&](std::string_view f) { seen.emplace_back(f); };
  cut.feed(first, keep);
  CHECK_FALSE(cut.overflowed());
  cut.feed(big.substr(0, 150), keep);  // incomplete and already over
  CHECK(cut.overflowed());
  cut.feed(big.substr(150) + after, keep);
  CHECK(seen == std::vector<std::string>{R"({"type":"a"})"});
  // A complete event over the bound in one piece is not sent either.
  sse_to_client_frames whole(100);
  std::vector<std::string> none;
  whole.feed(big + after, [&](std::string_view f) { none.emplace_back(f); });
  CHECK(whole.overflowed());
  CHECK(none.empty());
}

TEST_CASE("an answer with an error object becomes an error event carrying that object byte for byte") {
  const std::string openai =
      R"({"error":{"message":"Rate limit reached","type":"requests","param":null,"code":"rate_limit_exceeded"}})";
  CHECK(error_event_frame(429, openai, bound) ==
      R"({"type":"error","status":429,"error":{"message":"Rate limit reached","type":"requests","param":null,)"
      R"("code":"rate_limit_exceeded"}})");
  // gistproxy's own error body (proxy_error::json_body).
  const std::string own = R"({"type":"error","error":{"type":"upstream_timeout","code":"upstream_timeout",)"
                          R"("message":"gistproxy: no answer","source":"upstream","retryable":true}})";
  CHECK(error_event_frame(504, own, bound) ==
      R"({"type":"error","status":504,"error":{"type":"upstream_timeout","code":"upstream_timeout",)"
      R"("message":"gistproxy: no answer","source":"upstream","retryable":true}})");
}

TEST_CASE("an answer without a JSON error object becomes an upstream_error event that copies none of its bytes") {
  const std::string fallback = R"({"type":"error","status":502,"error":{"type":"upstream_error",)"
                               R"("message":"the answer was not a stream and held no JSON error"}})";
  const std::string openai = R"({"error":{"message":"secret-ish"}})";
  CHECK(error_event_frame(502, openai, openai.size() - 1) == fallback);  // over the bound
  const std::vector<std::string> bodies = {
      "<html>Bad Gateway secret-ish</html>", "", R"({"error":"secret-ish"})", R"({"error":["secret-ish"]})",
      R"([{"error":{"message":"secret-ish"}}])", R"({"error":{"message":"secret-ish"},"error":{}})",
      std::string(R"({"error":{"message":"secret-ish)") + "\xff\"}}",
      std::string(R"({"error":{"message":"secret-ish)") + "\x01\"}}",
      R"({"error":{"message":"secret-ish","x":)" + nested(10000) + "}}"};
  for (const auto& body : bodies) {
    INFO(body.substr(0, 40));
    const auto frame = error_event_frame(502, body, bound);
    CHECK(frame == fallback);
    CHECK(frame.find("secret-ish") == std::string::npos);
  }
  CHECK(J::parse(fallback)["status"] == 502);
}
