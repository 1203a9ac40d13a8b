#include "telemetry/exporters.hpp"

#include <catch2/catch.hpp>
#include <filesystem>
#include <fstream>
#include <thread>

#include "tests/support/mock_upstream.hpp"

using namespace gistproxy::telemetry;

namespace {

span make_span(tracer& t, const std::string& name) {
  auto s = t.start(name, span_kind::internal, t.new_trace_id(), {});
  t.end(s);
  return s;
}

class blocking_exporter final : public span_exporter {
 public:
  const char* name() const override { return "blocking"; }
  bool export_batch(const std::vector<span>&) override {
    std::this_thread::sleep_for(std::chrono::milliseconds(300));
    return true;
  }
};

}  // namespace

TEST_CASE("the span log exporter appends one JSON line per span") {
  auto path = std::filesystem::temp_directory_path() / ("gp-spanlog-" + std::to_string(::getpid()) + ".jsonl");
  std::filesystem::remove(path);
  registry r;
  metric_catalogue m(r);
  {
    std::vector<std::unique_ptr<span_exporter>> ex;
    ex.push_back(std::make_unique<span_log_exporter>(path.string()));
    export_pipeline pipeline(std::move(ex), m);
    manual_clock clock;
    sequential_id_generator ids;
    tracer t(clock, ids, &pipeline);
    for (int i = 0; i < 3; ++i) {
      auto s = t.start("step" + std::to_string(i), span_kind::internal, ids.new_trace_id(), {});
      t.end(s);
    }
    pipeline.shutdown();
  }
  std::ifstream in(path);
  std::string line;
  int lines = 0;
  while (std::getline(in, line)) {
    auto j = nlohmann::json::parse(line);
    CHECK(j["name"] == "step" + std::to_string(lines));
    ++lines;
  }
  CHECK(lines == 3);
  CHECK(m.spans_exported.labels({"span_log"}).value() == 3);
  std::filesystem::remove(path);
}

TEST_CASE("a full export queue drops spans and counts them instead of blocking") {
  registry r;
  metric_catalogue m(r);
  std::vector<std::unique_ptr<span_exporter>> ex;
  ex.push_back(std::make_unique<blocking_exporter>());
  export_pipeline pipeline(std::move(ex), m, pipeline_options{4, 2, std::chrono::milliseconds(1)});
  manual_clock clock;
  sequential_id_generator ids;
  tracer t(clock, ids, &pipeline);
  auto start = std::chrono::steady_clock::now();
  for (int i = 0; i < 50; ++i) make_span(t, "s");
  auto elapsed = std::chrono::steady_clock::now() - start;
  CHECK(m.spans_dropped.labels({"blocking", "queue_full"}).value() > 0);
  // Submitting never waited on the (slow) exporter.
  CHECK(elapsed < std::chrono::milliseconds(250));
  pipeline.shutdown();
}

TEST_CASE("the OTLP exporter posts JSON to /v1/traces and retries a 503") {
  gistproxy::testing::mock_upstream collector;
  collector.fail_next_otlp_posts(1);
  otlp_target target;
  target.host = "127.0.0.1";
  target.port = std::to_string(collector.port());
  target.path = "/v1/traces";
  target.first_backoff = std::chrono::milliseconds(10);
  otlp_http_exporter exporter(target);
  manual_clock clock;
  sequential_id_generator ids;
  tracer t(clock, ids, nullptr);
  REQUIRE(exporter.export_batch({make_span(t, "a"), make_span(t, "b")}));
  auto posts = collector.otlp_posts();
  REQUIRE(posts.size() == 1);
  auto j = nlohmann::json::parse(posts[0]);
  CHECK(j["resourceSpans"][0]["scopeSpans"][0]["spans"].size() == 2);
}

TEST_CASE("the OTLP exporter gives up on an unreachable collector") {
  otlp_target target;
  target.host = "127.0.0.1";
  target.port = "1";  // nothing listens there
  target.max_attempts = 2;
  target.first_backoff = std::chrono::milliseconds(1);
  otlp_http_exporter exporter(target);
  manual_clock clock;
  sequential_id_generator ids;
  tracer t(clock, ids, nullptr);
  CHECK_FALSE(exporter.export_batch({make_span(t, "a")}));
}
