#include "proxy/net/http_writer.hpp"

#include <charconv>

#include "proxy/net/hop_by_hop.hpp"

namespace gistproxy::proxy {
namespace {

// "HTTP/1.1 200 " (formatted by hand: snprintf was 2.5% of a request's instructions).
void append_status_line_start(std::string& out, unsigned version, unsigned status) {
  char digits[16];
  out += "HTTP/";
  out.append(digits, std::to_chars(digits, digits + sizeof digits, version / 10).ptr);
  out += '.';
  out.append(digits, std::to_chars(digits, digits + sizeof digits, version % 10).ptr);
  out += ' ';
  out.append(digits, std::to_chars(digits, digits + sizeof digits, status).ptr);
  out += ' ';
}

void append_fields(std::string& out, const http::fields& f) {
  for (const auto& field : f) {
    out.append(field.name_string());
    out += ": ";
    out.append(field.value());
    out += "\r\n";
  }
  out += "\r\n";
}

}  // namespace

std::size_t head_size_hint(const http::fields& f) {
  std::size_t n = 64;
  for (const auto& field : f) n += field.name_string().size() + field.value().size() + 4;
  return n;
}

std::string request_head(const http::request_header<>& h) {
  std::string out;
  out.reserve(head_size_hint(h) + h.target().size());
  out.append(h.method_string());
  out += ' ';
  out.append(h.target());
  out += h.version() == 10 ? " HTTP/1.0\r\n" : " HTTP/1.1\r\n";
  append_fields(out, h);
  return out;
}

std::string response_head(const http::response_header<>& h) {
  std::string out;
  out.reserve(head_size_hint(h));
  append_status_line_start(out, h.version(), h.result_int());
  auto reason = h.reason();
  out.append(reason.empty() ? http::obsolete_reason(h.result()) : reason);
  out += "\r\n";
  append_fields(out, h);
  return out;
}

head_builder head_builder::request(std::string_view method, std::string_view target, std::size_t fields_hint) {
  head_builder b;
  b.out_.reserve(fields_hint + target.size() + 128);
  b.out_.append(method);
  b.out_ += ' ';
  b.out_.append(target);
  b.out_ += " HTTP/1.1\r\n";
  return b;
}

head_builder head_builder::response(unsigned version, unsigned status, std::string_view reason,
                                    std::size_t fields_hint) {
  head_builder b;
  b.out_.reserve(fields_hint + 64);
  append_status_line_start(b.out_, version, status);
  b.out_.append(reason.empty() ? std::string_view(http::obsolete_reason(http::status(status))) : reason);
  b.out_ += "\r\n";
  return b;
}

head_builder& head_builder::end_to_end_fields_of(const http::fields& from,
                                                std::initializer_list<std::string_view> replaced) {
  for_each_end_to_end_field(from, [&](const auto& f) {
    for (std::string_view name : replaced)
      if (!name.empty() && beast::iequals(f.name_string(), name)) return;
    field(f.name_string(), f.value());
  });
  return *this;
}

head_builder& head_builder::field(std::string_view name, std::string_view value) {
  out_.append(name);
  out_ += ": ";
  out_.append(value);
  out_ += "\r\n";
  return *this;
}

head_builder& head_builder::content_length(std::uint64_t n) {
  char digits[24];
  auto end = std::to_chars(digits, digits + sizeof digits, n).ptr;
  return field("Content-Length", std::string_view(digits, std::size_t(end - digits)));
}

head_builder& head_builder::connection(unsigned version, bool keep_alive) {
  if (version >= 11 && !keep_alive) return field("Connection", "close");
  if (version < 11 && keep_alive) return field("Connection", "keep-alive");
  return *this;
}

std::string head_builder::finish() && {
  out_ += "\r\n";
  return std::move(out_);
}

std::string chunk_prefix(std::size_t size) {
  char buf[24];
  char* end = std::to_chars(buf, buf + sizeof buf - 2, size, 16).ptr;
  *end++ = '\r';
  *end++ = '\n';
  return std::string(buf, end);
}

}  // namespace gistproxy::proxy
