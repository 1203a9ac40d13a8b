#include "proxy/runtime/recorder.hpp"

#include <fcntl.h>
#include <sys/stat.h>
#include <unistd.h>

#include <cerrno>
#include <cstring>

#include <cstdio>
#include <nlohmann/json.hpp>

#include "rewrite/offload/base64.hpp"
#include "rewrite/endpoint.hpp"
#include "rewrite/sse/assemble.hpp"
#include "rewrite/stream_framing.hpp"
#include "telemetry/access_log.hpp"

namespace gistproxy::proxy {
namespace {

bool valid_utf8(std::string_view s) {
  std::size_t i = 0;
  while (i < s.size()) {
    auto c = static_cast<unsigned char>(s[i]);
    std::size_t n = c < 0x80 ? 0 : (c >> 5) == 0x6 ? 1 : (c >> 4) == 0xE ? 2 : (c >> 3) == 0x1E ? 3 : 4;
    if (n == 4 || i + n >= s.size() + (n ? 0 : 1)) return false;
    if (n == 1 && c < 0xC2) return false;  // overlong
    auto c1 = n ? static_cast<unsigned char>(s[i + 1]) : 0;
    if (n == 2 && ((c == 0xE0 && c1 < 0xA0) || (c == 0xED && c1 >= 0xA0))) return false;  // overlong, surrogate
    if (n == 3 && (c > 0xF4 || (c == 0xF0 && c1 < 0x90) || (c == 0xF4 && c1 >= 0x90))) return false;
    for (std::size_t k = 1; k <= n; ++k)
      if ((static_cast<unsigned char>(s[i + k]) >> 6) != 0x2) return false;
    i += n + 1;
  }
  return true;
}

// Bodies JSON can carry exactly go as strings; others (invalid UTF-8) as base64.
void put_body(std::string& out, std::string_view key, const std::string& bytes) {
  bool text = valid_utf8(bytes);
  out += ",\"";
  out += key;
  out += text ? "\":" : "_base64\":";
  telemetry::append_json_string(out, text ? std::string_view(bytes) : std::string_view(rewrite::base64_encode(bytes)));
}

void put(std::string& out, std::string_view key, std::string_view value) {
  out += ",\"";
  out += key;
  out += "\":";
  telemetry::append_json_string(out, value);
}

}  // namespace

// Written by hand (no JSON DOM): the writer thread shares the cores with the proxy.
std::string to_record_line(const exchange_record& r) {
  std::string out;
  out.reserve(r.request_body.size() + r.response_body.size() + (r.forwarded_body ? r.forwarded_body->size() : 0) + 512);
  out += "{\"gistproxy_record\":1,\"unix_ms\":" + std::to_string(r.unix_ms);
  put(out, "api", r.api);
  put(out, "method", r.method);
  put(out, "path", r.path);
  if (!r.protocol.empty()) put(out, "protocol", r.protocol);
  put(out, "trace_id", r.trace_id);
  if (!r.conversation_id.empty()) put(out, "conversation_id", r.conversation_id);
  char numbers[160];
  std::snprintf(numbers, sizeof numbers, ",\"status\":%d,\"hops\":%d,\"duration_ms\":%.3f,\"upstream_ms\":%.3f", r.status,
                r.hops, r.duration_ms, r.upstream_ms);
  out += numbers;
  if (!r.read_backs.empty()) {
    out += ",\"read_backs\":[";
    for (std::size_t i = 0; i < r.read_backs.size(); ++i) {
      if (i) out += ',';
      telemetry::append_json_string(out, r.read_backs[i]);
    }
    out += ']';
  }
  put_body(out, "request_body", r.request_body);
  if (r.forwarded_body) put_body(out, "forwarded_body", *r.forwarded_body);
  put_body(out, "response_body", r.response_body);
  if (r.response_truncated) out += ",\"response_truncated\":true";
  const auto* endpoint = rewrite::endpoint_for_path(r.path);
  const auto* wire = endpoint ? &endpoint->wire() : nullptr;
  // A streamed answer is also kept as the JSON the API returns unstreamed
  // (Bedrock's binary event-stream read through its framing first).
  std::optional<nlohmann::json> whole;
  if (wire && wire->answer_stream_transport() != rewrite::stream_transport::sse) {
    const auto events = rewrite::eventstream_as_sse(r.response_body, wire->answer_stream_transport());
    if (!events.empty()) whole = wire->assemble_stream(events);
  } else if (wire && rewrite::looks_like_sse(r.response_body)) {
    whole = wire->assemble_stream(r.response_body);
  }
  if (whole) out += ",\"response\":" + whole->dump(-1, ' ', false, nlohmann::json::error_handler_t::replace);
  out += '}';
  return out;
}

std::uint64_t recorder::size_of(const exchange_record& r) {
  return r.request_body.size() + (r.forwarded_body ? r.forwarded_body->size() : 0) + r.response_body.size() + 512;
}

recorder::recorder(recorder_options options, telemetry::metric_catalogue& metrics)
    : options_(std::move(options)), metrics_(metrics) {
  if (!open_file()) throw std::runtime_error("--record: cannot open " + options_.file.string() + ": " + std::strerror(errno));
  worker_ = std::thread([this] { run(); });
}

recorder::~recorder() {
  {
    std::lock_guard lock(mutex_);
    stopping_ = true;
  }
  wake_.notify_one();
  worker_.join();
  if (fd_ >= 0) ::close(fd_);
}

bool recorder::open_file() {
  const int fd = ::open(options_.file.c_str(), O_WRONLY | O_APPEND | O_CREAT | O_CLOEXEC, 0640);
  if (fd < 0) return false;
  if (fd_ >= 0) ::close(fd_);
  fd_ = fd;
  struct stat st {};
  file_bytes_ = ::fstat(fd_, &st) == 0 ? std::uint64_t(st.st_size) : 0;
  return true;
}

void recorder::reopen() {
  {
    std::lock_guard lock(mutex_);
    reopen_ = true;
  }
  wake_.notify_one();
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
  bool was_empty = queue_.empty();
  queue_.push_back(std::move(r));
  lock.unlock();
  if (was_empty) wake_.notify_one();  // the writer drains everything queued before it waits again
}

void recorder::run() {
  for (;;) {
    std::optional<exchange_record> r;
    bool reopen = false;
    {
      std::unique_lock lock(mutex_);
      wake_.wait(lock, [&] { return stopping_ || reopen_ || !queue_.empty(); });
      reopen = std::exchange(reopen_, false);
      if (!queue_.empty()) {
        r = std::move(queue_.front());
        queue_.pop_front();
        queued_bytes_ -= size_of(*r);
      } else if (!reopen) {
        return;  // stopping, everything written
      }
    }
    // A reopen that fails keeps the old descriptor: records still land (in
    // the moved file), none are lost.
    if (reopen) open_file();
    if (r) write(to_record_line(*r) + '\n');
  }
}

// Rotation renames FILE to FILE.1 and starts a new FILE. If the rename fails
// (a directory the service user cannot write, FILE.1 a directory), FILE is
// kept and appended to: reopening it truncated would lose every record since
// the last rotation.
void recorder::rotate() {
  auto rotated = options_.file;
  rotated += ".1";
  std::error_code ec;
  std::filesystem::rename(options_.file, rotated, ec);
  if (ec || !open_file()) {
    metrics_.records.labels({"rotation_failed"}).inc();
    return;
  }
}

// One whole line or nothing: a short or failed write (ENOSPC, EFBIG) is cut
// back to where the line started, so the next record is not glued to a
// partial one and every line in the file parses.
void recorder::write(const std::string& line) {
  if (file_bytes_ > 0 && file_bytes_ + line.size() > options_.max_file_bytes) rotate();
  struct stat st {};
  const off_t start = ::fstat(fd_, &st) == 0 ? st.st_size : off_t(file_bytes_);
  std::size_t done = 0;
  while (done < line.size()) {
    const ssize_t n = ::write(fd_, line.data() + done, line.size() - done);
    if (n < 0 && errno == EINTR) continue;
    if (n <= 0) break;
    done += std::size_t(n);
  }
  if (done < line.size()) {
    if (done > 0 && ::ftruncate(fd_, start) != 0) {
      // Could not cut it back: end the partial line so the next record starts
      // on its own line (the partial one is unreadable, and counted so).
      [[maybe_unused]] auto ignored = ::write(fd_, "\n", 1);
    }
    file_bytes_ = std::uint64_t(start);
    metrics_.records.labels({"failed"}).inc();
    return;
  }
  file_bytes_ = std::uint64_t(start) + line.size();
  metrics_.records.labels({"written"}).inc();
}

}  // namespace gistproxy::proxy
