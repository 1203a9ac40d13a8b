// Prompt-cache figures from every API's usage, unstreamed and streamed. The
// fixtures follow each provider's documented usage shapes (field names and
// nesting as the APIs send them, values made up).
#include <catch2/catch.hpp>
#include <nlohmann/json.hpp>

#include "rewrite/endpoint.hpp"
#include "rewrite/stream_filter.hpp"
#include "rewrite/usage/usage_observer.hpp"

using namespace gistproxy::rewrite;

namespace {

token_usage from_json(const char* path, const std::string& body) {
  usage_observer o(&endpoint_for("POST", path)->wire(), usage_observer::body_kind::json);
  o.on_whole_body(body);
  return o.finish();
}

token_usage from_sse(const char* path, const std::string& stream) {
  usage_observer o(&endpoint_for("POST", path)->wire(), usage_observer::body_kind::sse);
  for (std::size_t i = 0; i < stream.size(); i += 17) o.on_body(std::string_view(stream).substr(i, 17));
  return o.finish();
}

const char* chat_usage =
    R"({"prompt_tokens":2006,"completion_tokens":300,"total_tokens":2306,)"
    R"("prompt_tokens_details":{"cached_tokens":1920,"audio_tokens":0},)"
    R"("completion_tokens_details":{"reasoning_tokens":0,"audio_tokens":0,"accepted_prediction_tokens":0,"rejected_prediction_tokens":0}})";
const char* responses_usage =
    R"({"input_tokens":5000,"input_tokens_details":{"cached_tokens":4096},"output_tokens":120,)"
    R"("output_tokens_details":{"reasoning_tokens":64},"total_tokens":5120})";
const char* messages_usage =
    R"({"input_tokens":50,"cache_creation_input_tokens":1000,"cache_read_input_tokens":2000,)"
    R"("cache_creation":{"ephemeral_5m_input_tokens":1000,"ephemeral_1h_input_tokens":0},"output_tokens":30,)"
    R"("service_tier":"standard"})";
const char* gemini_usage =
    R"({"promptTokenCount":3000,"cachedContentTokenCount":2048,"candidatesTokenCount":40,"totalTokenCount":3040,)"
    R"("promptTokensDetails":[{"modality":"TEXT","tokenCount":3000}],)"
    R"("cacheTokensDetails":[{"modality":"TEXT","tokenCount":2048}]})";

}  // namespace

TEST_CASE("prompt-cache tokens from OpenAI chat usage, JSON and streamed") {
  auto j = from_json("/v1/chat/completions", std::string(R"({"id":"c","choices":[],"usage":)") + chat_usage + "}");
  CHECK(j.input_tokens == 2006);
  CHECK(j.cache_read_tokens == 1920);
  CHECK(j.cache_write_tokens == -1);  // OpenAI reports no cache writes
  CHECK(j.uncached_input_tokens() == 86);
  auto s = from_sse("/v1/chat/completions", std::string("data: {\"choices\":[{\"delta\":{\"content\":\"x\"}}],\"usage\":null}\n\n") +
                                             R"(data: {"choices":[],"usage":)" + chat_usage + "}\n\ndata: [DONE]\n\n");
  CHECK(s.cache_read_tokens == 1920);
  CHECK(s.output_tokens == 300);
  // No details: nothing read from the cache, still a known split.
  auto plain = from_json("/v1/chat/completions", R"({"usage":{"prompt_tokens":10,"completion_tokens":1}})");
  CHECK(plain.cache_read_tokens == 0);
  CHECK(plain.uncached_input_tokens() == 10);
}

TEST_CASE("prompt-cache tokens from OpenAI Responses usage, JSON and streamed") {
  auto j = from_json("/v1/responses", std::string(R"({"id":"r","object":"response","usage":)") + responses_usage + "}");
  CHECK(j.input_tokens == 5000);
  CHECK(j.cache_read_tokens == 4096);
  CHECK(j.uncached_input_tokens() == 904);
  auto s = from_sse("/v1/responses", std::string("event: response.completed\ndata: ") +
                                         R"({"type":"response.completed","response":{"id":"r","usage":)" + responses_usage +
                                         "}}\n\n");
  CHECK(s.cache_read_tokens == 4096);
  CHECK(s.output_tokens == 120);
}

TEST_CASE("prompt-cache tokens from Anthropic Messages usage, JSON and streamed") {
  auto j = from_json("/v1/messages", std::string(R"({"id":"m","type":"message","usage":)") + messages_usage + "}");
  CHECK(j.input_tokens == 3050);  // Anthropic's input_tokens exclude the cache; ours include it
  CHECK(j.cache_read_tokens == 2000);
  CHECK(j.cache_write_tokens == 1000);
  CHECK(j.uncached_input_tokens() == 50);
  auto s = from_sse("/v1/messages",
                    std::string("event: message_start\ndata: ") + R"({"type":"message_start","message":{"id":"m","usage":)" +
                        messages_usage + "}}\n\n" +
                        "event: message_delta\ndata: "
                        R"({"type":"message_delta","delta":{"stop_reason":"end_turn"},"usage":{"output_tokens":31}})"
                        "\n\nevent: message_stop\ndata: {\"type\":\"message_stop\"}\n\n");
  CHECK(s.input_tokens == 3050);
  CHECK(s.cache_read_tokens == 2000);
  CHECK(s.cache_write_tokens == 1000);
  CHECK(s.output_tokens == 31);
}

TEST_CASE("prompt-cache tokens from Gemini usageMetadata, JSON and streamed") {
  const char* path = "/v1beta/models/gemini-2.5-flash:generateContent";
  auto j = from_json(path, std::string(R"({"candidates":[],"usageMetadata":)") + gemini_usage + "}");
  CHECK(j.input_tokens == 3000);
  CHECK(j.cache_read_tokens == 2048);
  CHECK(j.uncached_input_tokens() == 952);
  auto s = from_sse("/v1beta/models/gemini-2.5-flash:streamGenerateContent?alt=sse",
                    std::string("data: ") + R"({"candidates":[],"usageMetadata":)" + gemini_usage + "}\r\n\r\n");
  CHECK(s.cache_read_tokens == 2048);
}

TEST_CASE("prompt-cache tokens are summed over page-in hops of a stream") {
  const auto* d = endpoint_for("POST", "/v1/messages");
  auto filter = d->wire().make_stream_filter("read_blob");
  sse::event_parser parser;
  auto feed = [&](const std::string& text) {
    parser.feed(text, [&](const sse::event& e) { filter->on_event(e); });
  };
  for (int hop = 0; hop < 2; ++hop) {
    feed(std::string("event: message_start\ndata: ") + R"({"type":"message_start","message":{"id":"m","usage":)" +
         messages_usage + "}}\n\n");
    feed("event: message_delta\ndata: "
         R"({"type":"message_delta","delta":{"stop_reason":"end_turn"},"usage":{"output_tokens":30}})"
         "\n\nevent: message_stop\ndata: {\"type\":\"message_stop\"}\n\n");
    filter->end_hop();
  }
  auto u = filter->usage();
  CHECK(u.cache_read_tokens == 4000);
  CHECK(u.cache_write_tokens == 2000);
  CHECK(u.input_tokens == 6100);
  CHECK(u.output_tokens == 60);
}

TEST_CASE("cache figures the upstream inflates cannot overflow") {
  auto j = from_json("/v1/messages", R"({"usage":{"input_tokens":9223372036854775807,"cache_read_input_tokens":5,)"
                                     R"("cache_creation_input_tokens":9223372036854775807,"output_tokens":1}})");
  // Counts over a trillion are not believed (left out, as if unreported):
  // nothing downstream can overflow, and what is credible stays.
  CHECK(j.input_tokens == -1);
  CHECK(j.output_tokens == 1);
  auto k = from_json("/v1/messages", R"({"usage":{"input_tokens":10,"cache_read_input_tokens":5,)"
                                     R"("cache_creation_input_tokens":9223372036854775807,"output_tokens":1}})");
  CHECK(k.input_tokens == 15);
  CHECK(k.uncached_input_tokens() == 10);
}
