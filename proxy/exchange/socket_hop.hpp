// One hop over a transport's own upstream socket (the Responses API over
// WebSocket: proxy/net/upstream_socket): the hop's body goes as one
// `response.create` message, and the upstream's event messages come back as
// the SSE bytes the stream reader parses (rewrite/dialects/responses/
// responses_socket), until the event that ends the response. So the readers,
// the stream filter and the page-in loop run as they do over HTTP: the page-in
// hops go on the same socket, chained the way the HTTP path chains them.
#pragma once

#include <string>

#include "proxy/exchange/upstream_hop.hpp"
#include "proxy/net/upstream_socket.hpp"

namespace gistproxy::proxy {

class socket_hop final : public outgoing_hop {
 public:
  socket_hop(services& svc, request_context& ctx, upstream_socket& socket, int hop);
  ~socket_hop() override;  // a span nobody ended ends as abandoned

  awaitable<std::optional<proxy_error>> send(const std::string& body) override;
  const http::response_header<>& head() const override { return head_; }
  std::optional<std::uint64_t> content_length() const override { return std::nullopt; }
  awaitable<std::optional<std::string>> read_whole(proxy_error& failure) override;
  awaitable<piece> read_piece() override;
  void end(int status, const rewrite::token_usage& usage) override;
  void fail(std::string_view reason) override;

 private:
  services& svc_;
  upstream_socket& socket_;
  hop_span span_;
  bool done_ = false;  // the response's last event was read
  bool answered_ = false;  // the response's first event was read
  http::response_header<> head_;
  std::string piece_;  // the last piece's SSE bytes
};

}  // namespace gistproxy::proxy
