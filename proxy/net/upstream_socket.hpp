// The upstream leg of one client's WebSocket: a WebSocket client over one
// fresh upstream connection (plain or TLS, direct or through the egress
// proxy: upstream_pool makes it), kept for the client socket's life, so
// state the upstream keeps per socket (the Responses API's previous_response_id
// without store) means upstream what it meant to the client.
//
// It opens with the client's end-to-end fields, sends and reads one text
// message at a time, and closes with a code. Every wait is bounded: the
// handshake by its timeout; after it, a silent upstream is pinged at half
// the idle timeout and dropped at the idle timeout (a live one answers the
// pings, so a long generation is never cut short).
#pragma once

#include <boost/beast/websocket.hpp>
#include <chrono>
#include <memory>
#include <optional>
#include <string>

#include "proxy/net/beast.hpp"
#include "proxy/net/proxy_error.hpp"
#include "proxy/net/upstream_pool.hpp"

namespace gistproxy::proxy {

namespace websocket = beast::websocket;

class upstream_socket {
 public:
  // `max_message`: the largest message read from the upstream.
  upstream_socket(std::unique_ptr<upstream_connection> connection, std::size_t max_message);
  ~upstream_socket();

  // How the upgrade went: accepted (status 101 and the fields of its
  // answer), refused (the upstream's status, fields and body, for the client
  // to see at once), or failed before an answer (error).
  struct opening {
    int status = 0;
    http::fields fields;
    std::string body;
    std::optional<proxy_error> error;
    bool accepted() const { return status == 101 && !error; }
  };
  // `host`: the Host to send; `target`: the upstream path and query;
  // `fields`: the client's end-to-end fields (the handshake's own are Beast's).
  awaitable<opening> open(std::string_view host, std::string_view target, const http::fields& fields,
                          std::chrono::milliseconds handshake_timeout, std::chrono::milliseconds idle_timeout);

  // One message read whole: text, or what ended the socket.
  struct message {
    std::string text;
    bool binary = false;
    error_code error;                                // the socket ended or failed
    websocket::close_code closed_with = websocket::close_code::none;  // the upstream's close code, if it closed
  };
  awaitable<message> read();
  awaitable<error_code> send_text(std::string_view text);
  // Closes with `code` (at most once); a failed close just drops the socket.
  awaitable<void> close(websocket::close_code code);
  bool is_open() const;
  // The code the upstream closed with, once a read met its close; none otherwise.
  websocket::close_code upstream_close() const { return upstream_close_; }

 private:
  using plain_ws = websocket::stream<tcp_socket&>;
  using tls_ws = websocket::stream<beast::ssl_stream<tcp_socket>&>;
  // Calls f with the WebSocket in use; both branches return the same type.
  template <class F>
  auto with_ws(F&& f) {
    return tls_ ? f(*tls_) : f(*plain_);
  }

  std::unique_ptr<upstream_connection> connection_;
  std::unique_ptr<plain_ws> plain_;
  std::unique_ptr<tls_ws> tls_;
  std::size_t max_message_;
  bool closed_ = false;
  websocket::close_code upstream_close_ = websocket::close_code::none;
};

}  // namespace gistproxy::proxy
