#include "proxy/exchange/client_writer.hpp"

#include <charconv>

#include "proxy/net/http_writer.hpp"

namespace gistproxy::proxy {

client_writer::client_writer(client_channel& channel, const client_request& request, bool keep_alive, bool record)
    : channel_(channel), request_version_(request.version()), head_request_(request.method() == http::verb::head) {
  reply_.keep_alive = keep_alive;
  if (record) reply_.recorded.emplace();
}

awaitable<bool> client_writer::send(std::span<const asio::const_buffer> bytes, std::string_view what) {
  if (gone_) co_return false;
  const error_code ec = co_await channel_.write(bytes);
  co_return !failed(ec, what);
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

awaitable<bool> client_writer::whole(const http::response_header<>& from, std::string_view body) {
  if (auto* m = channel_.messages()) co_return co_await whole_message(*m, from, body);
  const unsigned status = from.result_int();
  auto head = head_builder::response(version(), status, from.reason(), head_size_hint(from));
  head.end_to_end_fields_of(from);
  if (head_request_) {
    if (auto it = from.find(http::field::content_length); it != from.end()) head.field("Content-Length", it->value());
    body = {};
  } else if (status != 204 && status != 304) {
    head.content_length(body.size());
  }
  if (draining_ && draining_->load()) reply_.keep_alive = false;
  const std::string bytes_of_head = std::move(head.connection(version(), reply_.keep_alive)).finish();
  reply_.status = int(status);
  reply_.started = true;
  std::array<asio::const_buffer, 2> bytes{asio::buffer(bytes_of_head), asio::buffer(body)};
  if (!co_await send(bytes, "while receiving the response")) co_return false;
  counted(body);
  co_return true;
}

awaitable<bool> client_writer::stream_head(const http::response_header<>& from, std::optional<std::uint64_t> length) {
  if (auto* m = channel_.messages()) {
    reply_.status = int(from.result_int());
    reply_.started = true;
    if (gone_) co_return false;
    // Each co_await its own statement: GCC 12 mishandles one inside a call's arguments.
    const error_code ec = co_await m->head(from.result_int(), from, length, false);
    co_return !failed(ec, "before the response headers");
  }
  auto head = head_builder::response(version(), from.result_int(), from.reason(), head_size_hint(from));
  head.end_to_end_fields_of(from);
  if (length) {
    head.content_length(*length);
  } else if (request_version_ >= 11) {
    chunked_ = true;
    head.field("Transfer-Encoding", "chunked");
  } else {
    reply_.keep_alive = false;  // HTTP/1.0 has no chunked coding: the body ends when we close
  }
  if (draining_ && draining_->load()) reply_.keep_alive = false;
  const std::string bytes_of_head = std::move(head.connection(version(), reply_.keep_alive)).finish();
  reply_.status = int(from.result_int());
  reply_.started = true;
  std::array<asio::const_buffer, 1> bytes{asio::buffer(bytes_of_head)};
  co_return co_await send(bytes, "before the response headers");
}

std::string client_writer::framed(std::string_view data) const {
  if (!chunked_ || data.empty()) return std::string(data);
  return chunk_prefix(data.size()) + std::string(data) + std::string(chunk_suffix);
}

awaitable<bool> client_writer::piece(std::string_view data, bool last) {
  if (auto* m = channel_.messages()) co_return co_await piece_message(*m, data, last);
  if (data.empty() && (!last || !chunked_)) co_return !gone_;
  std::string prefix = chunked_ && !data.empty() ? chunk_prefix(data.size()) : std::string();
  std::array<asio::const_buffer, 4> bytes{asio::buffer(prefix), asio::buffer(data),
                                          asio::buffer(chunked_ && !data.empty() ? chunk_suffix : std::string_view()),
                                          asio::buffer(chunked_ && last ? last_chunk : std::string_view())};
  if (!co_await send(bytes, "mid-response")) co_return false;
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
  if (auto* m = channel_.messages()) {
    co_await error_message(*m, e);
    co_return;
  }
  http::response<http::empty_body> res{http::status(e.status()), version()};
  res.set(http::field::content_type, "application/json");
  res.set("x-gistproxy-error", std::string(e.type()));
  if (e.retryable()) res.set(http::field::retry_after, "1");
  // A HEAD response states the length of the body it would have, and sends none
  // (RFC 9110 §9.3.2): a body here would be read as the next response.
  const std::string error_body = e.json_body();
  const std::string_view body = head_request_ ? std::string_view() : std::string_view(error_body);
  res.content_length(error_body.size());
  if (draining_ && draining_->load()) reply_.keep_alive = false;
  res.keep_alive(reply_.keep_alive);
  const std::string head = response_head(res);
  reply_.started = true;
  std::array<asio::const_buffer, 2> bytes{asio::buffer(head), asio::buffer(body)};
  if (auto ec = co_await channel_.write(bytes); ec) {
    gone_ = true;
    reply_.keep_alive = false;  // the error it had stays the exchange's error
    co_return;
  }
  counted(body);
}

// HTTP/2: the transport frames heads and pieces (no status line, chunking
// or Connection); the reply is accounted exactly as over HTTP/1.x.
awaitable<bool> client_writer::whole_message(message_channel& m, const http::response_header<>& from,
                                             std::string_view body) {
  const unsigned status = from.result_int();
  std::optional<std::uint64_t> length;
  if (head_request_) {
    if (auto it = from.find(http::field::content_length); it != from.end()) {
      std::uint64_t n = 0;
      auto v = std::string_view(it->value());
      if (std::from_chars(v.data(), v.data() + v.size(), n).ec == std::errc()) length = n;
    }
    body = {};
  } else if (status != 204 && status != 304) {
    length = body.size();
  }
  reply_.status = int(status);
  reply_.started = true;
  if (gone_) co_return false;
  error_code ec = co_await m.head(status, from, length, body.empty());
  if (!ec && !body.empty()) ec = co_await m.data(body, true);
  if (failed(ec, "while receiving the response")) co_return false;
  counted(body);
  co_return true;
}

awaitable<bool> client_writer::piece_message(message_channel& m, std::string_view data, bool last) {
  if (data.empty() && !last) co_return !gone_;
  if (gone_) co_return false;
  const error_code ec = co_await m.data(data, last);
  if (failed(ec, "mid-response")) co_return false;
  counted(data);
  co_return true;
}

awaitable<void> client_writer::error_message(message_channel& m, const proxy_error& e) {
  http::fields fields;
  fields.set(http::field::content_type, "application/json");
  fields.set("x-gistproxy-error", std::string(e.type()));
  if (e.retryable()) fields.set(http::field::retry_after, "1");
  const std::string error_body = e.json_body();
  const std::string_view body = head_request_ ? std::string_view() : std::string_view(error_body);
  reply_.started = true;
  error_code ec = co_await m.head(unsigned(e.status()), fields, error_body.size(), body.empty());
  if (!ec && !body.empty()) ec = co_await m.data(body, true);
  if (failed(ec, "")) {
    reply_.error = e;  // the error it had stays the exchange's error
    co_return;
  }
  counted(body);
}

}  // namespace gistproxy::proxy
