// One hop over HTTP/2 to the upstream, for a client-signed AWS request whose
// SigV4 signature covers an HTTP/2 pseudo-header (the AWS SDK for JavaScript
// signs :authority over HTTP/2): over HTTP/1.1 the upstream's canonical
// request could never be the client's. The request goes with the client's
// :authority and :path byte for byte, its end-to-end fields as received, its
// body untouched (gistproxy never rewrites a body the client signed), on a
// fresh connection (TLS with ALPN h2, or h2c with prior knowledge). An
// upstream that does not speak HTTP/2 fails the request (upstream_no_h2):
// never a silent fall back to HTTP/1.1, where the signature cannot verify.
#pragma once

#include <memory>
#include <string>

#include "proxy/exchange/upstream_hop.hpp"
#include "proxy/net/h2_connection.hpp"
#include "proxy/net/h2_upstream_connection.hpp"

namespace gistproxy::proxy {

// Whether this request must go upstream over HTTP/2: it came over HTTP/2
// (`pseudo`), the client signed it, and its signature covers a pseudo-header.
bool needs_h2_upstream(const request_context& ctx, const h2_pseudo_fields* pseudo);

class h2_upstream_hop final : public outgoing_hop {
 public:
  h2_upstream_hop(services& svc, upstream_pool& pool, request_context& ctx, client_watch& watch,
                  const h2_pseudo_fields& pseudo, int hop);
  ~h2_upstream_hop() override;  // a span nobody ended ends as abandoned

  awaitable<std::optional<proxy_error>> send(const std::string& body) override;
  const http::response_header<>& head() const override { return head_; }
  std::optional<std::uint64_t> content_length() const override { return length_; }
  awaitable<std::optional<std::string>> read_whole(proxy_error& failure) override;
  awaitable<piece> read_piece() override;
  void end(int status, const rewrite::token_usage& usage) override;
  void fail(std::string_view reason) override;

 private:
  h2_client_request upstream_request(std::size_t body_size) const;
  // An error for a read that failed (`ec`) or a stream that did (failure()).
  proxy_error failure_of(const error_code& ec, std::string_view while_doing) const;
  void take_head();

  services& svc_;
  upstream_pool& pool_;
  request_context& ctx_;
  client_watch& watch_;
  const h2_pseudo_fields& pseudo_;
  hop_span span_;
  std::unique_ptr<h2_upstream_connection> conn_;
  http::response_header<> head_;
  std::optional<std::uint64_t> length_;
  std::string piece_;  // the last piece handed out
};

}  // namespace gistproxy::proxy
