#include <catch2/catch.hpp>

#include <string>
#include <thread>

#include "rewrite/blob/digest.hpp"
#include "telemetry/trace_context.hpp"

using namespace gistproxy::rewrite;

TEST_CASE("sha256 gives the FIPS 180-2 digests, on every thread, call after call") {
  const std::string million(1000000, 'a');
  auto check = [&] {
    for (int round = 0; round < 3; ++round) {  // the reused context must not carry state over
      CHECK(sha256_hex("") == "e3b0c44298fc1c149afbf4c8996fb92427ae41e4649b934ca495991b7852b855");
      CHECK(sha256_hex("abc") == "ba7816bf8f01cfea414140de5dae2223b00361a396177a9cb410ff61f20015ad");
      CHECK(sha256_hex("abcdbcdecdefdefgefghfghighijhijkijkljklmklmnlmnomnopnopq") ==
            "248d6a61d20638b8e5c026930c3e6039a33ce45964ff2167f6ecedd419db06c1");
      CHECK(sha256_hex(million) == "cdc76e5c9914fb9281a1c7e284d73e67f1809a48a497200e046d39ccc7112cd0");
    }
  };
  check();
  std::thread other(check);
  other.join();
}

TEST_CASE("the request path's trace id (from rewrite::sha256) is the one derive_trace_id names") {
  for (std::string key : {std::string("chat\nsystem\0hello", 18), std::string(20000, 'k'), std::string()})
    CHECK(gistproxy::telemetry::trace_id_from_sha256(sha256(key)) == gistproxy::telemetry::derive_trace_id(key));
}
