// What one request's phases know, grouped by the phase that fills it in.
// Each phase reads what earlier phases wrote and writes only its own group.
#pragma once

#include <chrono>
#include <optional>
#include <string>
#include <vector>

#include "proxy/aws/aws_signing.hpp"
#include "proxy/exchange/client_writer.hpp"
#include "proxy/exchange/request_controls.hpp"
#include "rewrite/control_group.hpp"
#include "rewrite/count_envelope.hpp"
#include "rewrite/handling.hpp"
#include "rewrite/json/splice.hpp"
#include "rewrite/prompt_cache/prefix_tracker.hpp"
#include "rewrite/turn_memory/turn_reuse.hpp"
#include "rewrite/cost/ledger.hpp"
#include "rewrite/cost/prices.hpp"
#include "rewrite/dialects/responses/responses_stored.hpp"
#include "rewrite/endpoint.hpp"
#include "rewrite/upstream_route.hpp"
#include "telemetry/live_view.hpp"
#include "telemetry/span.hpp"
#include "telemetry/trace_context.hpp"

namespace gistproxy::proxy {

// receive: who is asking, in which API, for what.
struct received {
  explicit received(client_request& r) : request(r) {}
  client_request& request;
  const rewrite::endpoint* endpoint = nullptr;  // null: not an API we know (forwarded untouched)
  std::string_view family;                      // the upstream family it goes to (routing.cpp)
  std::string_view local_prefix;                // the target's start its upstream URL's path replaces (--compatible)
  bool count_tokens = false;                    // a token count: rewritten as its turn, never intercepted
  // A count's wrapping and its body as sent, while the phases read the
  // wrapped request in its place (count_envelope.cpp).
  std::optional<rewrite::count_envelope> count_wrapping;
  std::string count_body;
  std::optional<rewrite::credential_kind> misdirected;  // a credential its upstream must not see: refused
  std::string tenant;                           // with an endpoint: whose blobs and turns (tenant.cpp)
  // The credential that named the tenant and the endpoint whose fields read
  // it: a view into the request's fields or target, which receive leaves as
  // they are (tenant.cpp reads it again only if a count's unwrapping changed
  // the endpoint).
  std::string_view tenant_credential;
  const rewrite::endpoint* tenant_credential_of = nullptr;
  std::optional<rewrite::request_facts> facts;  // set when the body parsed
  std::string_view api = "other";               // metric label
  std::string_view source = "proxy";            // metric label: proxy, or api (the offload service, proxy/service/)
  std::optional<telemetry::trace_parent> client_parent;
  // The conversation a body we read belongs to (receive.cpp): from its
  // opening, the credential and the chain of turns it extends, never from
  // the client's traceparent (that names the trace alone). Without a body we
  // read, the request's own trace id.
  telemetry::trace_id conversation;
  bool retry = false;  // the conversation's latest turn sent again: the same turn
  // The body's top-level members, for the phases that read a few of them
  // (stored_state.cpp, forward's echoed members): one walk of the body.
  rewrite::top_level_memo top;
  // The client body's prefix, made once by receive, read by the prefix check.
  std::optional<rewrite::prefix_fingerprint> client_prefix;
  std::uint64_t bytes_in = 0;
  bool body_encoded = false;  // a Content-Encoding we could not decode: forwarded as is
  aws_auth aws = aws_auth::not_aws;  // how an AWS endpoint's request is authenticated (aws_signing.hpp)
  request_controls controls;         // x-gistproxy-bypass / -threshold (request_controls.hpp)
  // A body we decoded to inspect, as the client sent it, with its
  // Content-Encoding: the control group forwards these bytes.
  std::optional<std::string> sent_body;
  std::string sent_encoding;
  rewrite::experiment_group group = rewrite::experiment_group::treated;
  // May gistproxy touch the body, and why (rewrite/handling.hpp): decided at
  // receive's end, read by every later phase and by the offload service.
  rewrite::handling handling;
};

// rewrite: the body to forward and whether read_blob is on offer.
struct rewritten {
  std::optional<std::string> body;  // when it differs from the client's
  std::string intercept_tool;       // read_blob's name when the request offers it (else empty)
  bool tool_added = false;          // gistproxy added read_blob's definition (not the client's own)
  std::uint64_t turn = 0;           // this request's turn in its trace (paging churn)
  std::uint64_t tokens_saved = 0;   // estimated tokens the offloads removed
  std::uint64_t tool_tokens = 0;    // estimated tokens of the read_blob definition added
  rewrite::request_changes changes;  // the same, split as the ledger prices them (new, repeated)
  rewrite::planned_break planned = rewrite::planned_break::none;  // what this turn changed on purpose (prefix breaks)
};

// The conversation's previous turn, as the turn memory remembers it, and
// this turn's record for the next (turn_reuse.cpp). Filled in by receive,
// added to by rewrite and the prefix check, filed by exchange::run's end.
struct recalled {
  // Made by receive for every body its wire format reads (read_body), a plain
  // one when no previous turn helps and none is remembered: every phase
  // after it that reads the body (facts set) walks through it.
  std::optional<rewrite::turn_reuse> reuse;
};

// forward and page in: what the upstream hops cost and reported.
struct upstream_tally {
  int hops = 0;                              // extra hops for read_blob calls
  // Handles the model read back whole (or most of them), in the order it
  // did: --record keeps them so replay decides churn as this proxy did.
  std::vector<std::string> read_backs;
  std::chrono::nanoseconds wait{0};          // time spent waiting on the upstream
  std::string_view protocol;                 // "HTTP/2" when the hops went over HTTP/2 (h2_upstream_hop); empty: HTTP/1.1
  rewrite::token_usage usage;                // as the client was told (summed over hops)
  // Each hop's own usage, the client's request first (the ledger's "with"):
  // at most max_page_in_hops + 1 entries.
  std::vector<rewrite::token_usage> hop_usage;
  std::uint64_t paged_in_tokens = 0;         // estimated tokens read_blob answers put back
};

// The Responses API's stored state (stored_state.hpp): a read of it, what
// the id the client holds maps to, and the ids this turn's hops got.
struct stored_state {
  std::optional<rewrite::stored_read> read;  // the request reads (or deletes) stored state
  std::optional<rewrite::stored_turn> turn;  // the read's turn as gistproxy kept it (none: one it does not know)
  std::string client_id;                     // the id the read names
  std::size_t items_limit = 20;              // an input_items read: the client's page size
  bool chains = false;                       // a turn whose previous_response_id names a kept turn
  std::string previous_sent;                 // ... kept under another id: the one the client sent (echoed back)
  bool streamed = false;                     // the answer is a stream (it announced the first hop's id)
  std::string first_id, last_id;             // the hops' response ids
  std::vector<std::string> hop_items, read_calls;
  bool answered = false;                     // the final answer was read
};

// What a connection's last request derived that its next one will likely
// derive again: an agent keeps one connection for one conversation and one
// key. Entries are keyed by the exact input bytes, so a hit gives exactly what
// recomputing would; inputs larger than `limit` are not kept (their hash is
// small next to the rest of such a request's work).
struct connection_memo {
  static constexpr std::size_t limit = 4096;
  std::string api_key, tenant;
  std::string conversation_key;
  telemetry::trace_id trace;
  std::string priced_model;  // the last model looked up in the price table, and its price
  std::optional<rewrite::price_match> price;
};

// What the live view is told of this request (live_feed): only what is new
// to the conversation, capped per request; the rest is counted.
struct live_notes {
  std::uint64_t offloads = 0, tokens_before = 0, tokens_after = 0;
  std::uint64_t kept_inline = 0;  // outputs kept inline for the conversation's churn
  std::vector<telemetry::live::offload_detail> new_offloads;
  std::uint64_t new_offloads_dropped = 0;
  std::vector<telemetry::live::page_in_detail> page_ins;
  std::uint64_t page_ins_dropped = 0;
  telemetry::live::text_marks marks;  // what keep_text cut or repaired of the strings above
};

struct request_context {
  request_context(client_request& r, client_channel& channel, bool keep_alive, bool record, connection_memo& m)
      : in(r), out(channel, r, keep_alive, record), memo(m), protocol(channel.protocol_name()) {}

  received in;
  recalled turns;
  rewritten rw;
  upstream_tally upstream;
  stored_state stored;
  live_notes live;
  client_writer out;  // respond: every byte to the client, and what it got
  connection_memo& memo;
  telemetry::span span;  // gistproxy.request, ended by finish
  rewrite::ledger_entry ledger;  // what it saved, as finish counted it (the live view's turn)
  std::chrono::steady_clock::time_point started = std::chrono::steady_clock::now();
  std::string_view protocol;  // the channel's, when its requests do not say it (exchange_finish.cpp)

  const std::string& forwarded_body() const { return rw.body ? *rw.body : in.request.body(); }
  bool offers_read_blob() const { return !rw.intercept_tool.empty(); }
};

}  // namespace gistproxy::proxy
