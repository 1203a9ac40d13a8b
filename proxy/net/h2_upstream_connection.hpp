// One HTTP/2 connection to an upstream carrying one request at a time (and,
// once one ended cleanly, the next: upstream_pool keeps it idle): the
// socket side of h2_client_connection (which does the framing) over an
// upstream_connection the pool made (TLS with ALPN h2, or h2c with prior
// knowledge). It exists for requests whose SigV4 signature covers an HTTP/2
// pseudo-header: they can only be forwarded over HTTP/2.
//
// Every wait is bounded by the connection's socket deadline, which the
// caller sets (the upstream timeout for the head, the stream idle timeout for
// each piece of the body); what the upstream can make it hold is bounded by
// h2_client_limits (a response head, the body bytes not yet consumed).
#pragma once

#include <memory>
#include <optional>
#include <string>

#include "proxy/net/h2_client_connection.hpp"
#include "proxy/net/upstream_pool.hpp"

namespace gistproxy::proxy {

class h2_upstream_connection final : private h2_client_events {
 public:
  h2_upstream_connection(std::unique_ptr<upstream_connection> connection, const h2_client_limits& limits);
  h2_upstream_connection(const h2_upstream_connection&) = delete;
  h2_upstream_connection& operator=(const h2_upstream_connection&) = delete;

  upstream_connection& socket() { return *connection_; }

  // Sends the request (its whole body) and reads until its response head
  // came or the stream failed. An error: the socket failed or timed out.
  awaitable<error_code> send(const h2_client_request& request, std::string body);
  // Reads until some body bytes came, the body ended or the stream failed.
  awaitable<error_code> read_more();
  // The bytes of the body read so far; hand them on, then consume().
  const std::string& body() const { return body_; }
  void consume();

  // The stream ended cleanly and the connection can carry another request.
  bool reusable() const { return ended_ && !failure_ && h2_.can_submit() && h2_.streams_open() == 0; }

  // What the stream came to.
  std::optional<unsigned> status() const { return status_; }
  const h2_fields& fields() const { return fields_; }
  bool ended() const { return ended_; }
  // Why it failed (the metric label and the log's), when it did.
  std::optional<std::string> failure() const { return failure_; }
  // The upstream answered the connection preface in HTTP/1.x: it does not
  // speak HTTP/2 (h2c with prior knowledge).
  bool answered_http1() const { return answered_http1_; }
  // Nothing came back at all (an HTTP/2 server sends its SETTINGS first).
  bool heard() const { return heard_; }
  // The stream is given up (the client left): RST_STREAM, best effort.
  void abandon();

 private:
  // Writes what the connection has to send, then reads once while `more`.
  template <class More>
  awaitable<error_code> pump(More more);
  awaitable<error_code> flush();

  void response_head(std::int32_t stream, unsigned status, h2_fields fields) override;
  void response_data(std::int32_t stream, std::string_view bytes) override;
  void response_end(std::int32_t stream) override;
  void stream_failed(std::int32_t stream, h2_client_failure why, std::uint32_t code) override;
  void drained(std::int32_t) override {}
  void connection_ended(std::uint32_t code) override;
  void callback_failed() override;

  std::unique_ptr<upstream_connection> connection_;
  h2_client_connection h2_;
  std::int32_t stream_ = 0;
  std::optional<unsigned> status_;
  h2_fields fields_;
  std::string body_;
  bool ended_ = false;
  std::optional<std::string> failure_;
  bool heard_ = false;  // some bytes came from the upstream
  bool answered_http1_ = false;
  std::string out_;
  std::unique_ptr<char[]> in_;
};

}  // namespace gistproxy::proxy
