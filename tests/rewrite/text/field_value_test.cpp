#include "rewrite/text/field_value.hpp"

#include <catch2/catch.hpp>

using namespace gistproxy::rewrite::text;

TEST_CASE("field values: only SP and HTAB around a value are its optional whitespace") {
  CHECK(trimmed(" \tBearer k \t") == "Bearer k");
  CHECK(trimmed("a b") == "a b");
  CHECK(trimmed("\r\nk\n") == "\r\nk\n");  // CR and LF are no OWS: a value is never widened to them
  CHECK(trimmed("") == "");
  CHECK(blank(""));
  CHECK(blank(" \t "));
  CHECK_FALSE(blank(" x "));
  CHECK_FALSE(blank("\n"));
}
