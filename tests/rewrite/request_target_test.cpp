#include "rewrite/request_target.hpp"

#include <catch2/catch.hpp>
#include <string>
#include <vector>

using namespace gistproxy::rewrite;

TEST_CASE("query_value: the first non-empty value of the parameter whose %-decoded name matches") {
  auto [target, expected] = GENERATE(table<std::string, std::string>({
      {"/x?key=K", "K"},
      {"/x?alt=sse&key=K&key=L", "K"},
      {"/x?key=&key=K", "K"},       // an empty first value is no key
      {"/x?key&key=K", "K"},        // nor is a name without '='
      {"/x?%6Bey=K", "K"},          // the name %-encoded, in either case of hex digit
      {"/x?%6bey=K", "K"},
      {"/x?k%65y=K%2D1", "K%2D1"},  // the value as sent
      {"/x?key=K#frag=1", "K"},     // a fragment is not query
      {"/x?a=1#key=K", ""},
      {"/x?Key=K", ""},             // exact names by default
      {"/x?keys=K&ke=L&xkey=M", ""},
      {"/x?key%=K&%6=L&%zzkey=M", ""},  // malformed escapes are themselves, and match nothing
      {"/x?key=", ""},
      {"/x", ""},
      {"/key=K", ""},
  }));
  CAPTURE(target);
  CHECK(query_value(target, "key") == expected);
}

TEST_CASE("query_value: names compared without case when asked (AWS's X-Amz-* in any spelling)") {
  CHECK(query_value("/m?x-amz-security-token=T", "X-Amz-Security-Token", name_case::any) == "T");
  CHECK(query_value("/m?X%2DAmz%2D%53ecurity-Token=T", "X-Amz-Security-Token", name_case::any) == "T");
  CHECK(query_value("/m?x-amz-security-token=T", "X-Amz-Security-Token").empty());
}

namespace {

struct seen {
  std::string name, value;
  bool has_equals;
  bool operator==(const seen&) const = default;
};

std::vector<seen> pairs_of(std::string_view target) {
  std::vector<seen> out;
  for (const auto& p : query_pairs(target)) out.push_back({p.decoded_name(), std::string(p.value), p.has_equals});
  return out;
}

}  // namespace

TEST_CASE("query_pairs: every pair in order, names %-decoded, values as sent, empty pieces no pair") {
  CHECK(pairs_of("/x?a=1&a=2&&b&c=&%64=%41+B&e=x=y#f=9") ==
        std::vector<seen>{{"a", "1", true}, {"a", "2", true}, {"b", "", false}, {"c", "", true},
                          {"d", "%41+B", true}, {"e", "x=y", true}});
  CHECK(pairs_of("/x").empty());
  CHECK(pairs_of("/x?").empty());
  CHECK(pairs_of("/x?&&&").empty());
  CHECK(pairs_of("/x?#a=1").empty());
  for (const auto& p : query_pairs("/x?%6Bey=K&n=v")) CHECK(p.sent == std::string(p.name) + "=" + std::string(p.value));
}

TEST_CASE("query_pairs: round 4's credential spellings read as the API that owns the parameter reads them") {
  const std::string google = "AIzaSyDUMMYDUMMYDUMMYDUMMYDUMMYDUMMY00";
  SECTION("the first occurrence empty: the key is the first non-empty one, and both occurrences are kept") {
    const auto target = "/v1beta/models/g:generateContent?key=&key=" + google;
    CHECK(query_value(target, "key") == google);
    CHECK(first_query_value(target, "key") == std::string_view());
    CHECK(pairs_of(target).size() == 2);
  }
  SECTION("a %-encoded name is the name it decodes to, in either case of hex digit") {
    CHECK(query_value("/m?%6Bey=" + google, "key") == google);
    CHECK(query_value("/m?%6bey=" + google, "key") == google);
    CHECK(first_query_value("/m?%6Bey=" + google, "key") == google);
  }
  SECTION("an AWS name in any case and %-encoding, when the name's owner compares without case") {
    CHECK(query_value("/m?x-amz-security-token=T", "X-Amz-Security-Token", name_case::any) == "T");
    CHECK(query_value("/m?X%2DAmz%2D%53ecurity-Token=T", "X-Amz-Security-Token", name_case::any) == "T");
    CHECK(query_value("/m?X-AMZ-SIGNATURE=s&X-amz-credential=AKID%2Fx", "X-Amz-Credential", name_case::any) == "AKID%2Fx");
  }
}

TEST_CASE("query_pairs: hostile queries are read in bounded time and space, never past their bounds") {
  using view = query_pairs_view;
  SECTION("10,000 '&' are no pairs, and a key after them is still read") {
    const auto target = "/x?" + std::string(10'000, '&') + "key=K";
    CHECK(query_value(target, "key") == "K");
    CHECK(query_pairs(target).complete());
  }
  SECTION("a name of 100 KB: past the bound on bytes, not read, and the query says it is incomplete") {
    const auto target = "/x?" + std::string(100 * 1024, 'k') + "=v&key=K";
    CHECK(query_value(target, "key").empty());
    CHECK_FALSE(query_pairs(target).complete());
    CHECK(pairs_of(target).empty());
  }
  SECTION("a long name within the bound matches nothing and costs nothing to compare") {
    const auto target = "/x?" + std::string(60 * 1024, 'k') + "=v&key=K";
    CHECK(query_value(target, "key") == "K");
    CHECK(query_pairs(target).complete());
  }
  SECTION("only whole pairs within the bound are read: a value is never cut") {
    const auto head = "a=" + std::string(view::max_query_bytes - 10, 'x');
    const auto target = "/x?" + head + "&key=K0123456789";
    CHECK(pairs_of(target) == std::vector<seen>{{"a", head.substr(2), true}});
    CHECK_FALSE(query_pairs(target).complete());
  }
  SECTION("at most max_query_pairs pairs, the rest unread") {
    std::string target = "/x?";
    for (std::size_t i = 0; i < view::max_query_pairs; ++i) target += "a=1&";
    CHECK(query_pairs(target).complete());
    target += "key=K";
    CHECK(pairs_of(target).size() == view::max_query_pairs);
    CHECK(query_value(target, "key").empty());
    CHECK_FALSE(query_pairs(target).complete());
  }
  SECTION("a '%' at the end and '%zz' are themselves") {
    CHECK(query_value("/x?key=K%", "key") == "K%");
    CHECK(query_value("/x?key%=K&ke%=L&%zzkey=M", "key").empty());
    CHECK(percent_decoded("%zz%4") == "%zz%4");
    CHECK(percent_decoded("a%") == "a%");
    CHECK(percent_decoded("%41%2f+") == "A/+");
    CHECK(pairs_of("/x?%zz=%") == std::vector<seen>{{"%zz", "%", true}});
  }
}

TEST_CASE("first_query_value: the first parameter so named, present even when empty") {
  CHECK(first_query_value("/r?stream=true&stream=false", "stream") == "true");
  CHECK(first_query_value("/r?stream&stream=true", "stream") == std::string_view());
  CHECK(first_query_value("/r?%73tream=true", "stream") == "true");
  CHECK_FALSE(first_query_value("/r?streams=true", "stream"));
  CHECK_FALSE(first_query_value("/r", "stream"));
}
