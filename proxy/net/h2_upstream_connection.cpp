#include "proxy/net/h2_upstream_connection.hpp"

#include <boost/asio/write.hpp>

namespace gistproxy::proxy {
namespace {
constexpr std::size_t read_size = 16 * 1024;
}  // namespace

h2_upstream_connection::h2_upstream_connection(std::unique_ptr<upstream_connection> connection,
                                               const h2_client_limits& limits)
    : connection_(std::move(connection)), h2_(*this, limits), in_(new char[read_size]) {}

awaitable<error_code> h2_upstream_connection::flush() {
  out_.clear();
  while (h2_.take_output(out_)) {
    auto [ec, n] = co_await connection_->with_stream(
        [&](auto& s) { return asio::async_write(s, asio::buffer(out_), use_nothrow); });
    if (ec) co_return connection_->deadline.verdict(ec);
    out_.clear();
  }
  co_return error_code{};
}

template <class More>
awaitable<error_code> h2_upstream_connection::pump(More more) {
  for (;;) {
    if (auto ec = co_await flush()) co_return ec;
    if (!more()) co_return error_code{};
    auto [read_ec, n] = co_await connection_->with_stream(
        [&](auto& s) { return s.async_read_some(asio::buffer(in_.get(), read_size), use_nothrow); });
    if (read_ec) {
      h2_.connection_lost();  // the stream fails: `failure_` says so
      co_return connection_->deadline.verdict(read_ec);
    }
    const std::string_view bytes(in_.get(), n);
    if (!heard_) answered_http1_ = bytes.starts_with("HTTP/1.");
    heard_ = true;
    if (!h2_.receive(bytes)) {
      co_await flush();  // the GOAWAY, best effort: the connection ends here
      if (!failure_ && !ended_) failure_ = "connection";
      co_return error_code{};
    }
  }
}

awaitable<error_code> h2_upstream_connection::send(const h2_client_request& request, std::string body) {
  // The last request's stream, if any, ended cleanly (reusable()): its state goes.
  stream_ = 0;
  status_.reset();
  fields_.clear();
  body_.clear();
  ended_ = false;
  failure_.reset();
  const auto stream = h2_.submit(request, std::move(body), true);
  if (!stream) {
    failure_ = std::string(h2_client_failure_name(h2_client_failure::internal));
    co_return error_code{};
  }
  stream_ = *stream;
  co_return co_await pump([this] { return !status_ && !failure_ && !ended_; });
}

awaitable<error_code> h2_upstream_connection::read_more() {
  co_return co_await pump([this] { return body_.empty() && !failure_ && !ended_; });
}

void h2_upstream_connection::consume() {
  if (body_.empty()) return;
  if (!ended_ && !failure_) h2_.consumed(stream_, body_.size());
  body_.clear();
}

void h2_upstream_connection::abandon() {
  if (stream_ && !ended_ && !failure_) h2_.reset(stream_, 0x8 /* CANCEL */);
  failure_ = "abandoned";
}

void h2_upstream_connection::response_head(std::int32_t stream, unsigned status, h2_fields fields) {
  if (stream != stream_) return;
  status_ = status;
  fields_ = std::move(fields);
}

void h2_upstream_connection::response_data(std::int32_t stream, std::string_view bytes) {
  if (stream == stream_) body_.append(bytes);  // bounded: the stream window opens only as consume() is called
}

void h2_upstream_connection::response_end(std::int32_t stream) {
  if (stream == stream_) ended_ = true;
}

void h2_upstream_connection::stream_failed(std::int32_t stream, h2_client_failure why, std::uint32_t) {
  if (stream == stream_ && !failure_) failure_ = std::string(h2_client_failure_name(why));
}

void h2_upstream_connection::connection_ended(std::uint32_t) {
  // A GOAWAY: the stream it covers still finishes; stream_failed says if not.
}

void h2_upstream_connection::callback_failed() {
  if (!failure_) failure_ = std::string(h2_client_failure_name(h2_client_failure::internal));
}

}  // namespace gistproxy::proxy
