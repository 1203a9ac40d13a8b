// What the other side controls — upstream answers and stream events, the
// model's read_blob arguments — never makes the pure core throw, recurse
// without bound or allocate without bound.
#include <catch2/catch.hpp>
#include <nlohmann/json.hpp>

#include "rewrite/endpoint.hpp"
#include "rewrite/json/splice.hpp"
#include "rewrite/stream_filter.hpp"
#include "rewrite/json/checked.hpp"
#include "rewrite/sse/assemble.hpp"
#include "rewrite/sse/event_parser.hpp"
#include "rewrite/text/utf8.hpp"

using namespace gistproxy::rewrite;
using njson = nlohmann::json;

namespace {

const endpoint& endpoint_of(const std::string& api) {
  const char* path = api == "chat" ? "/v1/chat/completions" : api == "responses" ? "/v1/responses" : "/v1/messages";
  return *endpoint_for("POST", path);
}

std::string nested(std::size_t depth) { return std::string(depth, '[') + std::string(depth, ']'); }

// Answers whose members have every type but the expected one.
const std::vector<std::string> odd_answers = {
    R"({"usage":{"prompt_tokens":null,"completion_tokens":"7","input_tokens":[],"output_tokens":{}}})",
    R"({"choices":[{"message":null}]})",
    R"({"choices":["x",1,null]})",
    R"({"choices":{"0":{}}})",
    R"({"choices":[{"message":{"tool_calls":[{"function":{"name":"read_blob","arguments":{"handle":1}}},"x",null]}}]})",
    R"({"choices":[{"message":{"tool_calls":[{"function":{"name":"read_blob","arguments":null}}]}}]})",
    R"({"content":"text","usage":"none"})",
    R"({"content":[{"type":"tool_use","name":"read_blob","input":"x","id":5},7,"s"]})",
    R"({"output":{"type":"function_call"},"usage":[]})",
    R"({"output":[{"type":"function_call","name":"read_blob","arguments":{"a":1},"call_id":null},[]]})",
    R"({"id":{"x":1},"output":[]})",
    R"([1,2,3])",
    R"("just a string")",
    R"(null)",
    R"({"usage":{"prompt_tokens":18446744073709551615,"completion_tokens":-9223372036854775808}})",
};

}  // namespace

TEST_CASE("checked parsing refuses documents nested deeper than the bound, and counts only real nesting") {
  CHECK(checked::parse(nested(100)).is_array());
  CHECK(checked::parse(nested(100000)).is_discarded());
  CHECK(checked::within_depth(R"(["[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[["])", 2));
  CHECK(checked::within_depth(R"(["\"[[["])", 1));
  CHECK_FALSE(checked::within_depth("[[[", 2));
}

TEST_CASE("checked accessors read a member of the wrong type as absent") {
  auto j = njson::parse(R"({"s":"x","n":5,"big":18446744073709551615,"o":{},"a":[1]})");
  CHECK(checked::string_at(j, "n", "dflt") == "dflt");
  CHECK(checked::string_at(j, "s") == "x");
  CHECK(checked::integer_at(j, "n") == 5);
  CHECK_FALSE(checked::integer_at(j, "big"));
  CHECK_FALSE(checked::integer_at(j, "s"));
  CHECK(checked::array_at(j, "o").empty());
  CHECK(checked::object_at(j, "a").empty());
  CHECK(checked::element(j["a"], 3).is_null());
  CHECK(checked::member(njson("str"), "x").is_null());
}

TEST_CASE("odd upstream answers never throw in any dialect's answer handling") {
  auto api = GENERATE(as<std::string>{}, "chat", "responses", "messages");
  const auto& d = endpoint_of(api);
  for (const auto& text : odd_answers) {
    INFO(api << ": " << text);
    auto answer = checked::parse(text);
    REQUIRE_FALSE(answer.is_discarded());
    response_calls calls;
    CHECK_NOTHROW(calls = d.wire().find_blob_calls(answer, "read_blob"));
    CHECK_NOTHROW(d.wire().usage_from_response(answer));
    CHECK_NOTHROW(d.wire().usage_from_response(std::string_view(text)));
    CHECK_NOTHROW(d.wire().usage_from_event("message_start", text, *std::make_unique<token_usage>()));
    CHECK_NOTHROW(d.wire().usage_from_event("response.completed", R"({"response":)" + text + "}", *std::make_unique<token_usage>()));
    std::vector<call_result> results{{"id", "text", false}};
    CHECK_NOTHROW(d.wire().continue_conversation(R"({"model":"m","messages":[],"input":[]})", answer, "read_blob", results, true));
    CHECK_NOTHROW(d.wire().continue_conversation(R"({"messages":{},"input":"x"})", answer, "read_blob", results, false));
    auto copy = answer;
    CHECK_NOTHROW(d.wire().remove_blob_calls(copy, "read_blob"));
  }
}

TEST_CASE("read_blob calls the model makes past the hop limit are taken out of the client's answer") {
  SECTION("chat") {
    auto r = njson::parse(R"({"choices":[{"index":0,"finish_reason":"tool_calls","message":{"role":"assistant","content":null,
      "tool_calls":[{"id":"a","type":"function","function":{"name":"read_blob","arguments":"{}"}}]}}]})");
    endpoint_of("chat").wire().remove_blob_calls(r, "read_blob");
    CHECK_FALSE(r["choices"][0]["message"].contains("tool_calls"));
    CHECK(r["choices"][0]["finish_reason"] == "stop");
    auto mixed = njson::parse(R"({"choices":[{"finish_reason":"tool_calls","message":{"tool_calls":[
      {"id":"a","function":{"name":"read_blob","arguments":"{}"}},{"id":"b","function":{"name":"run","arguments":"{}"}}]}}]})");
    endpoint_of("chat").wire().remove_blob_calls(mixed, "read_blob");
    CHECK(mixed["choices"][0]["message"]["tool_calls"].size() == 1);
    CHECK(mixed["choices"][0]["finish_reason"] == "tool_calls");
  }
  SECTION("messages") {
    auto r = njson::parse(R"({"stop_reason":"tool_use","content":[{"type":"text","text":"let me look"},
      {"type":"tool_use","id":"t","name":"read_blob","input":{}}]})");
    endpoint_of("messages").wire().remove_blob_calls(r, "read_blob");
    CHECK(r["content"].size() == 1);
    CHECK(r["stop_reason"] == "end_turn");
  }
  SECTION("responses") {
    auto r = njson::parse(R"({"output":[{"type":"function_call","name":"read_blob","call_id":"c","arguments":"{}"},
      {"type":"message","content":[]}]})");
    endpoint_of("responses").wire().remove_blob_calls(r, "read_blob");
    CHECK(r["output"].size() == 1);
    CHECK(r["output"][0]["type"] == "message");
  }
}

TEST_CASE("stream filters take odd events without throwing") {
  auto api = GENERATE(as<std::string>{}, "chat", "responses", "messages");
  auto filter = endpoint_named(api)->wire().make_stream_filter("read_blob");
  REQUIRE(filter);
  const std::vector<std::pair<std::string, std::string>> events = {
      {"", R"({"choices":["x"]})"},
      {"", R"({"choices":[{"delta":"x","finish_reason":{}}],"usage":"u"})"},
      {"", R"({"choices":[{"delta":{"tool_calls":[{"index":"0","function":"f"},7]}}]})"},
      {"", R"({"choices":[{"delta":{"tool_calls":[{"index":99999999999,"function":{"name":"read_blob"}}]}}]})"},
      {"message_start", R"({"type":"message_start","message":"m"})"},
      {"content_block_start", R"({"type":"content_block_start","index":"1","content_block":"b"})"},
      {"content_block_delta", R"({"type":"content_block_delta","index":0,"delta":"d"})"},
      {"content_block_stop", R"({"type":"content_block_stop","index":0})"},
      {"message_delta", R"({"type":"message_delta","delta":null,"usage":{"output_tokens":"9"}})"},
      {"response.created", R"({"type":"response.created","response":"r"})"},
      {"response.output_item.added", R"({"type":"response.output_item.added","output_index":0,"item":"i"})"},
      {"response.output_item.done", R"({"type":"response.output_item.done","output_index":0,"item":null})"},
      {"response.completed", R"({"type":"response.completed","response":{"usage":"u","output":{}}})"},
      {"", R"({"type":7})"},
      {"", nested(100000)},
  };
  for (const auto& [name, data] : events) {
    std::string raw = (name.empty() ? "" : "event: " + name + "\n") + "data: " + data + "\n\n";
    sse::event_parser parser;
    parser.feed(raw, [&](const sse::event& e) { CHECK_NOTHROW(filter->on_event(e)); });
  }
  CHECK_NOTHROW(filter->end_hop());
  CHECK_NOTHROW(filter->finish());
  CHECK_NOTHROW(filter->usage());
}

TEST_CASE("assembling a recorded stream with hostile indices allocates nothing for them") {
  std::string chat = "data: {\"object\":\"chat.completion.chunk\",\"choices\":[{\"index\":0,\"delta\":{\"tool_calls\":"
                     "[{\"index\":1000000000,\"function\":{\"name\":\"x\"}}]}}]}\n\n";
  auto assembled = endpoint_named("chat")->wire().assemble_stream(chat);
  REQUIRE(assembled);
  CHECK_FALSE((*assembled)["choices"][0]["message"].contains("tool_calls"));
  std::string messages = "event: message_start\ndata: {\"type\":\"message_start\",\"message\":{\"content\":[]}}\n\n"
                         "event: content_block_start\ndata: {\"type\":\"content_block_start\",\"index\":1000000000,"
                         "\"content_block\":{}}\n\n";
  auto m = endpoint_named("messages")->wire().assemble_stream(messages);
  REQUIRE(m);
  CHECK((*m)["content"].empty());
  CHECK_NOTHROW(endpoint_named("messages")->wire().assemble_stream("data: {\"type\":\"message_start\",\"message\":\"x\"}\n\n"
                                                    "data: {\"type\":\"message_delta\",\"delta\":[1]}\n\n"));
}

TEST_CASE("summed usage saturates instead of overflowing") {
  njson into = {{"t", INT64_MAX}};
  add_numbers(into, njson{{"t", 5}});
  CHECK(into["t"] == INT64_MAX);
}

TEST_CASE("the SSE parser scans a stream without newlines in linear time, however it is split") {
  sse::event_parser parser;
  const std::string piece(4096, 'x');
  std::size_t fed = 0;
  for (int i = 0; i < 4096; ++i, fed += piece.size())  // 16 MiB in 4 KiB reads
    parser.feed(piece, [](const sse::event&) {});
  parser.feed("\n\n", [](const sse::event&) {});
  CHECK(parser.searched_bytes() <= 2 * (fed + 2));
}

TEST_CASE("UTF-8 validation follows RFC 3629 and cuts never split a character") {
  using text::is_valid_utf8;
  CHECK(is_valid_utf8("plain ascii, long enough to take the eight-byte path"));
  CHECK(is_valid_utf8("\xc3\xa9\xe2\x82\xac\xf0\x9f\x98\x80"));
  CHECK_FALSE(is_valid_utf8("\xc3"));              // truncated
  CHECK_FALSE(is_valid_utf8("\xc0\xaf"));          // overlong
  CHECK_FALSE(is_valid_utf8("\xed\xa0\x80"));      // surrogate
  CHECK_FALSE(is_valid_utf8("\xf4\x90\x80\x80"));  // above U+10FFFF
  CHECK_FALSE(is_valid_utf8("abcdefgh\xff"));
  std::string s = "a\xf0\x9f\x98\x80z";
  for (std::size_t cut = 0; cut <= s.size(); ++cut) CHECK(is_valid_utf8(s.substr(0, text::utf8_floor(s, cut))));
}
