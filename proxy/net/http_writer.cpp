#include "proxy/net/http_writer.hpp"

#include <cstdio>

namespace gistproxy::proxy {
namespace {

void append_fields(std::string& out, const http::fields& f) {
  for (const auto& field : f) {
    out.append(field.name_string());
    out += ": ";
    out.append(field.value());
    out += "\r\n";
  }
  out += "\r\n";
}

std::size_t estimate(const http::fields& f) {
  std::size_t n = 64;
  for (const auto& field : f) n += field.name_string().size() + field.value().size() + 4;
  return n;
}

}  // namespace

std::string request_head(const http::request_header<>& h) {
  std::string out;
  out.reserve(estimate(h) + h.target().size());
  out.append(h.method_string());
  out += ' ';
  out.append(h.target());
  out += h.version() == 10 ? " HTTP/1.0\r\n" : " HTTP/1.1\r\n";
  append_fields(out, h);
  return out;
}

std::string response_head(const http::response_header<>& h) {
  std::string out;
  out.reserve(estimate(h));
  char line[48];
  std::snprintf(line, sizeof line, "HTTP/%u.%u %u ", h.version() / 10, h.version() % 10, h.result_int());
  out += line;
  auto reason = h.reason();
  out.append(reason.empty() ? http::obsolete_reason(h.result()) : reason);
  out += "\r\n";
  append_fields(out, h);
  return out;
}

std::string chunk_prefix(std::size_t size) {
  char buf[24];
  int n = std::snprintf(buf, sizeof buf, "%zx\r\n", size);
  return std::string(buf, std::size_t(n));
}

}  // namespace gistproxy::proxy
