// The one page-in loop, for JSON and streamed answers alike: read a hop's
// answer through the reader; while the model called read_blob and hops are
// left, answer the calls from the blob store, continue the conversation with
// them and ask the upstream again (the last hop forbids tool calls). The
// client only ever sees one answer, usage summed over hops.
#pragma once

#include <functional>
#include <memory>
#include <string>

#include "proxy/exchange/hop_readers.hpp"

namespace gistproxy::proxy {

struct page_in_plan {
  const rewrite::wire_format* wire = nullptr;  // continues the conversation
  std::string_view tool;                       // read_blob's name
  int max_hops = 0;                            // --max-page-in-hops
};

// Told of each hop's answer once the loop knows what becomes of it:
// `continued` (its items went on to the next hop) or the final answer.
using hop_noted = std::function<void(const hop_read& got, bool continued)>;

// Drives `reader` from the first hop's answer (already sent by `source`) to
// the final answer; returns the number of extra hops made.
awaitable<int> run_page_in_loop(hop_source& source, hop_reader& reader, upstream_answer& first,
                                const std::string& first_body, const page_in_plan& plan, exchange_stats& stats,
                                const hop_noted& noted = {});

}  // namespace gistproxy::proxy
