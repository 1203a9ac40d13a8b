// The Gemini adapter: paths, facts, tool outputs, read_blob injection,
// calls and continuation (thoughtSignature kept on its part), usage, streams.
#include <catch2/catch.hpp>
#include <nlohmann/json.hpp>

#include "rewrite/blob/memory_blob_store.hpp"
#include "rewrite/endpoint.hpp"
#include "tests/rewrite/dialects/facts_of.hpp"
#include "rewrite/stream_filter.hpp"
#include "rewrite/offload/engine.hpp"
#include "rewrite/replay/trace_formats.hpp"
#include "rewrite/sse/event_parser.hpp"

using namespace gistproxy::rewrite;
using njson = nlohmann::json;

namespace {

const endpoint& gemini() { return *endpoint_named("gemini"); }

std::string big_output() {
  std::string s;
  for (int i = 0; i < 400; ++i) s += "line " + std::to_string(i) + " of a long tool output\n";
  return s;
}

std::string request_with_output(const std::string& response_json) {
  return R"({"contents":[{"role":"user","parts":[{"text":"read the file"}]},)"
         R"({"role":"model","parts":[{"functionCall":{"name":"read_file","args":{"path":"a.txt"}},"thoughtSignature":"c2ln"}]},)"
         R"({"role":"user","parts":[{"functionResponse":{"name":"read_file","response":)" +
         response_json + R"(}}]}],)"
         R"("tools":[{"functionDeclarations":[{"name":"read_file","parameters":{"type":"object"}}]}]})";
}

njson read_blob_answer() {
  return njson::parse(R"({"candidates":[{"content":{"role":"model","parts":[
      {"text":"Let me look."},
      {"functionCall":{"name":"read_blob","args":{"handle":"abc"}},"thoughtSignature":"U0lHTkFUVVJF"},
      {"functionCall":{"name":"run","args":{}}}]},"finishReason":"STOP","index":0}],
      "usageMetadata":{"promptTokenCount":100,"candidatesTokenCount":10,"totalTokenCount":110}})");
}

}  // namespace

TEST_CASE("gemini: generateContent and streamGenerateContent under any version prefix") {
  CHECK(endpoint_for("POST", "/v1beta/models/gemini-2.5-flash:generateContent")->name() == "gemini");
  CHECK(endpoint_for("POST", "/v1/models/gemini-2.5-flash:streamGenerateContent?alt=sse")->name() == "gemini");
  CHECK(endpoint_for("POST", "/v1beta/models/gemini-2.5-flash:countTokens") == nullptr);
  CHECK(endpoint_for("POST", "/v1/chat/completions")->name() == "chat");

  request_facts facts;
  gemini().inspect_target("/v1/models/gemini-2.5-pro:streamGenerateContent?alt=sse&key=k", facts);
  CHECK(facts.model == "gemini-2.5-pro");
  CHECK(facts.stream);
  gemini().inspect_target("/v1beta/models/gemini-2.5-pro:generateContent", facts);
  CHECK_FALSE(facts.stream);
  CHECK(gemini().upstream().name == "gemini");
}

TEST_CASE("gemini: a function response holding one string is the tool output, other shapes stay inline") {
  request_scan scan;
  const auto body = request_with_output(R"({"result":"the bytes"})");  // outputs point into it
  REQUIRE(gemini().wire().scan(body, scan));
  REQUIRE(scan.outputs.size() == 1);
  CHECK(scan.outputs[0].tool_name == "read_file");
  CHECK(scan.outputs[0].raw == "the bytes");
  CHECK(scan.declared_tools == std::vector<std::string>{"read_file"});
  REQUIRE(scan.tools);

  for (const char* shape : {R"({"a":"x","b":"y"})", R"({"result":{"nested":"x"}})", R"({"count":3})"}) {
    request_scan other;
    REQUIRE(gemini().wire().scan(request_with_output(shape), other));
    CHECK(other.outputs.empty());
  }
}

TEST_CASE("gemini: an oversized output is offloaded and read_blob joins tools as one more declaration") {
  memory_blob_store store([] { return std::int64_t(1); });
  char_ratio_estimator estimator;
  offload_config cfg;
  cfg.threshold_tokens = 100;
  offload_engine engine(cfg, store, estimator);
  njson output = {{"result", big_output()}};
  const auto body = request_with_output(output.dump());
  auto result = engine.rewrite(gemini().wire(), body, "t");
  REQUIRE(result.report.outcome == rewrite_outcome::rewritten);
  REQUIRE(result.report.offloads.size() == 1);
  auto forwarded = njson::parse(result.body);
  auto reference = forwarded["contents"][2]["parts"][0]["functionResponse"]["response"]["result"].get<std::string>();
  CHECK(reference.size() < big_output().size() / 2);  // a preview of at most a quarter, and how to read on
  CHECK(reference.find(result.report.offloads[0].hash.substr(0, 16)) != std::string::npos);
  // The model's part keeps its thoughtSignature; the client's tools keep their bytes; read_blob is declared after them.
  CHECK(forwarded["contents"][1]["parts"][0]["thoughtSignature"] == "c2ln");
  CHECK(result.body.find(R"("tools":[{"functionDeclarations":[{"name":"read_file","parameters":{"type":"object"}}]},{"functionDeclarations":[{"name":"read_blob")") !=
        std::string::npos);
  // Byte-stable: the same request rewrites to the same bytes.
  CHECK(engine.rewrite(gemini().wire(), body, "t").body == result.body);
}

TEST_CASE("gemini: read_blob calls are found in the parts, and the next hop passes thoughtSignature back on its part") {
  auto answer = read_blob_answer();
  auto calls = gemini().wire().find_blob_calls(answer, "read_blob");
  REQUIRE(calls.blob_calls.size() == 1);
  CHECK(calls.client_calls == 1);
  CHECK(njson::parse(calls.blob_calls[0].arguments) == njson({{"handle", "abc"}}));

  const std::string body = R"({"contents":[{"role":"user","parts":[{"text":"q"}]}],"tools":[{"functionDeclarations":[{"name":"run"}]}]})";
  auto next = gemini().wire().continue_conversation(body, answer, "read_blob", {{calls.blob_calls[0].id, "PAGE", false}}, false);
  REQUIRE(next);
  auto j = njson::parse(*next);
  REQUIRE(j["contents"].size() == 3);
  const auto& model = j["contents"][1];
  CHECK(model["role"] == "model");
  REQUIRE(model["parts"].size() == 2);  // the text and the read_blob call; the client's call is dropped
  CHECK(model["parts"][1]["functionCall"]["name"] == "read_blob");
  CHECK(model["parts"][1]["thoughtSignature"] == "U0lHTkFUVVJF");
  const auto& user = j["contents"][2];
  CHECK(user["role"] == "user");
  CHECK(user["parts"][0]["functionResponse"] == njson({{"name", "read_blob"}, {"response", {{"result", "PAGE"}}}}));
  CHECK(next->find(R"("tools":[{"functionDeclarations":[{"name":"run"}]}])") != std::string::npos);
  CHECK_FALSE(j.contains("toolConfig"));

  auto last = gemini().wire().continue_conversation(body, answer, "read_blob", {{calls.blob_calls[0].id, "gone", true}}, true);
  auto l = njson::parse(*last);
  CHECK(l["toolConfig"] == njson({{"functionCallingConfig", {{"mode", "NONE"}}}}));
  CHECK(l["contents"][2]["parts"][0]["functionResponse"]["response"] == njson({{"error", "gone"}}));
}

TEST_CASE("gemini: calls past the hop limit leave the answer, usage counts thoughts as output") {
  auto answer = read_blob_answer();
  answer["usageMetadata"]["thoughtsTokenCount"] = 5;
  gemini().wire().remove_blob_calls(answer, "read_blob");
  const auto& parts = answer["candidates"][0]["content"]["parts"];
  REQUIRE(parts.size() == 2);
  CHECK(parts[1]["functionCall"]["name"] == "run");
  auto u = gemini().wire().usage_from_response(answer);
  CHECK(u.input_tokens == 100);
  CHECK(u.output_tokens == 15);
  CHECK(gemini().wire().usage_from_response(std::string_view(answer.dump())).output_tokens == 15);
}

TEST_CASE("gemini: the stream filter splices hops into one stream ending once, usage summed") {
  auto filter = gemini().wire().make_stream_filter("read_blob");
  REQUIRE(filter);
  sse::event_parser parser;
  std::string client;
  auto feed = [&](const std::string& data) {
    parser.feed("data: " + data + "\r\n\r\n", [&](const sse::event& e) { client += filter->on_event(e); });
  };
  // Hop 1: text, then a read_blob call with the end of the turn.
  feed(R"({"candidates":[{"content":{"role":"model","parts":[{"text":"Looking"}]}}],"usageMetadata":{"promptTokenCount":100}})");
  feed(R"({"candidates":[{"content":{"role":"model","parts":[{"functionCall":{"name":"read_blob","args":{"handle":"h"}},"thoughtSignature":"UA=="}]},"finishReason":"STOP"}],"usageMetadata":{"promptTokenCount":100,"candidatesTokenCount":10}})");
  auto first = filter->end_hop();
  CHECK(first.complete);
  REQUIRE(first.calls.size() == 1);
  CHECK(first.response["candidates"][0]["content"]["parts"][1]["thoughtSignature"] == "UA==");
  CHECK(client.find("read_blob") == std::string::npos);
  CHECK(client.find("finishReason") == std::string::npos);
  CHECK(client.find("Looking") != std::string::npos);
  // Hop 2: the answer.
  feed(R"({"candidates":[{"content":{"role":"model","parts":[{"text":"Found it."}]},"finishReason":"STOP"}],"usageMetadata":{"promptTokenCount":150,"candidatesTokenCount":5}})");
  auto second = filter->end_hop();
  CHECK(second.calls.empty());
  client += filter->finish();
  CHECK(client.find("Found it.") != std::string::npos);
  auto last_event = njson::parse(client.substr(client.rfind("data: ") + 6));
  CHECK(last_event["candidates"][0]["finishReason"] == "STOP");
  CHECK(last_event["usageMetadata"]["promptTokenCount"] == 250);
  CHECK(filter->usage().input_tokens == 250);
  CHECK(filter->usage().output_tokens == 15);
  std::size_t ends = 0;
  for (auto at = client.find("finishReason"); at != std::string::npos; at = client.find("finishReason", at + 1)) ++ends;
  CHECK(ends == 1);
}

TEST_CASE("gemini: a recorded stream assembles into one response") {
  const std::string sse =
      "data: {\"candidates\":[{\"content\":{\"role\":\"model\",\"parts\":[{\"text\":\"Hel\"}]}}]}\r\n\r\n"
      "data: {\"candidates\":[{\"content\":{\"role\":\"model\",\"parts\":[{\"text\":\"lo\"}]},\"finishReason\":\"STOP\"}],"
      "\"usageMetadata\":{\"promptTokenCount\":3},\"modelVersion\":\"gemini-2.5-flash\"}\r\n\r\n";
  auto r = gemini().wire().assemble_stream(sse);
  REQUIRE(r);
  CHECK((*r)["candidates"][0]["content"]["parts"] == njson::array({{{"text", "Hello"}}}));
  CHECK((*r)["candidates"][0]["finishReason"] == "STOP");
  CHECK((*r)["usageMetadata"]["promptTokenCount"] == 3);
  CHECK_FALSE(gemini().wire().assemble_stream("data: [DONE]\n\n"));
}

TEST_CASE("gemini: replay reads bare Gemini request bodies as Gemini, and other bodies as before") {
  const std::string body = request_with_output(R"({"result":"x"})");
  auto t = read_trace("[" + body + "," + body + "]");
  REQUIRE(t.requests.size() == 2);
  CHECK(t.requests[0].api->name() == "gemini");
  auto chat = read_trace(R"([{"model":"m","messages":[{"role":"system","content":"s"}]}])");
  REQUIRE(chat.requests.size() == 1);
  CHECK(chat.requests[0].api->name() == "chat");
}

using gistproxy::testing::facts_of;

TEST_CASE("a Gemini stream is interceptable only as SSE (alt=sse), never as a streamed JSON array") {
  const std::string body = R"({"contents":[{"role":"user","parts":[{"text":"hi"}]}]})";
  CHECK(facts_of("/v1beta/models/g:streamGenerateContent?alt=sse", body).answer_interceptable);
  CHECK(facts_of("/v1beta/models/g:streamGenerateContent?key=k&alt=sse", body).answer_interceptable);
  CHECK_FALSE(facts_of("/v1beta/models/g:streamGenerateContent", body).answer_interceptable);
  CHECK_FALSE(facts_of("/v1beta/models/g:streamGenerateContent?alt=json", body).answer_interceptable);
  CHECK_FALSE(facts_of("/v1beta/models/g:streamGenerateContent?xalt=sse", body).answer_interceptable);
  // Names read as Google reads them (rewrite::query_pairs): %-decoded; the first with a value decides.
  CHECK(facts_of("/v1beta/models/g:streamGenerateContent?%61lt=sse", body).answer_interceptable);
  CHECK(facts_of("/v1beta/models/g:streamGenerateContent?alt&alt=sse", body).answer_interceptable);
  CHECK_FALSE(facts_of("/v1beta/models/g:streamGenerateContent?alt=json&alt=sse", body).answer_interceptable);
  CHECK(facts_of("/v1beta/models/g:generateContent", body).answer_interceptable);
}
