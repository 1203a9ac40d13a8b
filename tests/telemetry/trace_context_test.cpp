#include "telemetry/trace_context.hpp"

#include <catch2/catch.hpp>

using namespace gistproxy::telemetry;

TEST_CASE("a valid traceparent header is parsed into trace id, parent and flags") {
  auto tp = parse_traceparent("00-4bf92f3577b34da6a3ce929d0e0e4736-00f067aa0ba902b7-01");
  REQUIRE(tp);
  CHECK(tp->trace.hex() == "4bf92f3577b34da6a3ce929d0e0e4736");
  CHECK(tp->parent.hex() == "00f067aa0ba902b7");
  CHECK(tp->flags == 1);
  CHECK(format_traceparent(tp->trace, tp->parent, tp->flags) ==
        "00-4bf92f3577b34da6a3ce929d0e0e4736-00f067aa0ba902b7-01");
}

TEST_CASE("invalid traceparent headers are rejected") {
  auto bad = GENERATE(as<std::string>{},
                      "",                                                          // empty
                      "00-00000000000000000000000000000000-00f067aa0ba902b7-01",   // zero trace id
                      "00-4bf92f3577b34da6a3ce929d0e0e4736-0000000000000000-01",   // zero parent
                      "ff-4bf92f3577b34da6a3ce929d0e0e4736-00f067aa0ba902b7-01",   // forbidden version
                      "00-4BF92F3577B34DA6A3CE929D0E0E4736-00f067aa0ba902b7-01",   // uppercase
                      "00-4bf92f3577b34da6a3ce929d0e0e4736-00f067aa0ba902b7-01-x", // v00 with extra data
                      "00_4bf92f3577b34da6a3ce929d0e0e4736-00f067aa0ba902b7-01");  // wrong separator
  CHECK_FALSE(parse_traceparent(bad));
}

TEST_CASE("a future traceparent version with extra fields is accepted") {
  CHECK(parse_traceparent("01-4bf92f3577b34da6a3ce929d0e0e4736-00f067aa0ba902b7-01-extra"));
}

TEST_CASE("the derived trace id depends only on the conversation key") {
  using namespace std::literals;
  auto a = derive_trace_id("chat\nsystem\0hello"sv);
  CHECK(a == derive_trace_id("chat\nsystem\0hello"sv));
  CHECK_FALSE(a == derive_trace_id("chat\nsystem\0hello!"sv));
  CHECK_FALSE(a == derive_trace_id("chat\nsystem!\0hello"sv));
  CHECK(a.valid());
  CHECK(a.hex().size() == 32);
}

TEST_CASE("random ids are never zero and differ") {
  random_id_generator ids;
  auto a = ids.new_span_id(), b = ids.new_span_id();
  CHECK(a.valid());
  CHECK_FALSE(a == b);
  CHECK(ids.new_trace_id().hex().size() == 32);
}
