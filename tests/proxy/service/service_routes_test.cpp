// The offload service's routing and query parsing: which paths are the
// service's, and query values decoded exactly (or refused, never guessed).
#include <catch2/catch.hpp>

#include "proxy/service/service.hpp"

using namespace gistproxy::proxy;

TEST_CASE("the service's paths are its own, everything else is proxied") {
  CHECK(service_route_of("/v1/offload/chat").what == service_route::kind::offload);
  CHECK(service_route_of("/v1/offload/chat").name == "chat");
  CHECK(service_route_of("/v1/offload/vertex-gemini?model=gemini-2.5-flash").name == "vertex-gemini");
  CHECK(service_route_of("/v1/blobs/abcdef0123456789").what == service_route::kind::blob);
  CHECK(service_route_of("/v1/blobs/abcdef0123456789?raw=1").name == "abcdef0123456789");
  CHECK(service_route_of("/v1/blobs/").name.empty());
  CHECK(service_route_of("/v1/chat/completions").what == service_route::kind::none);
  CHECK(service_route_of("/v1/offload").what == service_route::kind::none);
  CHECK(service_route_of("/x/v1/blobs/abc").what == service_route::kind::none);
  CHECK(service_route_of("/v1/models?next=/v1/blobs/x").what == service_route::kind::none);
}

TEST_CASE("query parameters decode percent escapes and '+', and an undecodable one is refused") {
  const std::string t = "/v1/blobs/h?pattern=secret%5Fport%3D%5Cd%2B&query=two+words&empty=&raw=1&bad=%zz&cut=%4";
  CHECK(query_parameter(t, "pattern") == "secret_port=\\d+");
  CHECK(query_parameter(t, "query") == "two words");
  CHECK(query_parameter(t, "empty") == "");
  CHECK(query_parameter(t, "raw") == "1");
  CHECK_FALSE(query_parameter(t, "missing"));
  CHECK_FALSE(query_parameter(t, "bad"));
  CHECK_FALSE(query_parameter(t, "cut"));
  CHECK_FALSE(query_parameter("/v1/blobs/h", "raw"));
  CHECK_FALSE(query_decodes(t));
  CHECK(query_decodes("/v1/blobs/h?pattern=a%20b&x"));
  CHECK(query_decodes("/v1/blobs/h"));
  CHECK(query_parameter("/v1/blobs/h?a=%00b", "a") == std::string("\0b", 2));  // bytes, as sent
  CHECK(query_parameter("/p?x=1&x=2", "x") == "1");                            // the first one counts
  CHECK(query_parameter("/p?%70attern=a%2Bb", "pattern") == "a+b");            // names as every reader reads them
  CHECK(query_parameter("/p?x&x=2", "x") == "");                              // present, with no value
}
