#include "rewrite/request_target.hpp"

#include <catch2/catch.hpp>

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
