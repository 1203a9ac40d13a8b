#include "proxy/exchange/client_writer.hpp"

#include <charconv>

namespace gistproxy::proxy {
namespace {

// The length a HEAD request's answer states: the upstream's, for the body
// it would have had (RFC 9110 §9.3.2).
std::optional<std::uint64_t> stated_length(const http::fields& from) {
  auto it = from.find(http::field::content_length);
  if (it == from.end()) return std::nullopt;
  std::uint64_t n = 0;
  const auto v = std::string_view(it->value());
  if (std::from_chars(v.data(), v.data() + v.size(), n).ec != std::errc()) return std::nullopt;
  return n;
}

}  // namespace

client_writer::client_writer(client_channel& channel, const client_request& request, bool keep_alive, bool record)
    : channel_(channel), head_request_(request.method() == http::verb::head) {
  reply_.keep_alive = keep_alive;
  if (record) reply_.recorded.emplace();
}

bool client_writer::failed(error_code ec, std::string_view what) {
  if (!ec) return false;
  gone_ = true;
  reply_.error = proxy_error{error_kind::client_disconnected, "client went away " + std::string(what)};
  reply_.keep_alive = false;
  return true;
}

void client_writer::sent_elsewhere(std::string_view data, std::uint64_t times) {
  for (std::uint64_t i = 0; i < times; ++i) counted(data);
}

void client_writer::counted(std::string_view body) {
  reply_.bytes_out += body.size();
  if (!reply_.recorded) return;
  auto room = record_limit - std::min(record_limit, reply_.recorded->size());
  if (body.size() > room) reply_.recorded_truncated = true;
  reply_.recorded->append(body.substr(0, room));
}

void client_writer::started(unsigned status) {
  reply_.status = int(status);
  reply_.started = true;
}

awaitable<bool> client_writer::whole(const http::response_header<>& from, std::string_view body) {
  const unsigned status = from.result_int();
  std::optional<std::uint64_t> length;
  if (head_request_) {
    length = stated_length(from);
    body = {};
  } else if (status != 204 && status != 304) {
    length = body.size();
  }
  const reply_head head{status, from.reason(), from, length, !reply_.keep_alive};
  started(status);
  if (gone_) co_return false;
  const error_code ec = co_await channel_.whole_response(head, body);
  headed();
  if (failed(ec, "while receiving the response")) co_return false;
  counted(body);
  co_return true;
}

awaitable<bool> client_writer::stream_head(const http::response_header<>& from, std::optional<std::uint64_t> length) {
  const reply_head head{from.result_int(), from.reason(), from, length, !reply_.keep_alive};
  started(from.result_int());
  if (gone_) co_return false;
  const error_code ec = co_await channel_.begin_response(head);
  headed();
  co_return !failed(ec, "before the response headers");
}

awaitable<bool> client_writer::piece(std::string_view data, bool last) {
  if (data.empty() && !last) co_return !gone_;
  if (gone_) co_return false;
  const error_code ec = co_await channel_.write_body(data, last);
  if (failed(ec, "mid-response")) co_return false;
  counted(data);
  co_return true;
}

awaitable<void> client_writer::error(const proxy_error& e) {
  reply_.error = e;
  reply_.status = e.status();
  if (e.kind == error_kind::client_disconnected) gone_ = true;  // nobody to tell
  if (reply_.started || gone_) {
    reply_.keep_alive = false;  // the head is out: only an abnormal end can signal it
    co_return;
  }
  http::fields fields;
  fields.set(http::field::content_type, "application/json");
  fields.set("x-gistproxy-error", std::string(e.type()));
  if (e.retryable()) fields.set(http::field::retry_after, "1");
  // A HEAD response states the length of the body it would have, and sends none
  // (RFC 9110 §9.3.2): a body here would be read as the next response.
  const std::string error_body = e.json_body();
  const std::string_view body = head_request_ ? std::string_view() : std::string_view(error_body);
  const reply_head head{unsigned(e.status()), {}, fields, error_body.size(), !reply_.keep_alive};
  reply_.started = true;
  const error_code ec = co_await channel_.whole_response(head, body);
  headed();
  if (ec) {
    gone_ = true;
    reply_.keep_alive = false;  // the error it had stays the exchange's error
    co_return;
  }
  counted(body);
}

}  // namespace gistproxy::proxy
