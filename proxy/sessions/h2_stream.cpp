#include "proxy/sessions/h2_stream.hpp"

#include <nghttp2/nghttp2.h>

#include <cctype>

#include "proxy/net/hop_by_hop.hpp"

namespace gistproxy::proxy {

h2_stream::h2_stream(h2_link& link, std::int32_t id, executor ex, std::chrono::milliseconds write_timeout)
    : link_(link), id_(id), write_timeout_(write_timeout), executor_(ex), room_(ex) {}

void h2_stream::closed(bool clean) {
  closed_ = true;
  reset_ = !clean || !complete_;  // a clean end can only follow the last piece
  if (reset_ && departure_) departure_();
  room_.cancel();
}

void h2_stream::watch(client_watch& watch) {
  departure_ = watch.departure();
  if (reset_) departure_();  // reset before the hop started: it never goes out
}

awaitable<error_code> h2_stream::whole_response(const reply_head& head, std::string_view body) {
  error_code ec = co_await this->head(head.status, head.fields, head.length, body.empty());
  if (!ec && !body.empty()) ec = co_await data(body, true);
  co_return ec;
}

awaitable<error_code> h2_stream::begin_response(const reply_head& head) {
  co_return co_await this->head(head.status, head.fields, head.length, false);
}

awaitable<error_code> h2_stream::head(unsigned status, const http::fields& from, std::optional<std::uint64_t> length,
                                      bool ends) {
  if (closed_ || responded_) co_return asio::error::connection_reset;
  std::vector<std::pair<std::string, std::string>> fields;
  // The end-to-end fields only: HTTP/2 forbids the connection-specific ones
  // (RFC 9113 §8.2.2), and its names are lower case.
  for_each_end_to_end_field(from, [&](const auto& f) {
    std::string name(f.name_string());
    for (char& c : name) c = char(std::tolower(static_cast<unsigned char>(c)));
    fields.emplace_back(std::move(name), std::string(f.value()));
  });
  if (length) fields.emplace_back("content-length", std::to_string(*length));
  if (!link_.connection().respond(id_, status, fields, ends)) co_return asio::error::connection_reset;
  responded_ = true;
  complete_ = ends;
  link_.output_ready();
  co_return error_code{};
}

awaitable<error_code> h2_stream::data(std::string_view bytes, bool last) {
  if (closed_ || !responded_ || complete_) co_return asio::error::connection_reset;
  auto& conn = link_.connection();
  conn.send_data(id_, bytes, last);
  complete_ = last;
  link_.output_ready();
  // Back-pressure: wait while the client has not taken enough of what is
  // buffered (its window is closed), within the client timeout.
  while (!closed_ && conn.buffered(id_) > buffer_bound) {
    room_.expires_after(write_timeout_);
    auto [ec] = co_await room_.async_wait(use_nothrow);
    if (!ec && !closed_ && conn.buffered(id_) > buffer_bound) {
      conn.reset(id_, NGHTTP2_CANCEL);  // the client stopped reading this stream
      link_.output_ready();
      co_return beast::error::timeout;
    }
  }
  co_return reset_ ? error_code(asio::error::connection_reset) : error_code{};
}

}  // namespace gistproxy::proxy
