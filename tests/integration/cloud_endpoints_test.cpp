// The cloud endpoints (Azure OpenAI, Vertex AI, AWS Bedrock) through the real
// binary against the mock upstream, which answers their paths as the clouds
// do (Bedrock streams as binary AWS event-stream): offload, read_blob
// interception in JSON and in streams, the cloud's model and api label, the
// 502 for a cloud without an upstream, and Bedrock's signing modes.
#include <algorithm>
#include <catch2/catch.hpp>
#include <set>

#include "rewrite/eventstream/eventstream.hpp"
#include "rewrite/offload/base64.hpp"
#include "rewrite/stream_framing.hpp"
#include "tests/integration/harness.hpp"
#include "tests/support/api_scenarios.hpp"
#include "tests/support/child_process.hpp"
#include "tests/support/raw_upstream.hpp"

using namespace gistproxy::testing;
using njson = nlohmann::json;

namespace {

const std::string expected = "found: 2501: config line 2500: NEEDLE secret_port=48213";

struct stack {
  mock_upstream upstream;
  std::filesystem::path spans = temp_path("spans.jsonl");
  proxy_process proxy;
  explicit stack(std::vector<std::string> extra = {}, std::vector<std::string> env = {})
      : proxy(
            [&] {
              std::vector<std::string> a{"--upstream", upstream.url(), "--span-log", spans.string()};
              a.insert(a.end(), extra.begin(), extra.end());
              return a;
            }(),
            env) {}
  http_result ask(const std::string& api, const std::string& question, bool stream = false,
                  std::map<std::string, std::string> headers = {}) {
    auto body = request_for(api, question, haystack());
    // The SDKs of APIs that choose streaming in the body say so there too.
    if (stream && wire_api(api) != "gemini" && api != "bedrock-converse") body["stream"] = true;
    if (headers.empty()) headers = key_header(api);
    return http_request(proxy.port(), "POST", path_for(api, stream), body.dump(), headers);
  }
};

// Every message of a Bedrock event-stream body decodes (both CRCs checked),
// and the events it carries, as SSE text.
std::string bedrock_events(const std::string& body, gistproxy::rewrite::stream_transport transport) {
  gistproxy::rewrite::eventstream::decoder d;
  std::size_t messages = 0;
  REQUIRE(d.feed(body, [&](gistproxy::rewrite::eventstream::message&& m, std::string_view) {
    ++messages;
    CHECK(m.string_header(":message-type") == std::optional<std::string_view>("event"));
  }));
  CHECK(d.pending().empty());
  CHECK(messages > 3);
  return gistproxy::rewrite::eventstream_as_sse(body, transport);
}

namespace es = gistproxy::rewrite::eventstream;

es::message event_message(const std::string& event_type, const std::string& payload) {
  return es::make_message(
      {{":event-type", event_type}, {":content-type", "application/json"}, {":message-type", "event"}}, payload);
}

// A Bedrock InvokeModel stream answer carrying these Anthropic events.
std::string invoke_stream(const std::vector<std::string>& events, const std::string& after_first = {}) {
  std::string body;
  for (const auto& e : events) {
    body += es::encode(event_message("chunk", R"({"bytes":")" + gistproxy::rewrite::base64_encode(e) + R"("})"));
    if (&e == &events.front()) body += after_first;
  }
  return raw_upstream::response(body, "application/vnd.amazon.eventstream");
}

std::vector<std::string> turn_events(const std::string& block_start, const std::string& delta, const std::string& stop) {
  return {R"({"type":"message_start","message":{"id":"msg_1","type":"message","role":"assistant","model":"m",)"
          R"("content":[],"usage":{"input_tokens":3,"output_tokens":1}}})",
          R"({"type":"content_block_start","index":0,"content_block":)" + block_start + "}",
          R"({"type":"content_block_delta","index":0,"delta":)" + delta + "}",
          R"({"type":"content_block_stop","index":0})",
          R"({"type":"message_delta","delta":{"stop_reason":")" + stop + R"("},"usage":{"output_tokens":4}})",
          R"({"type":"message_stop"})"};
}

const auto read_blob_turn = turn_events(R"({"type":"tool_use","id":"rb_0","name":"read_blob","input":{}})",
                                        R"({"type":"input_json_delta","partial_json":"{\"handle\":\"0000000000000000\"}"})",
                                        "tool_use");
const auto text_turn = turn_events(R"({"type":"text","text":""})", R"({"type":"text_delta","text":"all done"})", "end_turn");

// Every message of a body, each as its :message-type; REQUIREs that all decode.
std::vector<std::string> message_types(const std::string& body) {
  es::decoder d;
  std::vector<std::string> types;
  REQUIRE(d.feed(body, [&](es::message&& m, std::string_view) {
    types.emplace_back(m.string_header(":message-type").value_or(""));
  }));
  CHECK(d.pending().empty());
  return types;
}

const std::vector<std::string> clouds = {"azure-chat", "azure-responses", "vertex-messages", "vertex-gemini",
                                         "bedrock-messages", "bedrock-converse"};

}  // namespace

TEST_CASE("clouds: a line in an offloaded output comes back through read_blob, in the cloud's paths and names") {
  auto api = GENERATE(from_range(clouds));
  stack s;
  auto res = s.ask(api, "find the needle");
  REQUIRE(res.status == 200);
  CHECK(res.body.find("read_blob") == std::string::npos);
  CHECK(answer_text(api, njson::parse(res.body)) == expected);
  auto seen = s.upstream.llm_bodies();
  REQUIRE(seen.size() == 2);
  CHECK(seen[0].size() < haystack().size() / 2);  // offloaded
  CHECK(seen[1].find("NEEDLE secret_port=48213") != std::string::npos);

  auto spans = read_spans_until(s.spans, [](const auto& all) { return count_named(all, "gistproxy.request") >= 1; });
  auto requests = spans_named(spans, "gistproxy.request");
  REQUIRE(requests.size() == 1);
  const auto& attributes = requests[0]["attributes"];
  CHECK(attributes["gistproxy.api"] == api);
  CHECK(attributes["gen_ai.request.model"] == model_for(api));
  const std::map<std::string, std::string> providers = {{"azure", "azure.ai.openai"}, {"vertex", "gcp.vertex_ai"},
                                                        {"bedrock", "aws.bedrock"}};
  CHECK(attributes["gen_ai.provider.name"] == providers.at(api.substr(0, api.find('-'))));
  const std::string page_ins = "gistproxy_page_ins_total{api=\"" + api + "\",mode=\"pattern\",result=\"ok\",source=\"proxy\"} 1";
  CHECK(metrics_with(s.proxy.admin_port(), {page_ins}).find(page_ins) != std::string::npos);
}

TEST_CASE("clouds: streams are spliced into one answer without read_blob, Bedrock's as valid event-stream") {
  auto api = GENERATE(from_range(clouds));
  auto script = GENERATE(as<std::string>{}, "find the needle", "with client call");
  stack s;
  auto res = s.ask(api, script, true);
  REQUIRE(res.ok());
  REQUIRE(res.status == 200);
  std::string events = res.body;
  if (api.starts_with("bedrock-")) {
    CHECK(res.headers["content-type"] == "application/vnd.amazon.eventstream");
    events = bedrock_events(res.body, api == "bedrock-converse" ? gistproxy::rewrite::stream_transport::eventstream_typed
                                                                 : gistproxy::rewrite::stream_transport::eventstream_wrapped);
  }
  CHECK(events.find("read_blob") == std::string::npos);
  if (wire_api(api) == "messages") {  // an SDK needs the turn opened and closed exactly once
    auto count = [&](const std::string& needle) {
      std::size_t n = 0;
      for (auto at = events.find(needle); at != std::string::npos; at = events.find(needle, at + 1)) ++n;
      return n;
    };
    CHECK(count("\"type\":\"message_start\"") == 1);
    CHECK(count("\"type\":\"message_stop\"") == 1);
  }
  auto got = read_stream(api, events);
  if (script == "find the needle") {
    CHECK(got.text == expected);
    CHECK(s.upstream.llm_bodies().size() == 2);
  } else {
    CHECK(got.client_calls.size() == 1);
  }
}

TEST_CASE("clouds: a Bedrock stream whose later hop fails ends in an event-stream exception, not a clean end") {
  stack s;
  auto res = s.ask("bedrock-messages", "fail second hop", true);
  REQUIRE(res.status == 200);
  gistproxy::rewrite::eventstream::decoder d;
  std::vector<std::string> types;
  REQUIRE(d.feed(res.body, [&](gistproxy::rewrite::eventstream::message&& m, std::string_view) {
    types.emplace_back(m.string_header(":message-type").value_or(""));
  }));
  REQUIRE_FALSE(types.empty());
  CHECK(types.back() == "exception");
}

TEST_CASE("clouds: an InvokeModel stream's unknown frames reach the client as sent, and its later read_blob call never does") {
  const std::string odd = es::encode(event_message("futureEvent", R"({"note":"newer than the proxy"})")) +
                          es::encode(event_message("chunk", R"({"bytes":")" +
                                                                gistproxy::rewrite::base64_encode(R"({"no_type":1})") + R"("})"));
  raw_upstream upstream({{invoke_stream(read_blob_turn, odd)}, {invoke_stream(text_turn)}});
  proxy_process proxy({"--upstream", upstream.url(), "--inject-read-blob", "always"});
  const auto body = request_for("bedrock-messages", "hello", "a short output").dump();
  auto res = http_request(proxy.port(), "POST", path_for("bedrock-messages", true), body, key_header("bedrock-messages"));
  REQUIRE(res.status == 200);
  CHECK(upstream.requests() == 2);  // the call was answered by gistproxy, the turn went on
  CHECK(res.body.find(odd) != std::string::npos);
  const auto types = message_types(res.body);
  CHECK(std::count(types.begin(), types.end(), "event") == std::ptrdiff_t(types.size()));
  const auto events = gistproxy::rewrite::eventstream_as_sse(res.body, gistproxy::rewrite::stream_transport::eventstream_wrapped);
  CHECK(events.find("read_blob") == std::string::npos);
  CHECK(events.find("all done") != std::string::npos);
}

TEST_CASE("clouds: an InvokeModel frame cut across reads after an unknown frame reaches the client whole, at every hop") {
  const std::string odd = es::encode(event_message("futureEvent", R"({"note":"newer than the proxy"})"));
  auto cut = [&](const std::vector<std::string>& turn) {
    raw_answer a{invoke_stream(turn, odd)};
    // The unknown frame and the start of the next in one read, the next frame's
    // middle in another (its prelude cut too), its end in a third.
    const auto next = a.bytes.find(odd) + odd.size();
    a.pause_before = {next - 10, next + 5, next + 60};
    return a;
  };
  raw_upstream upstream({cut(read_blob_turn), cut(text_turn)});
  proxy_process proxy({"--upstream", upstream.url(), "--inject-read-blob", "always"});
  const auto body = request_for("bedrock-messages", "hello", "a short output").dump();
  auto res = http_request(proxy.port(), "POST", path_for("bedrock-messages", true), body, key_header("bedrock-messages"));
  REQUIRE(res.status == 200);
  CHECK(upstream.requests() == 2);
  const auto types = message_types(res.body);  // every frame decodes, both CRCs checked, none left over
  CHECK(std::count(types.begin(), types.end(), "event") == std::ptrdiff_t(types.size()));
  const auto events = gistproxy::rewrite::eventstream_as_sse(res.body, gistproxy::rewrite::stream_transport::eventstream_wrapped);
  CHECK(events.find("content_block_start") != std::string::npos);
  CHECK(events.find("read_blob") == std::string::npos);
  CHECK(events.find("all done") != std::string::npos);
}

TEST_CASE("clouds: a later hop answering JSON to a Bedrock stream ends it in an exception, never spliced in raw") {
  const std::string json = R"({"id":"msg_2","type":"message","role":"assistant","content":[{"type":"text",)"
                           R"("text":"RAW JSON"}],"stop_reason":"end_turn","usage":{"input_tokens":1,"output_tokens":1}})";
  raw_upstream upstream({{invoke_stream(read_blob_turn)}, {raw_upstream::response(json)}});
  proxy_process proxy({"--upstream", upstream.url(), "--inject-read-blob", "always"});
  const auto body = request_for("bedrock-messages", "hello", "a short output").dump();
  auto res = http_request(proxy.port(), "POST", path_for("bedrock-messages", true), body, key_header("bedrock-messages"));
  REQUIRE(res.status == 200);
  CHECK(upstream.requests() == 2);
  CHECK(res.body.find("RAW JSON") == std::string::npos);
  const auto types = message_types(res.body);
  REQUIRE_FALSE(types.empty());
  CHECK(types.back() == "exception");
}

TEST_CASE("clouds: a cloud family without an upstream is a 502 naming the flag to set") {
  mock_upstream anthropic_side;
  // --upstream not given: the clouds have no default host.
  proxy_process proxy({"--anthropic-upstream", anthropic_side.url()});
  auto res = http_request(proxy.port(), "POST", path_for("bedrock-messages"),
                          request_for("bedrock-messages", "hello", "short").dump(), key_header("bedrock-messages"));
  CHECK(res.status == 502);
  CHECK(res.body.find("--bedrock-upstream") != std::string::npos);
  CHECK(res.body.find("upstream_not_configured") != std::string::npos);
  auto azure = http_request(proxy.port(), "POST", path_for("azure-chat"), request_for("azure-chat", "hi", "x").dump(),
                            key_header("azure-chat"));
  CHECK(azure.status == 502);
  CHECK(azure.body.find("--azure-upstream") != std::string::npos);
  CHECK(anthropic_side.llm_bodies().empty());
}

TEST_CASE("clouds: an Azure deployment names the model when the body has none, and --model-alias maps it") {
  stack s({"--model-alias", "prod-gpt=gpt-4o-2024-08-06"});
  auto body = request_for("chat", "hello", "short");
  body.erase("model");
  auto res = http_request(s.proxy.port(), "POST", "/openai/deployments/prod-gpt/chat/completions?api-version=2024-10-21",
                          body.dump(), {{"api-key", "az-key"}});
  REQUIRE(res.status == 200);
  auto spans = read_spans_until(s.spans, [](const auto& all) { return count_named(all, "gistproxy.request") >= 1; });
  auto requests = spans_named(spans, "gistproxy.request");
  REQUIRE(requests.size() == 1);
  CHECK(requests[0]["attributes"]["gen_ai.request.model"] == "gpt-4o-2024-08-06");
  CHECK(requests[0]["attributes"]["gistproxy.api"] == "azure-chat");
}

TEST_CASE("clouds: a body the client signed with SigV4 goes to Bedrock byte for byte, counted") {
  stack s;
  const auto body = request_for("bedrock-messages", "find the needle", haystack()).dump();
  const std::string authorization =
      "AWS4-HMAC-SHA256 Credential=AKIDCLIENT/20260101/us-east-1/bedrock/aws4_request, "
      "SignedHeaders=host;x-amz-date, Signature=0000";
  auto res = http_request(s.proxy.port(), "POST", path_for("bedrock-messages"), body,
                          {{"Authorization", authorization}, {"X-Amz-Date", "20260101T000000Z"}});
  REQUIRE(res.status == 200);
  auto seen = s.upstream.llm_bodies();
  REQUIRE(seen.size() >= 1);
  CHECK(seen[0] == body);  // not a byte changed, so the signature still holds
  CHECK(s.upstream.llm_headers()[0].at("authorization") == authorization);
  const std::string counted = "gistproxy_rewrite_failures_total{api=\"bedrock-messages\",reason=\"client_signed\"} 1";
  CHECK(metrics_with(s.proxy.admin_port(), {counted}).find(counted) != std::string::npos);
}

TEST_CASE("clouds: with --sign-bedrock, a request without credentials is signed per hop with gistproxy's key") {
  stack s({"--sign-bedrock", "on", "--bedrock-region", "eu-west-1"},
          {"AWS_ACCESS_KEY_ID=AKIDPROXY", "AWS_SECRET_ACCESS_KEY=proxy-secret-never-logged"});
  auto res = s.ask("bedrock-messages", "find the needle", false, {{"Content-Type", "application/json"}});
  REQUIRE(res.status == 200);
  CHECK(answer_text("bedrock-messages", njson::parse(res.body)) == expected);
  auto heads = s.upstream.llm_headers();
  REQUIRE(heads.size() == 2);
  std::set<std::string> signatures;
  for (const auto& h : heads) {
    REQUIRE(h.contains("authorization"));
    CHECK(h.at("authorization").starts_with("AWS4-HMAC-SHA256 Credential=AKIDPROXY/"));
    CHECK(h.at("authorization").find("/eu-west-1/bedrock/aws4_request") != std::string::npos);
    CHECK(h.contains("x-amz-date"));
    signatures.insert(h.at("authorization"));
  }
  CHECK(signatures.size() == 2);  // each hop's body signed on its own
  CHECK(s.proxy.log().find("proxy-secret-never-logged") == std::string::npos);
  std::ifstream span_log(s.spans);
  std::string all((std::istreambuf_iterator<char>(span_log)), std::istreambuf_iterator<char>());
  CHECK(all.find("proxy-secret-never-logged") == std::string::npos);
}

TEST_CASE("clouds: with --sign-bedrock, a /model/ID path without an operation goes unsigned, never as gistproxy") {
  // Closed after each answer: the second request may come from another I/O thread's pool.
  raw_upstream upstream({{raw_upstream::response(R"({"message":"UnknownOperationException"})", "application/json", 404), true}});
  proxy_process proxy({"--bedrock-upstream", upstream.url(), "--sign-bedrock", "on", "--bedrock-region", "eu-west-1"},
                      {"AWS_ACCESS_KEY_ID=AKIDPROXY", "AWS_SECRET_ACCESS_KEY=proxy-secret-never-logged"});
  const std::string count = R"({"input":{"converse":{"messages":[{"role":"user","content":[{"text":"hi"}]}]}}})";
  auto unmodelled = http_request(proxy.port(), "POST", "/model/count-tokens", count, {{"Content-Type", "application/json"}});
  CHECK(unmodelled.status == 404);  // AWS's own answer, relayed
  auto modelled = http_request(proxy.port(), "POST", "/model/m/count-tokens", count, {{"Content-Type", "application/json"}});
  CHECK(modelled.status == 404);
  const auto heads = upstream.heads();
  REQUIRE(heads.size() == 2);
  auto lower = [](std::string s) {
    for (auto& c : s) c = char(std::tolower(static_cast<unsigned char>(c)));
    return s;
  };
  CHECK(lower(heads[0]).find("\r\nauthorization:") == std::string::npos);  // was: signed as AKIDPROXY
  CHECK(lower(heads[0]).find("x-amz-date") == std::string::npos);
  CHECK(heads[1].find("AWS4-HMAC-SHA256 Credential=AKIDPROXY/") != std::string::npos);
}

TEST_CASE("clouds: gistproxy refuses to start with --sign-bedrock but no AWS credentials") {
  child_process p({gistproxy_binary(), "serve", "--listen", "127.0.0.1:0", "--admin-listen", "127.0.0.1:0",
                   "--store", temp_path("store").string(), "--sign-bedrock", "on"},
                  std::vector<std::string>{"PATH=/usr/bin:/bin"});
  CHECK(p.wait(std::chrono::seconds(10)) == 1);
  CHECK(p.output().find("--sign-bedrock needs AWS_ACCESS_KEY_ID") != std::string::npos);
}

TEST_CASE("clouds: recorded cloud traffic keeps its api and assembled streams, and replays priced by the path's model") {
  auto file = temp_path("cloud-record.jsonl");
  {
    stack s({"--record", file.string()});
    REQUIRE(s.ask("bedrock-messages", "find the needle").status == 200);
    REQUIRE(s.ask("bedrock-messages", "find the needle", true).status == 200);
    REQUIRE(s.ask("vertex-messages", "find the needle", true).status == 200);
    REQUIRE(s.ask("azure-chat", "find the needle").status == 200);
    REQUIRE(s.proxy.stop() == 0);  // the writer drains before exit
  }
  std::vector<njson> lines;
  {
    std::ifstream in(file);
    for (std::string line; std::getline(in, line);) lines.push_back(njson::parse(line));
  }
  REQUIRE(lines.size() == 4);
  CHECK(lines[0]["api"] == "bedrock-messages");
  CHECK(lines[1]["api"] == "bedrock-messages");
  CHECK(lines[2]["api"] == "vertex-messages");
  CHECK(lines[3]["api"] == "azure-chat");
  // The binary event-stream is kept (base64) and assembled as the unstreamed answer.
  CHECK(lines[1].contains("response_body_base64"));
  REQUIRE(lines[1].contains("response"));
  CHECK(answer_text("messages", lines[1]["response"]) == expected);
  CHECK(answer_text("messages", lines[2]["response"]) == expected);

  auto out = run_command({gistproxy_binary(), "replay", "--json", file.string()});
  INFO(out.output);
  REQUIRE(out.exit_code == 0);
  auto j = njson::parse(out.output);
  CHECK(j["turns"] == 4);
  CHECK(j["offloads"] == 4);
  CHECK(j["priced_turns"] == 4);  // us.anthropic.claude-sonnet-4-5-…-v1:0, claude-sonnet-4-5@…, the deployment gpt-4o
}
