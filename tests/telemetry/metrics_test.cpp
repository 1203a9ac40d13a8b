#include "telemetry/metrics.hpp"

#include <catch2/catch.hpp>
#include <cmath>
#include <limits>
#include <memory>
#include <thread>

#include "telemetry/metric_catalogue.hpp"

using namespace gistproxy::telemetry;

TEST_CASE("counters with labels render in Prometheus text format") {
  registry r;
  auto& requests = r.add_counter("x_requests_total", "Requests.", {"api", "status"});
  requests.labels({"chat", "200"}).inc();
  requests.labels({"chat", "200"}).inc(2);
  requests.labels({"messages", "502"}).inc();
  auto text = r.render();
  CHECK(text.find("# HELP x_requests_total Requests.\n# TYPE x_requests_total counter\n") != std::string::npos);
  CHECK(text.find("x_requests_total{api=\"chat\",status=\"200\"} 3\n") != std::string::npos);
  CHECK(text.find("x_requests_total{api=\"messages\",status=\"502\"} 1\n") != std::string::npos);
}

TEST_CASE("histograms render cumulative buckets, +Inf, sum and count") {
  registry r;
  auto& h = r.add_histogram("x_seconds", "Latency.", {"api"}, {0.1, 1, 10});
  h.labels({"chat"}).observe(0.05);
  h.labels({"chat"}).observe(0.5);
  h.labels({"chat"}).observe(50);
  auto text = r.render();
  CHECK(text.find("x_seconds_bucket{api=\"chat\",le=\"0.1\"} 1\n") != std::string::npos);
  CHECK(text.find("x_seconds_bucket{api=\"chat\",le=\"1\"} 2\n") != std::string::npos);
  CHECK(text.find("x_seconds_bucket{api=\"chat\",le=\"10\"} 2\n") != std::string::npos);
  CHECK(text.find("x_seconds_bucket{api=\"chat\",le=\"+Inf\"} 3\n") != std::string::npos);
  CHECK(text.find("x_seconds_sum{api=\"chat\"} 50.55\n") != std::string::npos);
  CHECK(text.find("x_seconds_count{api=\"chat\"} 3\n") != std::string::npos);
}

TEST_CASE("label values are escaped") {
  registry r;
  r.add_counter("x_total", "X.", {"v"}).labels({"a\"b\\c\nd"}).inc();
  CHECK(r.render().find("x_total{v=\"a\\\"b\\\\c\\nd\"} 1") != std::string::npos);
}

TEST_CASE("gauges go up and down and callback gauges read at scrape time") {
  registry r;
  auto& g = r.add_gauge("x_active", "Active.");
  g.get().add(3);
  g.get().add(-1);
  double value = 7;
  r.add_callback_gauge("x_store_bytes", "Bytes.", [&] { return value; });
  value = 42;
  auto text = r.render();
  CHECK(text.find("x_active 2\n") != std::string::npos);
  CHECK(text.find("x_store_bytes 42\n") != std::string::npos);
}

TEST_CASE("the catalogue declares the metrics the dashboards rely on") {
  registry r;
  metric_catalogue m(r);
  for (auto name : {"gistproxy_requests_total", "gistproxy_request_duration_seconds",
                    "gistproxy_upstream_duration_seconds", "gistproxy_proxy_overhead_seconds",
                    "gistproxy_active_connections", "gistproxy_exporter_dropped_spans_total", "gistproxy_build_info"})
    CHECK(r.has(name));
}

TEST_CASE("series looked up from several threads and registries never alias (per-thread series caches)") {
  for (int round = 0; round < 50; ++round) {
    // A new registry can land where the last one was freed: the per-thread
    // caches must hand out its own series, not a freed one.
    auto r = std::make_unique<registry>();
    auto& c = r->add_counter("x_total", "X.", {"api"});
    CHECK(c.labels({"chat"}).value() == 0);
    std::thread other([&] {
      for (int i = 0; i < 1000; ++i) c.labels({"chat"}).inc();
    });
    for (int i = 0; i < 1000; ++i) c.labels({"chat"}).inc();
    other.join();
    c.labels({"chat\x1f"}).inc();  // a value holding the separator is its own series
    CHECK(c.labels({"chat"}).value() == 2000);
    CHECK(&c.labels({"chat"}) != &c.labels({"messages"}));
  }
}

TEST_CASE("counters saturate instead of wrapping, and amounts never become +Inf") {
  counter c;
  c.inc(UINT64_MAX - 5);
  c.inc(10);
  CHECK(c.value() == UINT64_MAX);
  c.inc();
  CHECK(c.value() == UINT64_MAX);
  amount_counter usd;
  usd.add(std::numeric_limits<double>::infinity());
  usd.add(std::numeric_limits<double>::quiet_NaN());
  CHECK(usd.value() == 0);
  usd.add(1.5e308);
  usd.add(1.5e308);  // the sum would be +Inf: not added
  CHECK(std::isfinite(usd.value()));
  CHECK(usd.value() == 1.5e308);
}
