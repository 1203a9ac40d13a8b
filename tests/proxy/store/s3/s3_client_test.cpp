// The S3 client's keep-alive connections: bytes an S3 endpoint leaves after an
// answer are never read as the next call's answer; through an egress proxy,
// each connection is a CONNECT tunnel.
#include <catch2/catch.hpp>

#include "proxy/store/s3/s3_blob_store.hpp"
#include "proxy/store/s3/s3_client.hpp"
#include "tests/support/connect_proxy.hpp"
#include "tests/support/raw_upstream.hpp"

using namespace gistproxy::store::s3;
using gistproxy::testing::connect_proxy;
using gistproxy::testing::connect_proxy_options;
using gistproxy::testing::raw_answer;
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

TEST_CASE("s3 client: through an egress proxy, connections are CONNECT tunnels to the S3 host, kept alive") {
  raw_upstream s3({{raw_upstream::response("object", "application/octet-stream")}});
  connect_proxy egress(connect_proxy_options::requiring("Basic dXNlcjpwYXNz"));  // user:pass
  std::string error;
  auto env = [](const char*) -> std::optional<std::string> { return std::nullopt; };
  auto where = parse_location("s3://bucket/prefix", s3.url(), env, error);
  REQUIRE(where);
  client_options co;
  co.egress = gistproxy::proxy::parse_egress_proxy(egress.url_with("user:pass"), error);
  REQUIRE(co.egress);
  client c(*where, credentials{"AKID", "secret", ""}, co);

  CHECK(c.send(request{"GET", "prefix/a", {}, {}, {}}).body == "object");
  CHECK(c.send(request{"GET", "prefix/b", {}, {}, {}}).body == "object");
  CHECK(s3.requests() == 2);
  CHECK(egress.tunnels() == 1);
  CHECK(egress.targets() == std::vector<std::string>{"127.0.0.1:" + std::to_string(s3.port())});
  CHECK(egress.authorizations() == std::vector<std::string>{"Basic dXNlcjpwYXNz"});
}

TEST_CASE("s3 client: an egress proxy that refuses makes the store unreachable, and the error names the proxy") {
  raw_upstream s3({{raw_upstream::response("object", "application/octet-stream")}});
  connect_proxy egress(connect_proxy_options::refusing(403));
  std::string error;
  auto env = [](const char*) -> std::optional<std::string> { return std::nullopt; };
  auto where = parse_location("s3://bucket/prefix", s3.url(), env, error);
  REQUIRE(where);
  client_options co;
  co.max_attempts = 2;
  co.egress = gistproxy::proxy::parse_egress_proxy(egress.url_with("user:pass"), error);
  REQUIRE(co.egress);
  client c(*where, credentials{"AKID", "secret", ""}, co);

  auto r = c.send(request{"GET", "prefix/a", {}, {}, {}});
  CHECK(r.status == 0);
  CHECK(result_name(r) == "unreachable");
  CHECK(r.attempts == 2);  // retried like any transport failure
  CHECK(r.error == "egress proxy 127.0.0.1:" + std::to_string(egress.port()) + " refused CONNECT (HTTP 403)");
  CHECK(s3.requests() == 0);
}

namespace {

using gistproxy::store::s3_blob_store;
using gistproxy::store::s3_store_options;

std::string listing(const std::vector<std::string>& keys, const std::string& next_token = "") {
  std::string xml = "<?xml version=\"1.0\"?><ListBucketResult><IsTruncated>" + std::string(next_token.empty() ? "false" : "true") +
                    "</IsTruncated>";
  for (const auto& k : keys)
    xml += "<Contents><Key>" + k + "</Key><LastModified>2020-01-01T00:00:00.000Z</LastModified><Size>9</Size></Contents>";
  if (!next_token.empty()) xml += "<NextContinuationToken>" + next_token + "</NextContinuationToken>";
  return raw_upstream::response(xml + "</ListBucketResult>", "application/xml");
}

std::unique_ptr<s3_blob_store> store_on(const raw_upstream& s3, const std::string& store) {
  std::string error;
  auto env = [](const char*) -> std::optional<std::string> { return std::nullopt; };
  auto where = parse_location(store, s3.url(), env, error);
  REQUIRE(where);
  client_options co;
  co.max_attempts = 1;
  s3_store_options so;
  so.ttl_seconds = 86400;  // every listed object (2020) is long expired
  return std::make_unique<s3_blob_store>(std::make_unique<client>(*where, credentials{"AKID", "secret", ""}, co), so);
}

// The request lines the fake S3 received (method and target).
std::vector<std::string> request_lines(const raw_upstream& s3) {
  std::vector<std::string> out;
  for (const auto& h : s3.heads()) out.push_back(h.substr(0, h.find(" HTTP/1.1")));
  return out;
}

const std::string ours = std::string(64, 'a');
const std::string not_ours = std::string(64, 'b');

}  // namespace

TEST_CASE("s3 gc deletes only keys in gistproxy's layout whose object is a gistproxy blob of that hash") {
  raw_upstream s3({
      {listing({"gp/../escaped/" + ours, "gp/x", "gp/tenant1/" + ours + "/more", "gp/tenant1/" + ours,
                "gp/tenant1/" + not_ours, "other-app/report.csv"})},
      {raw_upstream::response("GPB1 {\"hash\":\"" + ours + "\",\"size\":1}\nZ", "application/octet-stream")},  // ranged GET
      {raw_upstream::response("", "text/plain", 204)},                                                         // DELETE
      {raw_upstream::response("an object another application wrote", "text/plain")},                           // ranged GET
  });
  auto store = store_on(s3, "s3://bucket/gp");
  CHECK(store->gc(100) == 1);
  auto lines = request_lines(s3);
  REQUIRE(lines.size() == 4);
  CHECK(lines[1] == "GET /bucket/gp/tenant1/" + ours);
  CHECK(lines[2] == "DELETE /bucket/gp/tenant1/" + ours);
  CHECK(lines[3] == "GET /bucket/gp/tenant1/" + not_ours);  // checked, not deleted
}

TEST_CASE("s3 gc on a bucket with no prefix is refused unless allowed") {
  raw_upstream s3({{listing({"tenant1/" + ours})}});
  auto store = store_on(s3, "s3://bucket");
  CHECK(store->gc(100) == 0);
  CHECK(s3.requests() == 0);
}

TEST_CASE("s3 prefixes that climb out or hide characters are refused") {
  auto env = [](const char*) -> std::optional<std::string> { return std::nullopt; };
  for (const char* bad : {"s3://bucket/../escaped", "s3://bucket/a/./b", "s3://bucket/a/..", "s3://bucket/a\\b",
                          "s3://bucket/a\x01"}) {
    CAPTURE(bad);
    std::string error;
    CHECK_FALSE(parse_location(bad, "http://127.0.0.1:9", env, error));
    CHECK_FALSE(error.empty());
  }
}

TEST_CASE("an S3 listing that never ends, or lists foreign keys, ends a page-in and verify with an error, not a loop") {
  SECTION("always truncated, the same token") {
    raw_upstream s3({{listing({}, "again")}});
    auto store = store_on(s3, "s3://bucket/gp");
    auto got = store->get("tenant1", "0123456789abcdef");
    CHECK(got.error == gistproxy::rewrite::blob_error::io);
    CHECK(s3.requests() <= 2);
  }
  SECTION("always truncated, a new token every page: a page-in lists a few pages, not hundreds") {
    std::vector<raw_answer> pages;
    for (int i = 0; i < 50; ++i) pages.push_back({listing({}, "token" + std::to_string(i))});
    raw_upstream s3(pages);
    auto store = store_on(s3, "s3://bucket/gp");
    auto got = store->get("tenant1", "0123456789abcdef");
    CHECK(got.error == gistproxy::rewrite::blob_error::io);
    CHECK(s3.requests() <= 3);  // was: 387 LISTs in 15 s
  }
  SECTION("keys shorter than the prefix or outside it (verify used to throw out_of_range)") {
    raw_upstream s3({{listing({"g", "gp", "other/" + ours, "gp/tenant1/short"})}});
    auto store = store_on(s3, "s3://bucket/gp");
    auto report = store->verify();
    CHECK(report.checked == 0);
    CHECK(s3.requests() == 1);
  }
}

TEST_CASE("budget mode asking whether a never-stored output is in the bucket costs one HEAD, not one per turn") {
  raw_upstream s3({{"HTTP/1.1 404 Not Found\r\nContent-Length: 0\r\n\r\n"}});
  auto store = store_on(s3, "s3://bucket/gp");
  for (int turn = 0; turn < 5; ++turn) CHECK_FALSE(store->contains("tenant1", ours));
  CHECK(s3.requests() == 1);
}

TEST_CASE("a short handle resolves only among the asking tenant's blobs, whatever the listing returns") {
  // A listing (a misbehaving S3-compatible store) that names another
  // tenant's blob of that prefix.
  raw_upstream s3({{listing({"gp/tenant2/" + ours})}});
  auto store = store_on(s3, "s3://bucket/gp");
  auto got = store->get("tenant1", ours.substr(0, 16));
  CHECK(got.error == gistproxy::rewrite::blob_error::not_found);
  CHECK(s3.requests() == 1);  // listed, and nothing fetched on tenant2's word
}
