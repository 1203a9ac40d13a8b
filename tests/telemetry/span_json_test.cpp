#include "telemetry/span_json.hpp"

#include <catch2/catch.hpp>

#include "telemetry/tracer.hpp"

using namespace gistproxy::telemetry;

namespace {

struct discard_sink final : span_sink {
  void submit(span&&) override {}
};

span sample_span() {
  manual_clock clock;
  sequential_id_generator ids;
  discard_sink sink;  // a sink makes the tracer record attributes
  tracer t(clock, ids, &sink);
  auto trace = *trace_id::from_hex("4bf92f3577b34da6a3ce929d0e0e4736");
  auto root = t.start("gistproxy.request", span_kind::server, trace, {});
  auto s = t.start("upstream", span_kind::client, trace, root.id);
  s.set("gen_ai.request.model", "gpt-4o");
  s.set("gen_ai.usage.input_tokens", 12);
  s.set("gistproxy.stream", true);
  s.set("ratio", 0.5);
  clock.advance(1500);
  s.end_unix_nano = clock.now_unix_nano();
  s.fail("upstream status 502");
  return s;
}

}  // namespace

TEST_CASE("a span-log line has hex ids, a flat attribute object and typed values") {
  auto j = nlohmann::json::parse(to_span_log_line(sample_span()));
  CHECK(j["traceId"] == "4bf92f3577b34da6a3ce929d0e0e4736");
  CHECK(j["spanId"].get<std::string>().size() == 16);
  CHECK(j["parentSpanId"].get<std::string>().size() == 16);
  CHECK(j["name"] == "upstream");
  CHECK(j["kind"] == "client");
  CHECK(j["endTimeUnixNano"].get<std::uint64_t>() - j["startTimeUnixNano"].get<std::uint64_t>() == 1500);
  CHECK(j["attributes"]["gen_ai.request.model"] == "gpt-4o");
  CHECK(j["attributes"]["gen_ai.usage.input_tokens"] == 12);
  CHECK(j["attributes"]["gistproxy.stream"] == true);
  CHECK(j["status"]["code"] == "error");
}

TEST_CASE("the OTLP JSON mapping uses integer enums, string 64-bit integers and typed values") {
  auto j = to_otlp_request({sample_span()}, resource_info{"svc", "1.0"});
  auto& rs = j["resourceSpans"][0];
  CHECK(rs["resource"]["attributes"][0]["key"] == "service.name");
  CHECK(rs["resource"]["attributes"][0]["value"]["stringValue"] == "svc");
  auto& s = rs["scopeSpans"][0]["spans"][0];
  CHECK(s["traceId"] == "4bf92f3577b34da6a3ce929d0e0e4736");
  CHECK(s["kind"] == 3);
  CHECK(s["status"]["code"] == 2);
  CHECK(s["startTimeUnixNano"].is_string());
  auto find = [&](const std::string& key) {
    for (auto& a : s["attributes"])
      if (a["key"] == key) return a["value"];
    return nlohmann::json();
  };
  CHECK(find("gen_ai.usage.input_tokens")["intValue"] == "12");
  CHECK(find("gistproxy.stream")["boolValue"] == true);
  CHECK(find("ratio")["doubleValue"] == 0.5);
  CHECK(find("gen_ai.request.model")["stringValue"] == "gpt-4o");
}

TEST_CASE("without a sink, spans skip attribute work") {
  manual_clock clock;
  sequential_id_generator ids;
  tracer t(clock, ids, nullptr);
  auto s = t.start("x", span_kind::internal, ids.new_trace_id(), {});
  s.set("k", "v");
  CHECK(s.attributes.empty());
}

TEST_CASE("a root span has no parentSpanId in OTLP and an empty one in the span log") {
  manual_clock clock;
  sequential_id_generator ids;
  tracer t(clock, ids, nullptr);
  auto root = t.start("gistproxy.request", span_kind::server, ids.new_trace_id(), {});
  CHECK(nlohmann::json::parse(to_span_log_line(root))["parentSpanId"] == "");
  CHECK_FALSE(to_otlp_request({root}, {})["resourceSpans"][0]["scopeSpans"][0]["spans"][0].contains("parentSpanId"));
}

TEST_CASE("a span keeps at most 512 bytes of valid UTF-8 of a text attribute, however long the name a client sent") {
  span s;
  const std::string huge = "read_" + std::string(1 << 20, 'x');
  s.set("gen_ai.tool.name", huge);
  s.set_text("gen_ai.tool.call.id", std::string(300, 'a') + "\xC3");  // a character cut short
  s.set("gen_ai.request.model", "gpt-4o");
  const auto& name = std::get<std::string>(*s.find("gen_ai.tool.name"));
  CHECK(name.size() <= span::max_text_bytes);
  CHECK(name.rfind("read_xxx", 0) == 0);
  const auto& id = std::get<std::string>(*s.find("gen_ai.tool.call.id"));
  CHECK(id.size() <= span::max_text_bytes);
  CHECK(id.find('\xC3') == std::string::npos);
  CHECK(nlohmann::json::parse(to_span_log_line(s))["attributes"]["gen_ai.request.model"] == "gpt-4o");
}
