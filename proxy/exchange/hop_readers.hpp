// How an upstream answer reaches the client, one strategy per kind of answer:
//
//   relay_reader  any answer we do not intercept: bytes as they come (small
//                 bodies in one write); usage observed on the way
//   json_reader   a JSON answer of a request offering read_blob: read whole,
//                 its read_blob calls found; only the final answer is written,
//                 with the usage of every hop
//   stream_reader a streamed answer of such a request (SSE, or Bedrock's
//                 AWS event-stream): every hop's events go through the
//                 wire format's stream filter into one client stream
//
// The page-in loop (page_in_loop.hpp) drives a reader hop after hop; the
// relay is the degenerate case that never finds a call.
#pragma once

#include <memory>
#include <vector>

#include <nlohmann/json.hpp>

#include "proxy/exchange/client_writer.hpp"
#include "proxy/exchange/exchange_stats.hpp"
#include "proxy/exchange/upstream_hop.hpp"
#include "rewrite/stream_filter.hpp"
#include "rewrite/usage/usage_observer.hpp"

namespace gistproxy::proxy {

// What one hop's answer asked for.
struct hop_read {
  bool stop = false;                      // the client already has its whole answer, or the exchange failed
  std::vector<rewrite::blob_call> calls;  // the model's read_blob calls
  nlohmann::json response;                // the turn as that API's JSON response (for continue_conversation)
  // The hop's own usage, when the reader has it apart (a JSON answer);
  // otherwise it is the growth of the reader's sum over hops.
  std::optional<rewrite::token_usage> usage;
  static hop_read stopped() {
    hop_read r;
    r.stop = true;
    return r;
  }
};

class hop_reader {
 public:
  virtual ~hop_reader() = default;
  // Reads one hop's answer, writing to the client what may go now.
  virtual awaitable<hop_read> read(upstream_answer& hop, int hop_index) = 0;
  // `last` is the final answer: write what the client still lacks, its
  // read_blob calls (if any: the hop limit was reached) taken out.
  virtual awaitable<void> finish(hop_read& last) = 0;
  // A later hop failed before its answer started.
  virtual awaitable<void> fail(const proxy_error& e) = 0;
  // Before the next hop is sent: false when the client is gone (no hop then).
  virtual awaitable<bool> before_next_hop() { co_return true; }
  // Sent now and then while the next hop is awaited; empty when nothing can be.
  virtual std::string keepalive() const { return {}; }
  // Usage as the client was told it, summed over hops.
  virtual rewrite::token_usage usage() const = 0;
  // Whether the client may already have been shown part of the hop `got`
  // read: a hop the client saw nothing of may be asked again instead of
  // continued (page_in_loop).
  virtual bool showed(const hop_read& got) const = 0;
};

// What the readers share: the exchange's writer and stats, and the API.
struct reader_env {
  client_writer& out;
  exchange_stats& stats;
  const rewrite::wire_format* wire;  // null for requests outside the known APIs (relay only)
  std::string tool;                 // read_blob's name
  // The request members the API echoes in its answer, as the client sent
  // them (wire_format::echoed_members): restored in the final answer.
  nlohmann::json echoed = nlohmann::json::object();
};

std::unique_ptr<hop_reader> make_relay_reader(reader_env env);
std::unique_ptr<hop_reader> make_json_reader(reader_env env);
// `filter` is the wire format's stream filter for the offered read_blob (never null).
std::unique_ptr<hop_reader> make_stream_reader(reader_env env, std::unique_ptr<rewrite::stream_filter> filter,
                                              rewrite::stream_transport transport);

// What an answer's body is (JSON, SSE or other), from its head.
rewrite::usage_observer::body_kind body_kind_of(const http::response_header<>& h);

// Limits shared by the readers and the choice between them.
inline constexpr std::size_t max_pending_event = 16u << 20;         // no API sends one SSE event this large

}  // namespace gistproxy::proxy
