// Span exporters and the pipeline that feeds them. Each exporter gets its own
// bounded queue and worker thread, so a slow OTLP collector never delays the
// span log, and neither ever delays a request: a full queue drops and counts.
#pragma once

#include <chrono>
#include <condition_variable>
#include <cstdint>
#include <cstdio>
#include <deque>
#include <memory>
#include <mutex>
#include <string>
#include <thread>
#include <vector>

#include "telemetry/metric_catalogue.hpp"
#include "telemetry/span.hpp"
#include "telemetry/span_json.hpp"
#include "telemetry/tracer.hpp"

namespace gistproxy::telemetry {

class span_exporter {
 public:
  virtual ~span_exporter() = default;
  virtual const char* name() const = 0;
  // Exports one batch; false when the batch was finally given up (after retries).
  virtual bool export_batch(const std::vector<span>& batch) = 0;
};

class span_log_exporter final : public span_exporter {
 public:
  explicit span_log_exporter(const std::string& path);  // throws std::runtime_error if it cannot open
  ~span_log_exporter() override;
  const char* name() const override { return "span_log"; }
  bool export_batch(const std::vector<span>& batch) override;

 private:
  std::FILE* file_;
};

struct otlp_target {
  std::string host;
  std::string port;
  std::string path;  // e.g. /v1/traces
  resource_info resource;
  std::chrono::milliseconds timeout{5000};
  int max_attempts = 5;
  std::chrono::milliseconds first_backoff{200};
};

// OTLP/HTTP JSON over plain HTTP (a collector sidecar on the same host or pod).
class otlp_http_exporter final : public span_exporter {
 public:
  explicit otlp_http_exporter(otlp_target target) : target_(std::move(target)) {}
  const char* name() const override { return "otlp"; }
  bool export_batch(const std::vector<span>& batch) override;

 private:
  // Returns the HTTP status (0 on a connection failure) and Retry-After seconds if given.
  std::pair<int, int> post_once(const std::string& body);
  otlp_target target_;
};

struct pipeline_options {
  std::size_t max_queue = 16384;
  std::size_t max_batch = 512;
  std::chrono::milliseconds flush_interval{500};
};

class export_pipeline final : public span_sink {
 public:
  export_pipeline(std::vector<std::unique_ptr<span_exporter>> exporters, metric_catalogue& metrics,
                  pipeline_options options = {});
  ~export_pipeline() override;
  void submit(span&& s) override;
  // Exports what is queued and stops the workers. Idempotent.
  void shutdown();

 private:
  struct lane;
  void run(lane& l);
  std::vector<std::unique_ptr<lane>> lanes_;
  metric_catalogue& metrics_;
  pipeline_options options_;
};

}  // namespace gistproxy::telemetry
