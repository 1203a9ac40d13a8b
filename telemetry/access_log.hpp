// Structured log lines on stderr: one JSON object per line. The access record
// carries shapes and timings only, never bodies, prompts or credentials.
#pragma once

#include <cstdint>
#include <cstdio>
#include <mutex>
#include <optional>
#include <string>
#include <string_view>

namespace gistproxy::telemetry {

enum class log_level { debug = 0, info = 1, warn = 2, error = 3, off = 4 };
std::optional<log_level> parse_log_level(std::string_view s);

struct access_record {
  std::string method;
  std::string_view protocol = "HTTP/1.1";  // HTTP/1.0, HTTP/1.1 or HTTP/2
  std::string_view upstream_protocol;       // "HTTP/2" when the upstream hop went over HTTP/2; empty: HTTP/1.1
  std::string path;  // without the query string: it may carry keys
  std::string api;
  std::string model;
  int status = 0;
  double duration_ms = 0;
  double upstream_ms = 0;
  std::uint64_t bytes_in = 0;
  std::uint64_t bytes_out = 0;
  std::string trace_id;
  std::string error_source;  // empty when the request succeeded
  std::string error_type;
};

class logger {
 public:
  explicit logger(log_level level, std::FILE* out = stderr) : level_(level), out_(out) {}
  bool enabled(log_level l) const { return l >= level_ && level_ != log_level::off; }
  void access(const access_record& r);
  // A message with optional pre-rendered JSON fields ("\"k\":1,\"x\":\"y\"").
  void log(log_level l, std::string_view msg, std::string_view json_fields = {});

 private:
  void write(std::string&& line);
  log_level level_;
  std::FILE* out_;
  std::mutex mutex_;
};

// Appends s as a JSON string literal (quotes included), escaping as needed.
void append_json_string(std::string& out, std::string_view s);

}  // namespace gistproxy::telemetry
