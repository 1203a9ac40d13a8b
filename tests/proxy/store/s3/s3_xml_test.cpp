#include "proxy/store/s3/s3_xml.hpp"

#include <catch2/catch.hpp>

using namespace gistproxy::store::s3;

TEST_CASE("xml_unescape decodes the five XML entities once and keeps anything else as it came") {
  CHECK(xml_unescape("a&amp;b&lt;c&gt;d&quot;e&apos;f") == "a&b<c>d\"e'f");
  CHECK(xml_unescape("&amp;lt;") == "&lt;");  // decoded once: never a second pass
  CHECK(xml_unescape("&#38;&nbsp;&") == "&#38;&nbsp;&");
  CHECK(xml_unescape("cut&am") == "cut&am");  // an entity the body ends inside
  CHECK(xml_unescape("") == "");
}

TEST_CASE("ListObjectsV2 reads each object's fields only from inside its own Contents") {
  auto page = parse_list_objects(
      "<ListBucketResult>"
      "<Contents><Key>a</Key></Contents>"
      "<Contents><Key>b</Key><LastModified>1970-01-01T00:01:00.000Z</LastModified><Size>9</Size></Contents>"
      "<Contents><Size>5</Size></Contents>"
      "</ListBucketResult>");
  REQUIRE(page.objects.size() == 2);  // the keyless third is no object
  CHECK(page.objects[0].key == "a");
  CHECK(page.objects[0].size == 0);  // not b's
  CHECK(page.objects[0].last_modified == 0);
  CHECK(page.objects[1].key == "b");
  CHECK(page.objects[1].size == 9);
  CHECK(page.objects[1].last_modified == 60);
}

TEST_CASE("ListObjectsV2 reads a malformed size or date as zero and keeps the object") {
  auto page = parse_list_objects(
      "<Contents><Key>k</Key><LastModified>yesterday</LastModified><Size>lots</Size></Contents>"
      "<Contents><Key>p/a&lt;b&gt;</Key><Size>12abc</Size></Contents>");
  REQUIRE(page.objects.size() == 2);
  CHECK(page.objects[0].size == 0);
  CHECK(page.objects[0].last_modified == 0);
  CHECK(page.objects[1].key == "p/a<b>");
  CHECK(page.objects[1].size == 12);
}

TEST_CASE("ListObjectsV2 continues only when IsTruncated is exactly true and a token is given") {
  const std::string token = "<NextContinuationToken>t&amp;1</NextContinuationToken>";
  CHECK(parse_list_objects("<IsTruncated>true</IsTruncated>" + token).next_token == "t&1");
  CHECK(parse_list_objects(token).next_token.empty());  // no IsTruncated: the last page
  CHECK(parse_list_objects("<IsTruncated>True</IsTruncated>" + token).next_token.empty());
  CHECK(parse_list_objects("<IsTruncated>1</IsTruncated>" + token).next_token.empty());
  CHECK(parse_list_objects("<IsTruncated>true</IsTruncated>").next_token.empty());
  CHECK(parse_list_objects("<IsTruncated>true</IsTruncated><NextContinuationToken>t").next_token.empty());
}

TEST_CASE("S3 dates ignore ISO 8601's fraction and refuse other shapes and trailing text") {
  CHECK(parse_iso8601("2026-11-24T14:00:00.000Z") == 1795528800);
  CHECK(parse_iso8601("2026-11-24T14:00:00") == 1795528800);
  CHECK_FALSE(parse_iso8601("2026-11-24 14:00:00.000Z"));
  CHECK_FALSE(parse_iso8601("2026-11-24T14:00"));
  CHECK_FALSE(parse_iso8601(""));
  CHECK(parse_http_date("Tue, 24 Nov 2026 14:00:00 GMT") == 1795528800);
  CHECK_FALSE(parse_http_date("Tue, 24 Nov 2026 14:00:00 GMT and more"));
  CHECK_FALSE(parse_http_date("Tue, 24 Nov 2026 14:00:00 UTC"));
}

// A field missing from every object made each lookup scan the rest of the
// body: quadratic, about 25 minutes of CPU for these 8 MiB (the store reads
// up to 64 MiB). Nothing here is timed: the fix makes this milliseconds and
// the old code runs into CTest's 120 s timeout.
TEST_CASE("ListObjectsV2 looks for a field only inside its own element however large the listing") {
  const std::string object = "<Contents><Key>k</Key></Contents>", prefix = "<CommonPrefixes></CommonPrefixes>";
  std::string xml = "<ListBucketResult>";
  std::size_t objects = 0;
  while (xml.size() < (8u << 20)) {
    xml += object;
    xml += prefix;
    ++objects;
  }
  xml += "</ListBucketResult>";
  auto page = parse_list_objects(xml);
  CHECK(page.objects.size() == objects);
  CHECK(page.common_prefixes.empty());
}
