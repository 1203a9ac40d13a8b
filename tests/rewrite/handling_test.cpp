#include <catch2/catch.hpp>

#include "rewrite/handling.hpp"

using namespace gistproxy::rewrite;

namespace {

// A request the engine may rewrite: every other case changes one input.
handling_inputs rewritable() {
  handling_inputs in;
  in.known_api = true;
  in.offload_on = true;
  in.parsed = true;
  return in;
}

}  // namespace

TEST_CASE("handling: a parsed body of a known API with the engine on is rewritten") {
  const auto h = handling_of(rewritable());
  CHECK(h.mode == handling_mode::rewrite);
  CHECK(h.why == handling_why::offload);
  CHECK(h.may_rewrite());
}

TEST_CASE("handling: each reason alone gives its own mode and why") {
  struct one_case {
    const char* name;
    void (*change)(handling_inputs&);
    handling_mode mode;
    handling_why why;
  };
  const one_case cases[] = {
      {"control group", [](handling_inputs& in) { in.control = true; }, handling_mode::read_only, handling_why::control},
      {"no dialect", [](handling_inputs& in) { in.known_api = false; }, handling_mode::untouched, handling_why::unknown_api},
      {"offload off", [](handling_inputs& in) { in.offload_on = false; }, handling_mode::read_only, handling_why::offload_off},
      {"bypass header", [](handling_inputs& in) { in.bypass = true; }, handling_mode::read_only, handling_why::bypass},
      {"client signature", [](handling_inputs& in) { in.client_signed = true; }, handling_mode::read_only,
       handling_why::client_signed},
      {"undecoded body", [](handling_inputs& in) { in.decoded = false; }, handling_mode::untouched, handling_why::undecodable},
      {"unparsed body", [](handling_inputs& in) { in.parsed = false; }, handling_mode::untouched, handling_why::unparsable},
      {"answer it cannot follow", [](handling_inputs& in) { in.answer_interceptable = false; }, handling_mode::read_only,
       handling_why::uninterceptable_answer},
  };
  for (const auto& c : cases) {
    INFO(c.name);
    auto in = rewritable();
    c.change(in);
    const auto h = handling_of(in);
    CHECK(h.mode == c.mode);
    CHECK(h.why == c.why);
    CHECK_FALSE(h.may_rewrite());
  }
}

TEST_CASE("handling: the first reason in the rewrite phase's order decides") {
  handling_inputs all;  // every reason at once
  all.control = true;
  all.bypass = true;
  all.client_signed = true;
  all.decoded = false;
  all.answer_interceptable = false;
  // Take the reasons away in order: each time the next one decides.
  CHECK(handling_of(all).why == handling_why::control);
  all.control = false;
  CHECK(handling_of(all).why == handling_why::unknown_api);
  all.known_api = true;
  CHECK(handling_of(all).why == handling_why::offload_off);
  all.offload_on = true;
  CHECK(handling_of(all).why == handling_why::bypass);
  all.bypass = false;
  CHECK(handling_of(all).why == handling_why::client_signed);
  all.client_signed = false;
  CHECK(handling_of(all).why == handling_why::undecodable);
  all.decoded = true;
  CHECK(handling_of(all).why == handling_why::unparsable);
  all.parsed = true;
  CHECK(handling_of(all).why == handling_why::uninterceptable_answer);
  all.answer_interceptable = true;
  CHECK(handling_of(all).why == handling_why::offload);
}

TEST_CASE("handling: a control conversation stays control even when the client bypassed or signed") {
  auto in = rewritable();
  in.control = true;
  in.bypass = true;
  in.client_signed = true;
  CHECK(handling_of(in) == handling{handling_mode::read_only, handling_why::control});
}

TEST_CASE("handling: bytes the client bypassed or signed are kept as sent and no others") {
  CHECK(bytes_kept_as_sent(true, false));
  CHECK(bytes_kept_as_sent(false, true));
  CHECK(bytes_kept_as_sent(true, true));
  CHECK_FALSE(bytes_kept_as_sent(false, false));
}

TEST_CASE("handling: labels are stable names for metrics and logs") {
  CHECK(label(handling_mode::rewrite) == "rewrite");
  CHECK(label(handling_mode::read_only) == "read_only");
  CHECK(label(handling_mode::untouched) == "untouched");
  CHECK(label(handling_why::control) == "control");
  CHECK(label(handling_why::unknown_api) == "unknown_api");
  CHECK(label(handling_why::offload_off) == "offload_off");
  CHECK(label(handling_why::bypass) == "bypass");
  CHECK(label(handling_why::client_signed) == "client_signed");
  CHECK(label(handling_why::undecodable) == "undecodable");
  CHECK(label(handling_why::unparsable) == "unparsable");
  CHECK(label(handling_why::uninterceptable_answer) == "uninterceptable_answer");
  CHECK(label(handling_why::offload) == "offload");
}

TEST_CASE("handling: before receive decides a request is untouched and unknown") {
  const handling h;
  CHECK(h.mode == handling_mode::untouched);
  CHECK(h.why == handling_why::unknown_api);
  CHECK_FALSE(h.may_rewrite());
}
