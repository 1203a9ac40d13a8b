// The SSE event parser feeding each API's stream filter, the stream split at
// fuzzed points; then the hop's end and the turn's end. Never a throw.
#include <memory>

#include "rewrite/endpoint.hpp"
#include "rewrite/stream_filter.hpp"
#include "rewrite/sse/assemble.hpp"
#include "rewrite/sse/event_parser.hpp"
#include "tests/fuzz/fuzz_input.hpp"

using namespace gistproxy::rewrite;

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
  gistproxy::fuzz::input in(data, size);
  const std::size_t split = 1 + in.byte() % 64;
  const std::string_view stream = in.rest();
  // Every dialect's filter and assembly: a new API is fuzzed as soon as it is registered.
  for (const auto* api : all_endpoints()) {
    auto filter = api->wire().make_stream_filter("read_blob");
    if (!filter) continue;
    sse::event_parser parser;
    std::string out;
    for (std::size_t at = 0; at < stream.size(); at += split)
      parser.feed(stream.substr(at, split), [&](const sse::event& e) { out += filter->on_event(e); });
    auto end = filter->end_hop();
    out += filter->finish();
    filter->usage();
    api->wire().assemble_stream(stream);
  }
  return 0;
}
