// The S3 client's keep-alive connections: bytes an S3 endpoint leaves after an
// answer are never read as the next call's answer.
#include <catch2/catch.hpp>

#include "proxy/store/s3/s3_client.hpp"
#include "tests/support/raw_upstream.hpp"

using namespace gistproxy::store::s3;
using gistproxy::testing::raw_upstream;

TEST_CASE("s3 client: bytes after an answer never become the next call's answer") {
  const std::string smuggled = raw_upstream::response("not yours", "application/octet-stream");
  raw_upstream s3({{raw_upstream::response("first", "application/octet-stream") + smuggled},
                   {raw_upstream::response("second", "application/octet-stream")}});
  std::string error;
  auto env = [](const char*) -> std::optional<std::string> { return std::nullopt; };
  auto where = parse_location("s3://bucket/prefix", s3.url(), env, error);
  REQUIRE(where);
  client c(*where, credentials{"AKID", "secret", ""}, client_options{});

  auto a = c.send(request{"GET", "prefix/a", {}, {}, {}});
  CHECK(a.status == 200);
  CHECK(a.body == "first");
  auto b = c.send(request{"GET", "prefix/b", {}, {}, {}});
  CHECK(b.status == 200);
  CHECK(b.body == "second");
  CHECK(s3.requests() == 2);
}
