// The S3 store's pure parts: where requests go (s3://BUCKET/PREFIX, endpoint
// flag and AWS_* variables, path or virtual-host style), credentials, and the
// bounded reading of ListObjectsV2 answers and S3's dates.
#include <catch2/catch.hpp>

#include <map>

#include "proxy/store/s3/s3_client.hpp"
#include "proxy/store/s3/s3_xml.hpp"

using namespace gistproxy::store::s3;

namespace {

env_lookup env_of(std::map<std::string, std::string> vars) {
  return [vars](const char* name) -> std::optional<std::string> {
    auto it = vars.find(name);
    return it == vars.end() ? std::nullopt : std::optional<std::string>(it->second);
  };
}

}  // namespace

TEST_CASE("s3 location: AWS itself is virtual-host style in the region, an endpoint is path style") {
  std::string error;
  auto aws = parse_location("s3://my-bucket/team/blobs/", "", env_of({{"AWS_REGION", "eu-west-3"}}), error);
  REQUIRE(aws);
  CHECK_FALSE(aws->path_style);
  CHECK(aws->endpoint.tls);
  CHECK(aws->host() == "my-bucket.s3.eu-west-3.amazonaws.com");
  CHECK(aws->prefix == "team/blobs");
  CHECK(aws->object_path("team/blobs/t/h") == "/team/blobs/t/h");

  auto minio = parse_location("s3://my-bucket", "http://127.0.0.1:9000", env_of({}), error);
  REQUIRE(minio);
  CHECK(minio->path_style);
  CHECK(minio->region == "us-east-1");
  CHECK(minio->host_header() == "127.0.0.1:9000");
  CHECK(minio->object_path("k") == "/my-bucket/k");
  CHECK(minio->prefix.empty());
}

TEST_CASE("s3 location: the flag wins over AWS_ENDPOINT_URL_S3, which wins over AWS_ENDPOINT_URL") {
  std::string error;
  auto both = env_of({{"AWS_ENDPOINT_URL_S3", "https://s3.internal"}, {"AWS_ENDPOINT_URL", "https://all.internal"},
                      {"AWS_DEFAULT_REGION", "ap-south-1"}});
  CHECK(parse_location("s3://bkt", "http://flag:1", both, error)->endpoint.host == "flag");
  CHECK(parse_location("s3://bkt", "", both, error)->endpoint.host == "s3.internal");
  CHECK(parse_location("s3://bkt", "", env_of({{"AWS_ENDPOINT_URL", "https://all.internal"}}), error)->endpoint.host ==
        "all.internal");
  CHECK(parse_location("s3://bkt", "", both, error)->region == "ap-south-1");
}

TEST_CASE("s3 location: bad buckets, prefixes and endpoints are refused with a reason") {
  std::string error;
  for (const char* bad : {"s3://", "s3://ab", "s3://Upper", "s3://-dash", "s3://a_b", "s3://ok-bucket/a//b", "/tmp/x"}) {
    INFO(bad);
    CHECK_FALSE(parse_location(bad, "", env_of({}), error));
    CHECK_FALSE(error.empty());
  }
  CHECK_FALSE(parse_location("s3://bucket", "ftp://x", env_of({}), error));
  CHECK_FALSE(parse_location("s3://bucket", "http://x/path", env_of({}), error));
}

TEST_CASE("s3 credentials: key id and secret are required, the session token is optional") {
  std::string error;
  CHECK_FALSE(credentials_from_env(env_of({{"AWS_ACCESS_KEY_ID", "k"}}), error));
  CHECK(error.find("AWS_SECRET_ACCESS_KEY") != std::string::npos);
  auto c = credentials_from_env(env_of({{"AWS_ACCESS_KEY_ID", "k"}, {"AWS_SECRET_ACCESS_KEY", "s"}, {"AWS_SESSION_TOKEN", "t"}}), error);
  REQUIRE(c);
  CHECK(c->session_token == "t");
}

TEST_CASE("ListObjectsV2: keys (entities decoded), dates, sizes, common prefixes and the continuation token") {
  auto page = parse_list_objects(R"(<?xml version="1.0" encoding="UTF-8"?>
<ListBucketResult><Name>b</Name><IsTruncated>true</IsTruncated>
<Contents><Key>p/t/a&amp;b</Key><LastModified>2026-11-24T14:00:00.000Z</LastModified><Size>123</Size></Contents>
<Contents><Key>p/t/c</Key><Size>7</Size></Contents>
<CommonPrefixes><Prefix>p/t1/</Prefix></CommonPrefixes><CommonPrefixes><Prefix>p/t2/</Prefix></CommonPrefixes>
<NextContinuationToken>tok&lt;1&gt;</NextContinuationToken></ListBucketResult>)");
  REQUIRE(page.objects.size() == 2);
  CHECK(page.objects[0].key == "p/t/a&b");
  CHECK(page.objects[0].last_modified == 1795528800);
  CHECK(page.objects[0].size == 123);
  CHECK(page.objects[1].last_modified == 0);
  CHECK(page.common_prefixes == std::vector<std::string>{"p/t1/", "p/t2/"});
  CHECK(page.next_token == "tok<1>");
  CHECK(parse_list_objects("<ListBucketResult><IsTruncated>false</IsTruncated><NextContinuationToken>x</NextContinuationToken>")
            .next_token.empty());
}

TEST_CASE("ListObjectsV2: hostile answers end, without objects that were not there") {
  for (std::string bad : {std::string("<Contents><Key>a"), std::string("<Contents></Contents>"), std::string(10000, '<'),
                          std::string("<Contents><Contents><Key>k</Key></Contents>"), std::string("\0<Key>", 6)}) {
    auto page = parse_list_objects(bad);
    for (const auto& o : page.objects) CHECK_FALSE(o.key.empty());
  }
}

TEST_CASE("S3 dates: ISO 8601 (XML) and RFC 7231 (headers), anything else refused") {
  CHECK(parse_iso8601("1970-01-01T00:00:10.000Z") == 10);
  CHECK(parse_http_date("Thu, 01 Jan 1970 00:01:00 GMT") == 60);
  CHECK_FALSE(parse_iso8601("yesterday"));
  CHECK_FALSE(parse_http_date("Thu, 01 Jan 1970"));
}

TEST_CASE("S3 errors: the Code of an error body, bounded") {
  CHECK(error_code_of("<Error><Code>SlowDown</Code><Message>m</Message></Error>") == "SlowDown");
  CHECK(error_code_of("<Error><Code>" + std::string(500, 'x') + "</Code></Error>").empty());
  CHECK(error_code_of("no xml").empty());
}
