#include "telemetry/access_log.hpp"

#include <chrono>
#include <ctime>

namespace gistproxy::telemetry {
namespace {

void append_time(std::string& out) {
  auto now = std::chrono::system_clock::now();
  auto secs = std::chrono::system_clock::to_time_t(now);
  auto ms = std::chrono::duration_cast<std::chrono::milliseconds>(now.time_since_epoch()).count() % 1000;
  std::tm tm{};
  gmtime_r(&secs, &tm);
  char buf[64];
  std::snprintf(buf, sizeof buf, "\"%04d-%02d-%02dT%02d:%02d:%02d.%03dZ\"", tm.tm_year + 1900, tm.tm_mon + 1,
                tm.tm_mday, tm.tm_hour, tm.tm_min, tm.tm_sec, int(ms));
  out += buf;
}

void field(std::string& out, std::string_view key, std::string_view value) {
  out += ",\"";
  out += key;
  out += "\":";
  append_json_string(out, value);
}

void field(std::string& out, std::string_view key, double value) {
  char buf[48];
  std::snprintf(buf, sizeof buf, ",\"%.*s\":%.3f", int(key.size()), key.data(), value);
  out += buf;
}

void field(std::string& out, std::string_view key, std::uint64_t value) {
  out += ",\"";
  out += key;
  out += "\":";
  out += std::to_string(value);
}

const char* level_name(log_level l) {
  switch (l) {
    case log_level::debug: return "debug";
    case log_level::info: return "info";
    case log_level::warn: return "warn";
    case log_level::error: return "error";
    case log_level::off: return "off";
  }
  return "info";
}

}  // namespace

std::optional<log_level> parse_log_level(std::string_view s) {
  for (auto l : {log_level::debug, log_level::info, log_level::warn, log_level::error, log_level::off})
    if (s == level_name(l)) return l;
  return std::nullopt;
}

namespace {

// The length of the well-formed UTF-8 sequence at s[i] (RFC 3629: no
// overlong forms, no surrogates, nothing past U+10FFFF), or 0.
std::size_t utf8_sequence(std::string_view s, std::size_t i) {
  const auto b = [&](std::size_t k) { return static_cast<unsigned char>(s[i + k]); };
  const unsigned char c = b(0);
  const std::size_t n = c < 0x80 ? 1 : c >= 0xC2 && c <= 0xDF ? 2 : c >= 0xE0 && c <= 0xEF ? 3 : c >= 0xF0 && c <= 0xF4 ? 4 : 0;
  if (n == 0 || i + n > s.size()) return 0;
  for (std::size_t k = 1; k < n; ++k)
    if ((b(k) & 0xC0) != 0x80) return 0;
  if (c == 0xE0 && b(1) < 0xA0) return 0;  // overlong
  if (c == 0xED && b(1) > 0x9F) return 0;  // surrogate
  if (c == 0xF0 && b(1) < 0x90) return 0;  // overlong
  if (c == 0xF4 && b(1) > 0x8F) return 0;  // past U+10FFFF
  return n;
}

}  // namespace

// What a log copies from outside (a client's model field, a path) may be any
// bytes: invalid UTF-8 becomes U+FFFD, so every line stays valid JSON.
void append_json_string(std::string& out, std::string_view s) {
  out += '"';
  for (std::size_t i = 0; i < s.size();) {
    const unsigned char c = static_cast<unsigned char>(s[i]);
    if (c >= 0x80) {
      const std::size_t n = utf8_sequence(s, i);
      if (n == 0) {
        out += "\\ufffd";
        ++i;
      } else {
        out.append(s.substr(i, n));
        i += n;
      }
      continue;
    }
    ++i;
    switch (c) {
      case '"': out += "\\\""; break;
      case '\\': out += "\\\\"; break;
      case '\n': out += "\\n"; break;
      case '\r': out += "\\r"; break;
      case '\t': out += "\\t"; break;
      default:
        if (c < 0x20) {
          char buf[8];
          std::snprintf(buf, sizeof buf, "\\u%04x", c);
          out += buf;
        } else {
          out += char(c);
        }
    }
  }
  out += '"';
}

void logger::access(const access_record& r) {
  if (!enabled(log_level::info)) return;
  std::string line = "{\"time\":";
  line.reserve(320);
  append_time(line);
  line += ",\"level\":\"info\",\"msg\":\"access\"";
  field(line, "method", r.method);
  field(line, "protocol", r.protocol);
  if (!r.upstream_protocol.empty()) field(line, "upstream_protocol", r.upstream_protocol);
  field(line, "path", r.path);
  field(line, "api", r.api);
  if (!r.model.empty()) field(line, "model", r.model);
  field(line, "status", std::uint64_t(r.status));
  field(line, "duration_ms", r.duration_ms);
  field(line, "upstream_ms", r.upstream_ms);
  field(line, "bytes_in", r.bytes_in);
  field(line, "bytes_out", r.bytes_out);
  field(line, "trace_id", r.trace_id);
  if (!r.error_source.empty()) {
    field(line, "error_source", r.error_source);
    field(line, "error_type", r.error_type);
  }
  line += "}\n";
  write(std::move(line));
}

void logger::log(log_level l, std::string_view msg, std::string_view json_fields) {
  if (!enabled(l)) return;
  std::string line = "{\"time\":";
  append_time(line);
  line += ",\"level\":\"";
  line += level_name(l);
  line += "\",\"msg\":";
  append_json_string(line, msg);
  if (!json_fields.empty()) {
    line += ',';
    line += json_fields;
  }
  line += "}\n";
  write(std::move(line));
}

void logger::write(std::string&& line) {
  std::lock_guard lock(mutex_);
  std::fwrite(line.data(), 1, line.size(), out_);
  std::fflush(out_);
}

}  // namespace gistproxy::telemetry
