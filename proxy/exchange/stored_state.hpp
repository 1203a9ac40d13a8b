// The exchange's side of the Responses API's stored state
// (rewrite/dialects/responses/responses_stored.hpp): the upstream keeps every
// page-in hop, and the client must only ever see its own turn. Its steps, in
// the order exchange.cpp runs them:
//
//   receive      read_stored: a GET or DELETE of stored state is recognised,
//                its tenant named (as a POST of its family would be), and
//                the id the client holds becomes the one the turn's final
//                state is kept under in its target; map_previous_response
//                does the same in a later turn's previous_response_id (its
//                answer echoes the client's own back)
//   forward      the page-in loop tells note_hop of each hop's answer;
//                make_stored_reader shows a read's answer as the client's
//   after forward remember_stored keeps what the turn changed (stored_turns)
//
// A read of a turn gistproxy never saw or has forgotten (a restart, another
// replica) is relayed as sent; one that shows read_blob is counted
// (rewrite_failures{reason="stored_unmapped"}), as is a mapped answer whose
// shape could not be followed.
#pragma once

#include <memory>

#include "proxy/exchange/hop_readers.hpp"
#include "proxy/exchange/request_context.hpp"
#include "proxy/runtime/services.hpp"

namespace gistproxy::proxy {

// Part of receive: a read of stored state (the target then names the stored
// id), or a turn's previous_response_id (in its decoded body, before anything
// reads it).
void read_stored(services& svc, request_context& ctx);
void map_previous_response(services& svc, request_context& ctx);
// One hop's answer, read; `continued`: its items went on to the next hop
// (else it is the final answer).
void note_hop(request_context& ctx, const hop_read& got, bool continued);
void remember_stored(services& svc, request_context& ctx);

// The reader for a read of stored state (ctx.stored.read set); null when the
// answer is relayed as sent.
std::unique_ptr<hop_reader> make_stored_reader(services& svc, request_context& ctx, const upstream_answer& first,
                                               reader_env env);

}  // namespace gistproxy::proxy
