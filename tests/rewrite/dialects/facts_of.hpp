// What the dialect a request target names reads from a request body: the
// facts serve decides on (tests of several APIs share it).
#pragma once

#include <catch2/catch.hpp>
#include <string_view>

#include "rewrite/endpoint.hpp"

namespace gistproxy::testing {

inline rewrite::request_facts facts_of(std::string_view target, std::string_view body) {
  const rewrite::endpoint* d = rewrite::endpoint_for("POST", target);
  REQUIRE(d);
  auto facts = d->wire().inspect(body);
  REQUIRE(facts);
  d->inspect_target(target, *facts);
  return *facts;
}

}  // namespace gistproxy::testing
