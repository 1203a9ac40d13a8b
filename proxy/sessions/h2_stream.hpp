// One HTTP/2 stream as the exchange sees it: the client_channel that frames
// what the exchange answers as HEADERS and DATA on its stream (no status
// line, chunked coding or Connection: HTTP/2 has none). Pieces are buffered
// in the connection (h2_connection) until the stream's flow-control window
// lets them out; a writer waits while more than `buffer_bound` bytes are
// buffered, so a stream whose client stopped reading holds bounded memory
// and stalls no other stream.
#pragma once

#include <boost/asio/steady_timer.hpp>
#include <functional>

#include "proxy/net/client_channel.hpp"
#include "proxy/net/h2_connection.hpp"

namespace gistproxy::proxy {

// What a stream needs of its session: the connection, and a way to say
// there is output to send.
class h2_link {
 public:
  virtual ~h2_link() = default;
  virtual h2_connection& connection() = 0;
  virtual void output_ready() = 0;
};

class h2_stream final : public client_channel {
 public:
  static constexpr std::size_t buffer_bound = 64 * 1024;

  // `write_timeout`: how long a writer may wait for the client to take its bytes.
  h2_stream(h2_link& link, std::int32_t id, executor ex, std::chrono::milliseconds write_timeout);

  // HEADERS (with END_STREAM when there is no body), then the body as DATA.
  awaitable<error_code> whole_response(const reply_head& head, std::string_view body) override;
  awaitable<error_code> begin_response(const reply_head& head) override;
  awaitable<error_code> write_body(std::string_view bytes, bool last) override { return data(bytes, last); }
  // A stream's end never ends its connection (a drain is the session's GOAWAY).
  bool keeps_connection() const override { return true; }
  void watch(client_watch& watch) override;
  executor get_executor() override { return executor_; }

  // The frames themselves. `from`: the fields whose end-to-end ones are
  // sent; `length`: the body's size when known; `ends`: no body follows.
  awaitable<error_code> head(unsigned status, const http::fields& from, std::optional<std::uint64_t> length,
                             bool ends);
  // One body piece; `last` ends the response. Returns once the piece is
  // buffered within `buffer_bound` (back-pressure), not necessarily sent.
  awaitable<error_code> data(std::string_view bytes, bool last);

  // The session's side: the stream ended (`clean`: after its last piece
  // went out) or was reset, or the connection ended (a reset, the upstream
  // hop is cancelled and writes fail from now on); or some bytes went out.
  void closed(bool clean);
  void drained() { room_.cancel(); }
  // The response went out whole (its last piece is buffered or sent).
  bool complete() const { return complete_; }
  bool is_closed() const { return closed_; }
  std::int32_t id() const { return id_; }
  void pseudo(h2_pseudo_fields fields) { pseudo_ = std::move(fields); }
  const h2_pseudo_fields* pseudo_fields() const override { return &pseudo_; }

 private:
  h2_link& link_;
  std::int32_t id_;
  std::chrono::milliseconds write_timeout_;
  executor executor_;
  asio::steady_timer room_;  // woken when bytes drain or the stream closes
  std::function<void()> departure_;
  h2_pseudo_fields pseudo_;
  bool responded_ = false, complete_ = false, closed_ = false, reset_ = false;
};

}  // namespace gistproxy::proxy
