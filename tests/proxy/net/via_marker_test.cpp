#include "proxy/net/via_marker.hpp"

#include <catch2/catch.hpp>
#include <regex>

using gistproxy::proxy::via_marker;
namespace http = boost::beast::http;

namespace {

http::fields with_via(std::initializer_list<std::string> values) {
  http::fields f;
  for (const auto& v : values) f.insert(http::field::via, v);
  return f;
}

}  // namespace

TEST_CASE("each process's Via pseudonym is random and names nothing but gistproxy") {
  const via_marker a, b;
  CHECK(std::regex_match(a.pseudonym(), std::regex("gistproxy-[0-9a-f]{16}")));
  CHECK(a.pseudonym() != b.pseudonym());
  CHECK(a.entry(11) == "1.1 " + a.pseudonym());
  CHECK(a.entry(10) == "1.0 " + a.pseudonym());
  CHECK(a.entry(20) == "2 " + a.pseudonym());
}

TEST_CASE("a request is a loop only when a Via entry was received by this very process") {
  const via_marker self("gistproxy-00000000000000aa");
  CHECK_FALSE(self.seen_in(with_via({})));
  CHECK(self.seen_in(with_via({"1.1 gistproxy-00000000000000aa"})));
  CHECK(self.seen_in(with_via({"1.0 fred, 1.1 gistproxy-00000000000000AA (gistproxy)"})));
  CHECK(self.seen_in(with_via({"1.1 corp", "2 gistproxy-00000000000000aa"})));
  CHECK(self.seen_in(with_via({"1.1 a (x, y), HTTP/1.1  gistproxy-00000000000000aa  "})));
  // Another gistproxy (a chained one) is not this one, nor is a longer or shorter name.
  CHECK_FALSE(self.seen_in(with_via({"1.1 gistproxy-00000000000000bb"})));
  CHECK_FALSE(self.seen_in(with_via({"1.1 gistproxy-00000000000000aa0", "1.1 gistproxy-00000000000000a"})));
  // Inside a comment it is no entry of ours (a comment holds commas and escaped parentheses).
  CHECK_FALSE(self.seen_in(with_via({"1.1 corp (see \\) , 1.1 gistproxy-00000000000000aa)"})));
  CHECK_FALSE(self.seen_in(with_via({"gistproxy-00000000000000aa"})));  // a protocol, not a receiver
}
