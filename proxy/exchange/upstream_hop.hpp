// One upstream request and its answer. `upstream_hop` builds the request from
// the client's (end-to-end fields, Host, traceparent), acquires a pooled
// connection, sends, reads the head (one retry on a stale pooled connection),
// then gives the body whole or piece by piece. It owns the hop's span and
// ends it in one place; its connection goes back to the pool only when the
// answer ended cleanly.
//
// The readers and the page-in loop see hops through `upstream_answer` and
// `hop_source`, so they can be tested against fakes without sockets.
#pragma once

#include <memory>
#include <optional>
#include <string>
#include <vector>

#include "proxy/exchange/hop_span.hpp"
#include "proxy/exchange/request_context.hpp"
#include "proxy/net/checked_parser.hpp"
#include "proxy/net/upstream_pool.hpp"
#include "proxy/runtime/services.hpp"
#include "rewrite/content_decoder.hpp"

namespace gistproxy::proxy {

class client_watch;

// An answer read whole (a JSON answer inspected for read_blob calls) is held
// in memory: past this, compressed or not, it is refused, never relayed
// uninspected and never allowed to exhaust memory. No API answers this much.
inline constexpr std::uint64_t max_whole_answer = 64ull << 20;

class upstream_answer {
 public:
  virtual ~upstream_answer() = default;
  virtual const http::response_header<>& head() const = 0;
  int status() const { return int(head().result_int()); }
  virtual std::optional<std::uint64_t> content_length() const = 0;
  // The whole body, or nullopt with `failure` set.
  virtual awaitable<std::optional<std::string>> read_whole(proxy_error& failure) = 0;
  struct piece {
    std::string_view bytes;  // valid until the next call
    bool done = false;       // the body ended with this piece
    std::optional<proxy_error> failure;
  };
  virtual awaitable<piece> read_piece() = 0;
  // Ends the hop's span with the status and usage it reported.
  virtual void end(int status, const rewrite::token_usage& usage) = 0;
  // Ends the hop's span as failed; the connection is dropped.
  virtual void fail(std::string_view reason) = 0;
};

// A hop not yet sent: over the upstream pool (upstream_hop) or over a
// transport's own upstream socket (socket_hop).
class outgoing_hop : public upstream_answer {
 public:
  // Sends the request and reads the answer's head; nullopt on success.
  virtual awaitable<std::optional<proxy_error>> send(const std::string& body) = 0;
};

// Where hops come from: the upstream (or a fake), and the blob store that
// answers read_blob calls between them.
class hop_source {
 public:
  virtual ~hop_source() = default;
  struct sent {
    std::unique_ptr<upstream_answer> answer;  // null on failure
    std::optional<proxy_error> failure;       // client_disconnected when the client left meanwhile
  };
  // Sends `body` as page-in hop `hop` (1, 2, ...). While it waits for the
  // answer's head, `keepalive` (when not empty) is sent to the client every
  // --stream-keepalive.
  virtual awaitable<sent> send(const std::string& body, int hop, std::string keepalive) = 0;
  virtual awaitable<std::vector<rewrite::call_result>> resolve(const std::vector<rewrite::blob_call>& calls) = 0;
  // After resolve: when those read-backs made the conversation keep outputs
  // inline, the client's turn with them inline, to send instead of a
  // continuation (turn_with_rereads_inline); else nullopt.
  virtual awaitable<std::optional<std::string>> turn_with_rereads_inline() { co_return std::nullopt; }
};

// Whether this request's answers are read for read_blob calls rather than
// relayed: it offers read_blob and its answers have a body (or they show
// the Responses API's stored state, which must read as the client's own). Each hop then
// asks for codings gistproxy decodes; forward picks its reader by it (and
// the first answer's status).
bool intercepts_answers(const services& svc, const request_context& ctx);

class upstream_hop final : public outgoing_hop {
 public:
  upstream_hop(services& svc, upstream_pool& pool, request_context& ctx, client_watch& watch, int hop);
  ~upstream_hop() override;  // a span nobody ended ends as abandoned

  awaitable<std::optional<proxy_error>> send(const std::string& body) override;

  const http::response_header<>& head() const override;
  std::optional<std::uint64_t> content_length() const override { return length_; }
  awaitable<std::optional<std::string>> read_whole(proxy_error& failure) override;
  awaitable<piece> read_piece() override;
  void end(int status, const rewrite::token_usage& usage) override;
  void fail(std::string_view reason) override;

 private:
  void release_if_clean(bool clean);
  void note_framing();
  // Sets up decoding of a compressed answer when interception is armed; an
  // error when the answer is in a coding that cannot be read.
  std::optional<proxy_error> start_decoding();
  awaitable<piece> read_raw_piece();
  piece corrupt_answer();

  services& svc_;
  upstream_pool& pool_;
  request_context& ctx_;
  client_watch& watch_;
  hop_span span_;
  std::unique_ptr<upstream_connection> conn_;
  std::unique_ptr<checked_response_parser<http::empty_body>> head_;  // Beast parsers do not move
  std::unique_ptr<checked_response_parser<http::string_body>> whole_;
  std::unique_ptr<checked_response_parser<http::buffer_body>> stream_;
  // Not zero-filled: an open stream's memory is only the pages its events touch.
  std::unique_ptr<char[]> buffer_;
  std::optional<std::uint64_t> length_;
  const bool decode_answer_;    // interception armed: a compressed answer is decoded
  bool framed_exactly_ = false;  // the answer's framing marks its end: the connection may be reused
  std::unique_ptr<rewrite::content_decoder> decoder_;
  std::string decoded_;  // the last decoded piece
  bool raw_done_ = false;
};

}  // namespace gistproxy::proxy
