#include "proxy/recorder.hpp"

#include <nlohmann/json.hpp>

#include "rewrite/offload/base64.hpp"
#include "rewrite/replay/trace_formats.hpp"
#include "rewrite/sse/assemble.hpp"

namespace gistproxy::proxy {
namespace {

// Strings whose bytes JSON can carry exactly go as strings; others as base64.
void put_body(nlohmann::json& j, const std::string& key, const std::string& bytes) {
  nlohmann::json s = bytes;
  try {
    (void)s.dump();  // throws on invalid UTF-8
    j[key] = std::move(s);
  } catch (const nlohmann::json::type_error&) {
    j[key + "_base64"] = rewrite::base64_encode(bytes);
  }
}

}  // namespace

std::string to_record_line(const exchange_record& r) {
  nlohmann::json j = {{"gistproxy_record", 1},    {"unix_ms", r.unix_ms},       {"api", r.api},
                      {"method", r.method},       {"path", r.path},             {"trace_id", r.trace_id},
                      {"status", r.status},       {"hops", r.hops},             {"duration_ms", r.duration_ms},
                      {"upstream_ms", r.upstream_ms}};
  put_body(j, "request_body", r.request_body);
  if (r.forwarded_body) put_body(j, "forwarded_body", *r.forwarded_body);
  put_body(j, "response_body", r.response_body);
  if (r.response_truncated) j["response_truncated"] = true;
  auto api = rewrite::api_of_path(r.path);
  if (api && rewrite::looks_like_sse(r.response_body)) {
    if (auto whole = rewrite::assemble_stream(*api, r.response_body)) j["response"] = std::move(*whole);
  }
  return j.dump(-1, ' ', false, nlohmann::json::error_handler_t::replace);
}

std::uint64_t recorder::size_of(const exchange_record& r) {
  return r.request_body.size() + (r.forwarded_body ? r.forwarded_body->size() : 0) + r.response_body.size() + 512;
}

recorder::recorder(recorder_options options, telemetry::metric_catalogue& metrics)
    : options_(std::move(options)), metrics_(metrics) {
  out_.open(options_.file, std::ios::binary | std::ios::app);
  if (!out_) throw std::runtime_error("--record: cannot open " + options_.file.string());
  std::error_code ec;
  file_bytes_ = std::filesystem::file_size(options_.file, ec);
  if (ec) file_bytes_ = 0;
  worker_ = std::thread([this] { run(); });
}

recorder::~recorder() {
  {
    std::lock_guard lock(mutex_);
    stopping_ = true;
  }
  wake_.notify_one();
  worker_.join();
}

void recorder::submit(exchange_record&& r) {
  auto size = size_of(r);
  std::unique_lock lock(mutex_);
  if (stopping_ || queued_bytes_ + size > options_.max_queue_bytes) {
    lock.unlock();
    metrics_.records.labels({"dropped"}).inc();
    return;
  }
  queued_bytes_ += size;
  queue_.push_back(std::move(r));
  lock.unlock();
  wake_.notify_one();
}

void recorder::run() {
  for (;;) {
    exchange_record r;
    {
      std::unique_lock lock(mutex_);
      wake_.wait(lock, [&] { return stopping_ || !queue_.empty(); });
      if (queue_.empty()) return;  // stopping, everything written
      r = std::move(queue_.front());
      queue_.pop_front();
      queued_bytes_ -= size_of(r);
    }
    write(to_record_line(r) + '\n');
  }
}

void recorder::write(const std::string& line) {
  if (file_bytes_ > 0 && file_bytes_ + line.size() > options_.max_file_bytes) {
    out_.close();
    std::error_code ec;
    auto rotated = options_.file;
    rotated += ".1";
    std::filesystem::rename(options_.file, rotated, ec);
    out_.open(options_.file, std::ios::binary | std::ios::trunc);
    file_bytes_ = 0;
  }
  out_.write(line.data(), std::streamsize(line.size()));
  out_.flush();
  if (!out_) {
    out_.clear();
    metrics_.records.labels({"dropped"}).inc();
    return;
  }
  file_bytes_ += line.size();
  metrics_.records.labels({"written"}).inc();
}

}  // namespace gistproxy::proxy
