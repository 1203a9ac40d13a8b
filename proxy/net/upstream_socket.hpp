// The upstream leg of one client's WebSocket: a WebSocket client over one
// fresh upstream connection (plain or TLS, direct or through the egress
// proxy: upstream_pool makes it), kept for the client socket's life, so
// state the upstream keeps per socket (the Responses API's previous_response_id
// without store) means upstream what it meant to the client.
//
// It opens with the client's end-to-end fields, sends one text message at a
// time, and closes with a code. Once open, a reader keeps one read pending
// for the socket's life, so the upstream's pings are answered and its close
// is seen when it comes, also between two responses: a response's messages
// (from expect_response() to the message that ends it) go to read(); any
// other message, and the socket's end while no response is expected, go to
// the session's mailbox. Every wait is bounded: the handshake by its
// timeout; a silent upstream is pinged at half the idle timeout and dropped
// at it; a response's next message by read()'s deadline (an upstream that
// answers pings but sends nothing is not waited on for ever).
#pragma once

#include <boost/beast/websocket.hpp>
#include <boost/asio/experimental/channel.hpp>
#include <chrono>
#include <functional>
#include <memory>
#include <optional>
#include <string>

#include "proxy/net/beast.hpp"
#include "proxy/net/proxy_error.hpp"
#include "proxy/net/socket_mailbox.hpp"
#include "proxy/net/upstream_pool.hpp"

namespace gistproxy::proxy {

namespace websocket = beast::websocket;

class upstream_socket : public std::enable_shared_from_this<upstream_socket> {
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

  // One message read whole: text (and, when it is a JSON event, its SSE), or what ended the socket.
  struct message {
    std::string text;
    bool binary = false;
    bool is_event = false;       // a JSON object with a type: `sse` holds it as the stream reader reads it
    std::string sse;
    bool ends_response = false;  // response.completed, .failed, .incomplete or error
    error_code error;            // the socket ended or failed (beast::error::timeout: read()'s deadline)
    websocket::close_code closed_with = websocket::close_code::none;  // the upstream's close code, if it closed
  };
  // Starts the reader (once, after open() accepted). `dropped` is called for
  // a message outside a response that found no room in the mailbox.
  void start_reading(socket_mailbox& mailbox, std::function<void()> dropped);
  // The upstream's messages go to read() until one ends the response.
  void expect_response() { expecting_ = true; }
  // The response's next message; a timeout error after `within` without one
  // (the socket is then done: is_open() false).
  awaitable<message> read(std::chrono::milliseconds within);
  awaitable<error_code> send_text(std::string_view text);
  // Closes with `code` (at most once), detaches the mailbox and ends the reader.
  awaitable<void> close(websocket::close_code code);
  bool is_open() const;
  // A response left unread (a hop failed or was abandoned): what the
  // upstream sends next cannot be told from it, so the socket serves no more.
  void give_up() { broken_ = true; }
  bool given_up() const { return broken_; }
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

  awaitable<message> read_one();
  awaitable<void> read_loop(std::shared_ptr<upstream_socket> self);

  std::unique_ptr<upstream_connection> connection_;
  std::unique_ptr<plain_ws> plain_;
  std::unique_ptr<tls_ws> tls_;
  std::size_t max_message_;
  bool closed_ = false;
  websocket::close_code upstream_close_ = websocket::close_code::none;
  bool expecting_ = false;
  bool broken_ = false;
  socket_mailbox* mailbox_ = nullptr;
  std::function<void()> dropped_;
  asio::experimental::channel<void(error_code, message)> replies_;
};

}  // namespace gistproxy::proxy
