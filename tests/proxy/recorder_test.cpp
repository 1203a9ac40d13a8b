#include <catch2/catch.hpp>
#include <nlohmann/json.hpp>
#include <unistd.h>

#include <filesystem>

#include "proxy/recorder.hpp"
#include "rewrite/replay/trace_formats.hpp"

using namespace gistproxy;

TEST_CASE("record lines carry bodies exactly: text as JSON strings, invalid UTF-8 as base64") {
  proxy::exchange_record r;
  r.api = "chat";
  r.method = "POST";
  r.path = "/v1/chat/completions";
  r.trace_id = std::string(32, 'a');
  r.status = 200;
  r.request_body = "{\"messages\":[{\"role\":\"tool\",\"content\":\"caf\xC3\xA9 \\u0000 \\\"q\\\" \xF0\x9F\x99\x82\"}]}";
  r.forwarded_body = std::string("{\"bad\":\"\xFF\xFE\"}");
  r.response_body = "{\"ok\":true}";
  auto line = proxy::to_record_line(r);
  auto j = nlohmann::json::parse(line);  // strict parse: the line is valid JSON and UTF-8
  CHECK(j["request_body"] == r.request_body);
  CHECK(j.contains("forwarded_body_base64"));
  CHECK(j["status"] == 200);
  auto trace = rewrite::read_trace(line);
  REQUIRE(trace.requests.size() == 1);
  CHECK(trace.requests[0].body == r.request_body);
  CHECK(trace.requests[0].forwarded == *r.forwarded_body);

  // Surrogates and overlong forms are not UTF-8 either.
  r.forwarded_body.reset();
  for (std::string bad : {"\xED\xA0\x80", "\xC0\xAF", "\xE0\x80\xAF", "\xF4\x90\x80\x80", "abc\xE2\x82"}) {
    r.request_body = bad;
    auto l = nlohmann::json::parse(proxy::to_record_line(r));
    CHECK(l.contains("request_body_base64"));
  }
}

TEST_CASE("a recorder whose queue is full drops and counts instead of blocking") {
  auto file = std::filesystem::temp_directory_path() / ("gistproxy-recorder-" + std::to_string(::getpid()) + ".jsonl");
  telemetry::registry registry;
  telemetry::metric_catalogue metrics(registry);
  {
    proxy::recorder rec({file, 1ull << 30, 600}, metrics);  // room for one small record only
    proxy::exchange_record big;
    big.path = "/v1/chat/completions";
    big.request_body = std::string(4096, 'x');
    rec.submit(std::move(big));
  }  // destruction drains what was queued
  CHECK(metrics.records.labels({"dropped"}).value() == 1);
  CHECK(std::filesystem::file_size(file) == 0);
  std::filesystem::remove(file);
}
