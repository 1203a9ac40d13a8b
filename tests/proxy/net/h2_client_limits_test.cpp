// The HTTP/2 client connection's bounds: what an upstream sends beyond them
// fails that one stream (never an exception through nghttp2, never a crash),
// and the streams it opens stay within both sides' limits.
#include <catch2/catch.hpp>
#include <nghttp2/nghttp2.h>

#include "tests/proxy/net/h2_client_pair.hpp"

using namespace gistproxy::proxy;
using gistproxy::testing::client_and_server;
using gistproxy::testing::pair_of_sessions;

namespace {

// A HEADERS frame written by hand; its fields never enter the HPACK table,
// so the client's decoder stays in step with the server's encoder.
std::string headers_frame(std::int32_t stream, h2_fields fields, bool ends) {
  std::vector<nghttp2_nv> nva;
  for (auto& [n, v] : fields)
    nva.push_back({reinterpret_cast<std::uint8_t*>(n.data()), reinterpret_cast<std::uint8_t*>(v.data()), n.size(),
                   v.size(), NGHTTP2_NV_FLAG_NO_INDEX});
  nghttp2_hd_deflater* deflater = nullptr;
  nghttp2_hd_deflate_new(&deflater, 4096);
  std::string block(nghttp2_hd_deflate_bound(deflater, nva.data(), nva.size()), '\0');
  const auto n = nghttp2_hd_deflate_hd(deflater, reinterpret_cast<std::uint8_t*>(block.data()), block.size(),
                                       nva.data(), nva.size());
  nghttp2_hd_deflate_del(deflater);
  REQUIRE(n >= 0);
  block.resize(std::size_t(n));
  const std::uint8_t flags = NGHTTP2_FLAG_END_HEADERS | (ends ? NGHTTP2_FLAG_END_STREAM : 0);
  return pair_of_sessions::frame(NGHTTP2_HEADERS, flags, stream, block);
}

}  // namespace

TEST_CASE("an h2 upstream response head over the header list bound fails its stream alone") {
  h2_client_limits limits;
  limits.max_header_list = 4096;
  client_and_server s(limits);
  const auto big = s.client.submit(client_and_server::get());
  const auto many = s.client.submit(client_and_server::get());
  const auto fine = s.client.submit(client_and_server::get());
  REQUIRE((big && many && fine));
  s.exchange();
  REQUIRE(s.server.respond(*big, 200, {{"x-big", std::string(5000, 'v')}}, true));
  h2_fields small_ones;
  for (int i = 0; i < 200; ++i) small_ones.emplace_back("x-f" + std::to_string(i), "v");  // 200 x 37 bytes
  REQUIRE(s.server.respond(*many, 200, small_ones, true));
  REQUIRE(s.server.respond(*fine, 200, {{"x-ok", "1"}}, true));
  s.exchange();
  for (auto id : {*big, *many}) {
    CHECK(s.events.responses[id].failure == h2_client_failure::header_list);
    CHECK(s.events.responses[id].status == 0);  // no head was handed over
  }
  CHECK(s.events.responses[*fine].ended);
  CHECK(s.events.responses[*fine].fields == h2_fields{{"x-ok", "1"}});
  CHECK(s.events.failures == 0);
  CHECK(s.events.connection_codes.empty());
}

TEST_CASE("an exception in the h2 client's caller resets that stream only and never crosses nghttp2") {
  client_and_server s;
  const auto a = s.client.submit(client_and_server::get());
  REQUIRE(a);
  s.exchange();
  s.events.throw_on_head = true;
  REQUIRE(s.server.respond(*a, 200, {}, false));
  s.exchange();
  CHECK(s.events.failures == 1);
  CHECK(s.events.responses[*a].failure == h2_client_failure::internal);
  s.events.throw_on_head = false;
  const auto b = s.client.submit(client_and_server::get());
  REQUIRE(b);
  s.exchange();
  REQUIRE(s.server.respond(*b, 204, {}, true));
  s.exchange();
  CHECK(s.events.responses[*b].status == 204);
  CHECK(s.events.responses[*b].ended);
}

TEST_CASE("h2 upstream streams stay within the client's limit and the upstream's advertised one") {
  SECTION("the client's own") {
    h2_client_limits limits;
    limits.max_streams = 2;
    client_and_server s(limits);
    CHECK(s.client.submit(client_and_server::get()));
    CHECK(s.client.submit(client_and_server::get()));
    CHECK_FALSE(s.client.can_submit());
    CHECK_FALSE(s.client.submit(client_and_server::get()));
  }
  SECTION("the upstream's SETTINGS_MAX_CONCURRENT_STREAMS") {
    h2_limits server_limits;
    server_limits.max_concurrent_streams = 3;
    client_and_server s({}, server_limits);
    s.exchange();  // the SETTINGS arrive
    int opened = 0;
    while (s.client.submit(client_and_server::get()) && opened < 10) ++opened;
    CHECK(opened == 3);
  }
}

TEST_CASE("an h2 upstream's PING is answered and a 1xx head is skipped for the final one") {
  client_and_server s;
  s.exchange();
  std::string ping_ack;
  REQUIRE(s.client.receive(pair_of_sessions::frame(NGHTTP2_PING, 0, 0, "12345678")));
  s.client.take_output(ping_ack);
  CHECK(ping_ack == pair_of_sessions::frame(NGHTTP2_PING, NGHTTP2_FLAG_ACK, 0, "12345678"));
  const auto id = s.client.submit(client_and_server::get());
  REQUIRE(id);
  s.exchange();
  REQUIRE(s.client.receive(headers_frame(*id, {{":status", "103"}, {"link", "</a>"}}, false)));
  CHECK(s.events.responses[*id].status == 0);  // informational: not the response
  REQUIRE(s.client.receive(headers_frame(*id, {{":status", "200"}, {"x-final", "1"}}, true)));
  CHECK(s.events.responses[*id].status == 200);
  CHECK(s.events.responses[*id].fields == h2_fields{{"x-final", "1"}});
  CHECK(s.events.responses[*id].ended);
}
