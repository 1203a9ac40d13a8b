#include "proxy/exchange/socket_hop.hpp"

#include "rewrite/dialects/responses/responses_socket.hpp"

namespace gistproxy::proxy {

socket_hop::socket_hop(services& svc, request_context& ctx, upstream_socket& socket, int hop)
    : svc_(svc), socket_(socket), span_(svc, ctx, hop) {
  // Over the socket the answer is always a stream of events, read as SSE.
  head_.result(http::status::ok);
  head_.set(http::field::content_type, "text/event-stream");
  if (span_->recording) span_->set_text("network.protocol.name", "websocket");
}

socket_hop::~socket_hop() {
  if (!span_.ended()) fail("abandoned");
}

awaitable<std::optional<proxy_error>> socket_hop::send(const std::string& body) {
  auto frame = rewrite::response_create_frame(body);
  if (!frame) co_return proxy_error{error_kind::internal, "a hop's body is not a JSON object: not sent on the socket"};
  socket_.expect_response();
  if (auto ec = co_await socket_.send_text(*frame))
    co_return proxy_error{error_kind::upstream_reset, "the upstream WebSocket closed before the request was sent"};
  co_return std::nullopt;
}

awaitable<upstream_answer::piece> socket_hop::read_piece() {
  if (done_) co_return piece{{}, true, std::nullopt};
  // The first event is what an HTTP answer's head is (--upstream-timeout);
  // each next one is a stream's next bytes (--stream-idle-timeout).
  auto message = co_await socket_.read(answered_ ? svc_.cfg.stream_idle_timeout : svc_.cfg.upstream_timeout);
  answered_ = true;
  if (message.error) {
    const bool timeout = message.error == beast::error::timeout;
    co_return piece{{}, false,
                    proxy_error{timeout ? error_kind::upstream_timeout : error_kind::upstream_reset,
                                timeout ? "the upstream WebSocket went silent" : "the upstream WebSocket closed mid-response"}};
  }
  if (!message.is_event) {
    socket_.give_up();
    co_return piece{{}, false, proxy_error{error_kind::upstream_bad_response,
                                           "the upstream WebSocket sent a message that is not a JSON event"}};
  }
  piece_ = std::move(message.sse);
  done_ = message.ends_response;
  co_return piece{piece_, done_, std::nullopt};
}

awaitable<std::optional<std::string>> socket_hop::read_whole(proxy_error& failure) {
  std::string whole;
  for (;;) {
    auto p = co_await read_piece();
    if (p.failure) {
      failure = *p.failure;
      co_return std::nullopt;
    }
    if (whole.size() + p.bytes.size() > max_whole_answer) {
      failure = proxy_error{error_kind::upstream_bad_response, "the upstream's response over the socket is too large"};
      co_return std::nullopt;
    }
    whole.append(p.bytes);
    if (p.done) co_return whole;
  }
}

void socket_hop::end(int status, const rewrite::token_usage& usage) { span_.end(status, usage); }

void socket_hop::fail(std::string_view reason) {
  if (!done_) socket_.give_up();
  span_.fail(reason);
}

}  // namespace gistproxy::proxy
