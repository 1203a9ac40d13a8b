// The span of one upstream hop, whatever carries it (the pool's HTTP
// connection, an HTTP/2 upstream stream, a WebSocket's upstream socket): its
// GenAI names, its hop number and group, started under the request's span;
// ended once, with the upstream's status and usage or as failed.
#pragma once

#include <string_view>

#include "proxy/exchange/request_context.hpp"
#include "proxy/runtime/services.hpp"

namespace gistproxy::proxy {

class hop_span {
 public:
  // Started as a child of the request's span, named for the endpoint's
  // operation and model; `hop` counts from 0 (the client's own request).
  hop_span(services& svc, const request_context& ctx, int hop);
  hop_span(const hop_span&) = delete;
  hop_span& operator=(const hop_span&) = delete;

  telemetry::span& get() { return span_; }
  telemetry::span* operator->() { return &span_; }
  bool ended() const { return ended_; }
  // Ends it with the upstream's status (a 5xx fails it) and usage; once.
  void end(int status, const rewrite::token_usage& usage);
  // Ends it as failed with `reason` (also its error.type); once.
  void fail(std::string_view reason);

 private:
  services& svc_;
  telemetry::span span_;
  bool ended_ = false;
};

}  // namespace gistproxy::proxy
