// `serve --record FILE`: one JSON line per exchange (time, API, trace id, the
// request body as received, the body as forwarded when it differs, the
// response the client got — streamed responses as the SSE text sent — status,
// hops, timings). Headers are never written, so neither are Authorization,
// x-api-key or cookies. Requests never wait on it: lines queue for a writer
// thread, and past `max_queue_bytes` are dropped and counted. The file is
// rotated to FILE.1 when it would pass `max_file_bytes`; if that rename fails
// the file is kept and appended to (never truncated), counted. A record is
// written whole or not at all: a failed or short write (a full disk) is rolled
// back to the end of the last whole record, so every line stays readable.
#pragma once

#include <condition_variable>
#include <cstdint>
#include <deque>
#include <filesystem>
#include <mutex>
#include <optional>
#include <string>
#include <thread>
#include <vector>

#include "telemetry/metric_catalogue.hpp"

namespace gistproxy::proxy {

struct exchange_record {
  std::uint64_t unix_ms = 0;
  std::string api, method, path;  // path without the query
  std::string protocol;           // the client's: HTTP/1.1, HTTP/1.0, HTTP/2, WebSocket
  std::string trace_id;
  std::string conversation_id;  // empty: a request whose body was not read
  int status = 0;
  int hops = 0;  // extra upstream hops for read_blob calls
  std::vector<std::string> read_backs;  // handles the model read back whole (SHA-256 hex)
  double duration_ms = 0, upstream_ms = 0;
  std::string request_body;                 // as received (after Content-Encoding decoding)
  std::optional<std::string> forwarded_body;  // only when it differs from request_body
  std::string response_body;                // what the client received (capped)
  bool response_truncated = false;
};

// One JSON object (no newline). Bodies that are not valid UTF-8 go as *_base64;
// a streamed response is also assembled into "response" (the JSON object the
// API returns without streaming).
std::string to_record_line(const exchange_record& r);

struct recorder_options {
  std::filesystem::path file;
  std::uint64_t max_file_bytes = 1ull << 30;
  std::uint64_t max_queue_bytes = 64ull << 20;
};

class recorder {
 public:
  recorder(recorder_options options, telemetry::metric_catalogue& metrics);
  ~recorder();
  void submit(exchange_record&& r);  // never blocks on I/O
  // Reopens FILE before the next record (SIGHUP: after an external logrotate
  // moved it away).
  void reopen();
  // The response bytes one record keeps.
  static constexpr std::size_t max_response_bytes = 8u << 20;

 private:
  void run();
  void write(const std::string& line);
  bool open_file();
  void rotate();
  static std::uint64_t size_of(const exchange_record& r);
  recorder_options options_;
  telemetry::metric_catalogue& metrics_;
  std::mutex mutex_;
  std::condition_variable wake_;
  std::deque<exchange_record> queue_;  // serialized on the writer thread, not the I/O threads
  std::uint64_t queued_bytes_ = 0;
  bool stopping_ = false;
  bool reopen_ = false;
  int fd_ = -1;
  std::uint64_t file_bytes_ = 0;
  std::thread worker_;
};

}  // namespace gistproxy::proxy
