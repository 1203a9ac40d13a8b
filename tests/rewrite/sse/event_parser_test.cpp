#include "rewrite/sse/event_parser.hpp"

#include <catch2/catch.hpp>
#include <vector>

using namespace gistproxy::rewrite::sse;

namespace {

struct seen {
  std::string name, data, raw;
  bool comment;
};

std::vector<seen> feed_in_pieces(const std::string& stream, std::size_t piece) {
  event_parser p;
  std::vector<seen> out;
  for (std::size_t i = 0; i < stream.size(); i += piece)
    p.feed(std::string_view(stream).substr(i, piece), [&](const event& e) {
      out.push_back({std::string(e.name), std::string(e.data), std::string(e.raw), e.comment_only});
    });
  return out;
}

}  // namespace

TEST_CASE("events are assembled whatever the chunk boundaries") {
  std::string stream =
      "event: message_start\ndata: {\"a\":1}\n\n"
      ": keepalive\n\n"
      "data: line1\ndata: line2\n\n"
      "event: ping\r\ndata: {}\r\n\r\n"
      "data: [DONE]\n\n";
  auto piece = GENERATE(1u, 2u, 3u, 7u, 1000u);
  auto events = feed_in_pieces(stream, piece);
  REQUIRE(events.size() == 5);
  CHECK(events[0].name == "message_start");
  CHECK(events[0].data == "{\"a\":1}");
  CHECK(events[0].raw == "event: message_start\ndata: {\"a\":1}\n\n");
  CHECK(events[1].comment);
  CHECK(events[2].data == "line1\nline2");
  CHECK(events[3].name == "ping");
  CHECK(events[3].raw == "event: ping\r\ndata: {}\r\n\r\n");
  CHECK(events[4].data == "[DONE]");
  std::string joined;
  for (auto& e : events) joined += e.raw;
  CHECK(joined == stream);  // raw slices cover every byte
}

TEST_CASE("an incomplete event stays pending") {
  event_parser p;
  int count = 0;
  p.feed("data: part", [&](const event&) { ++count; });
  CHECK(count == 0);
  CHECK(p.pending() == "data: part");
  p.feed("ial\n\n", [&](const event& e) {
    ++count;
    CHECK(e.data == "partial");
  });
  CHECK(count == 1);
}

TEST_CASE("lines end at a lone CR a lone LF or CRLF whichever comes first in every piece size") {
  // A CR ends a line even when an LF comes later in the same bytes (the line
  // end is the first of either), and a CR at a piece's end waits for an LF.
  std::string stream =
      "data: a\rdata: b\n\r\n"
      "event: x\r\rdata: c\r\ndata: d\n\n"
      "data: e\r\n\r"
      "data: f\n\n";
  auto piece = GENERATE(1u, 2u, 3u, 5u, 8u, 1000u);
  auto events = feed_in_pieces(stream, piece);
  REQUIRE(events.size() == 5);
  CHECK(events[0].data == "a\nb");
  CHECK(events[0].raw == "data: a\rdata: b\n\r\n");
  CHECK(events[1].name == "x");  // its blank line after "event: x" is CR alone
  CHECK(events[2].data == "c\nd");
  CHECK(events[3].data == "e");
  CHECK(events[3].raw == "data: e\r\n\r");
  CHECK(events[4].data == "f");
}
