// Stream splicing across APIs: usage summed over hops, and when a hop counts
// as complete. Each API's own filter is tested in its folder.
#include <catch2/catch.hpp>
#include <nlohmann/json.hpp>

#include "rewrite/endpoint.hpp"
#include "rewrite/json/splice.hpp"
#include "rewrite/stream_filter.hpp"

using namespace gistproxy::rewrite;
using njson = nlohmann::json;

TEST_CASE("usage numbers add up, nested details included") {
  njson a = {{"prompt_tokens", 10}, {"details", {{"cached", 2}}}};
  add_numbers(a, {{"prompt_tokens", 5}, {"details", {{"cached", 1}}}, {"extra", 3}});
  CHECK(a == njson({{"prompt_tokens", 15}, {"details", {{"cached", 3}}}, {"extra", 3}}));
}

TEST_CASE("a hop counts as complete only when its own end-of-turn event arrived") {
  for (std::string_view api : {"chat", "responses"}) {
    auto f = endpoint_named(api)->wire().make_stream_filter("read_blob");
    sse::event_parser parser;
    auto feed = [&](const std::string& s) { parser.feed(s, [&](const sse::event& e) { f->on_event(e); }); };
    if (api == "chat") {
      feed("data: {\"id\":\"x\",\"choices\":[{\"index\":0,\"delta\":{},\"finish_reason\":\"tool_calls\"}]}\n\n");
      CHECK(f->end_hop().complete);
      feed("data: {\"id\":\"x\",\"choices\":[{\"index\":0,\"delta\":{\"content\":\"cut\"},\"finish_reason\":null}]}\n\n");
    } else {
      feed("event: response.completed\ndata: {\"type\":\"response.completed\",\"response\":{\"id\":\"r\",\"output\":[]}}\n\n");
      CHECK(f->end_hop().complete);
      feed("event: response.output_text.delta\ndata: {\"type\":\"response.output_text.delta\",\"output_index\":0,\"delta\":\"cut\"}\n\n");
    }
    CHECK_FALSE(f->end_hop().complete);  // the earlier hop's end does not count for this one
  }
}

