#include "telemetry/exporters.hpp"

#include <boost/asio/connect.hpp>
#include <boost/asio/io_context.hpp>
#include <boost/asio/ip/tcp.hpp>
#include <boost/beast/core/flat_buffer.hpp>
#include <boost/beast/core/tcp_stream.hpp>
#include <boost/beast/http.hpp>
#include <stdexcept>

namespace gistproxy::telemetry {

namespace asio = boost::asio;
namespace beast = boost::beast;
namespace http = beast::http;

// ---- span log ---------------------------------------------------------------

span_log_exporter::span_log_exporter(const std::string& path) : file_(std::fopen(path.c_str(), "a")) {
  if (!file_) throw std::runtime_error("cannot open span log '" + path + "' for appending");
}

span_log_exporter::~span_log_exporter() { std::fclose(file_); }

bool span_log_exporter::export_batch(const std::vector<span>& batch) {
  std::string text;
  for (const auto& s : batch) {
    text += to_span_log_line(s);
    text += '\n';
  }
  bool ok = std::fwrite(text.data(), 1, text.size(), file_) == text.size();
  return std::fflush(file_) == 0 && ok;
}

// ---- OTLP/HTTP JSON -----------------------------------------------------------

std::pair<int, int> otlp_http_exporter::post_once(const std::string& body) {
  asio::io_context ioc;
  beast::tcp_stream stream(ioc);
  http::response<http::string_body> res;
  beast::flat_buffer buffer;
  beast::error_code result = asio::error::timed_out;

  http::request<http::string_body> req{http::verb::post, target_.path, 11};
  req.set(http::field::host, target_.host + ":" + target_.port);
  req.set(http::field::content_type, "application/json");
  req.set(http::field::user_agent, "gistproxy/" GISTPROXY_VERSION);
  req.body() = body;
  req.prepare_payload();

  asio::ip::tcp::resolver resolver(ioc);
  stream.expires_after(target_.timeout);
  resolver.async_resolve(target_.host, target_.port, [&](beast::error_code ec, auto results) {
    if (ec) return void(result = ec);
    stream.async_connect(results, [&](beast::error_code ec2, auto) {
      if (ec2) return void(result = ec2);
      http::async_write(stream, req, [&](beast::error_code ec3, std::size_t) {
        if (ec3) return void(result = ec3);
        http::async_read(stream, buffer, res, [&](beast::error_code ec4, std::size_t) { result = ec4; });
      });
    });
  });
  ioc.run();
  if (result) return {0, 0};
  int retry_after = 0;
  if (auto it = res.find(http::field::retry_after); it != res.end()) retry_after = std::atoi(std::string(it->value()).c_str());
  return {int(res.result_int()), retry_after};
}

bool otlp_http_exporter::export_batch(const std::vector<span>& batch) {
  const std::string body = to_otlp_request(batch, target_.resource).dump(-1, ' ', false,
                                                                         nlohmann::json::error_handler_t::replace);
  auto backoff = target_.first_backoff;
  for (int attempt = 1; attempt <= target_.max_attempts; ++attempt) {
    auto [status, retry_after] = post_once(body);
    if (status >= 200 && status < 300) return true;  // includes partial success: never retried
    bool retryable = status == 0 || status == 429 || status == 502 || status == 503 || status == 504;
    if (!retryable || attempt == target_.max_attempts) return false;
    auto wait = retry_after > 0 ? std::chrono::milliseconds(std::min(retry_after, 30) * 1000) : backoff;
    std::this_thread::sleep_for(wait);
    backoff = std::min(backoff * 2, std::chrono::milliseconds(10000));
  }
  return false;
}

// ---- pipeline -----------------------------------------------------------------

struct export_pipeline::lane {
  std::unique_ptr<span_exporter> exporter;
  std::mutex mutex;
  std::condition_variable wake;
  std::deque<span> queue;
  bool stopping = false;
  std::thread worker;
};

export_pipeline::export_pipeline(std::vector<std::unique_ptr<span_exporter>> exporters, metric_catalogue& metrics,
                                 pipeline_options options)
    : metrics_(metrics), options_(options) {
  for (auto& e : exporters) {
    auto l = std::make_unique<lane>();
    l->exporter = std::move(e);
    metrics_.initialise_exporter_series(l->exporter->name());
    lanes_.push_back(std::move(l));
  }
  for (auto& l : lanes_) l->worker = std::thread([this, p = l.get()] { run(*p); });
}

export_pipeline::~export_pipeline() { shutdown(); }

void export_pipeline::submit(span&& s) {
  for (std::size_t i = 0; i < lanes_.size(); ++i) {
    auto& l = *lanes_[i];
    std::unique_lock lock(l.mutex);
    if (l.stopping || l.queue.size() >= options_.max_queue) {
      lock.unlock();
      metrics_.spans_dropped.labels({l.exporter->name(), "queue_full"}).inc();
      continue;
    }
    if (i + 1 == lanes_.size()) l.queue.push_back(std::move(s));
    else l.queue.push_back(s);
    bool wake = l.queue.size() >= options_.max_batch;
    lock.unlock();
    if (wake) l.wake.notify_one();
  }
}

void export_pipeline::run(lane& l) {
  std::vector<span> batch;
  for (;;) {
    {
      std::unique_lock lock(l.mutex);
      l.wake.wait_for(lock, options_.flush_interval,
                      [&] { return l.stopping || l.queue.size() >= options_.max_batch; });
      if (l.queue.empty() && l.stopping) return;
      while (!l.queue.empty() && batch.size() < options_.max_batch) {
        batch.push_back(std::move(l.queue.front()));
        l.queue.pop_front();
      }
    }
    if (batch.empty()) continue;
    if (l.exporter->export_batch(batch))
      metrics_.spans_exported.labels({l.exporter->name()}).inc(batch.size());
    else
      metrics_.spans_dropped.labels({l.exporter->name(), "export_failed"}).inc(batch.size());
    batch.clear();
  }
}

void export_pipeline::shutdown() {
  for (auto& l : lanes_) {
    {
      std::lock_guard lock(l->mutex);
      l->stopping = true;
    }
    l->wake.notify_one();
  }
  for (auto& l : lanes_)
    if (l->worker.joinable()) l->worker.join();
}

}  // namespace gistproxy::telemetry
