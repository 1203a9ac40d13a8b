// The HTTP/2 client connection without sockets
// (proxy/net/h2_client_connection.hpp), talking through memory to the
// server side gistproxy already has: what it sends is the request as given
// (an AWS signature over :authority must still verify), and nothing an
// upstream sends can make it hold more than its bounds.
#include <catch2/catch.hpp>
#include <nghttp2/nghttp2.h>

#include "tests/proxy/net/h2_client_pair.hpp"

using namespace gistproxy::proxy;
using gistproxy::testing::client_and_server;
using gistproxy::testing::pair_of_sessions;
namespace http = boost::beast::http;

namespace {

// The header fields of the first HEADERS frame in `wire` (the client's
// bytes after its preface), decoded as the upstream's HPACK decoder sees them.
h2_fields first_header_block(const std::string& wire) {
  constexpr std::size_t preface = 24;
  std::size_t at = preface;
  while (at + 9 <= wire.size()) {
    auto byte = [&](std::size_t i) { return static_cast<std::uint8_t>(wire[i]); };
    const std::size_t length = (std::size_t(byte(at)) << 16) | (std::size_t(byte(at + 1)) << 8) | byte(at + 2);
    const std::uint8_t type = byte(at + 3), flags = byte(at + 4);
    if (type != NGHTTP2_HEADERS) {
      at += 9 + length;
      continue;
    }
    REQUIRE((flags & (NGHTTP2_FLAG_PADDED | NGHTTP2_FLAG_PRIORITY)) == 0);
    REQUIRE((flags & NGHTTP2_FLAG_END_HEADERS) != 0);
    nghttp2_hd_inflater* inflater = nullptr;
    nghttp2_hd_inflate_new(&inflater);
    h2_fields out;
    const auto* in = reinterpret_cast<const std::uint8_t*>(wire.data()) + at + 9;
    std::size_t left = length;
    for (;;) {
      nghttp2_nv nv;
      int inflate_flags = 0;
      const auto n = nghttp2_hd_inflate_hd2(inflater, &nv, &inflate_flags, in, left, 1);
      REQUIRE(n >= 0);
      in += n;
      left -= std::size_t(n);
      if (inflate_flags & NGHTTP2_HD_INFLATE_EMIT)
        out.emplace_back(std::string(reinterpret_cast<const char*>(nv.name), nv.namelen),
                         std::string(reinterpret_cast<const char*>(nv.value), nv.valuelen));
      if (inflate_flags & NGHTTP2_HD_INFLATE_FINAL) break;
      if (n == 0 && left == 0) break;
    }
    nghttp2_hd_inflate_del(inflater);
    return out;
  }
  FAIL("no HEADERS frame");
  return {};
}

const std::string big_body = [] {
  std::string b(1u << 20, '\0');
  for (std::size_t i = 0; i < b.size(); ++i) b[i] = static_cast<char>('a' + (i * 7 + i / 4096) % 26);
  return b;
}();

}  // namespace

TEST_CASE("an h2 upstream request carries :authority and every field as given, in order, values verbatim") {
  client_and_server s;
  // What the AWS SDK for JavaScript signs over HTTP/2: :authority, no host.
  h2_client_request r{"POST", "http", "bedrock-runtime.us-east-1.amazonaws.com", "/model/m/invoke", {}};
  r.fields = {{"content-type", "application/json"},
              {"X-Amz-Date", "20261129T120000Z"},
              {"amz-sdk-invocation-id", "1f0c-77"},
              {"x-spaced", "a  b   c d"},
              {"authorization", "AWS4-HMAC-SHA256 Credential=AKIDEXAMPLE/20261129/us-east-1/bedrock/aws4_request, "
                                "SignedHeaders=:authority;amz-sdk-invocation-id;content-type;x-amz-date, Signature=abc"}};
  const auto id = s.client.submit(r, R"({"x":1})", true);
  REQUIRE(id);
  std::string wire;
  s.client.take_output(wire);
  const h2_fields want_on_wire{{":method", "POST"},
                               {":scheme", "http"},
                               {":authority", "bedrock-runtime.us-east-1.amazonaws.com"},
                               {":path", "/model/m/invoke"},
                               {"content-type", "application/json"},
                               {"x-amz-date", "20261129T120000Z"},
                               {"amz-sdk-invocation-id", "1f0c-77"},
                               {"x-spaced", "a  b   c d"},
                               {"authorization", r.fields[4].second}};
  CHECK(first_header_block(wire) == want_on_wire);
  REQUIRE(s.server.receive(wire));
  s.exchange();
  REQUIRE(s.server_events.requests.size() == 1);
  const auto& got = s.server_events.requests[0];
  CHECK(got.stream == *id);
  CHECK_FALSE(got.refusal);
  CHECK(got.request.method() == http::verb::post);
  CHECK(got.request.target() == "/model/m/invoke");
  CHECK(got.request[http::field::host] == "bedrock-runtime.us-east-1.amazonaws.com");  // from :authority
  h2_fields fields;
  for (const auto& f : got.request)
    if (f.name() != http::field::host) fields.emplace_back(std::string(f.name_string()), std::string(f.value()));
  CHECK(fields == h2_fields(want_on_wire.begin() + 4, want_on_wire.end()));
  CHECK(got.request.body() == R"({"x":1})");
}

TEST_CASE("an h2 upstream request body of 1 MiB crosses a 64 KiB window, given whole or streamed with back-pressure") {
  h2_limits server_limits;
  server_limits.initial_window = 64 * 1024;
  h2_client_limits client_limits;
  client_limits.max_send_buffered = 128 * 1024;
  client_and_server s(client_limits, server_limits);
  h2_client_request post{"POST", "http", "upstream.test", "/v1/x", {}};
  SECTION("whole") {
    REQUIRE(s.client.submit(post, big_body, true));
    s.exchange();
  }
  SECTION("streamed") {
    const auto id = s.client.submit(post, {}, false);
    REQUIRE(id);
    std::size_t given = 0;
    bool refused_once = false;
    auto feed = [&] {
      while (given < big_body.size()) {
        const auto piece = std::min<std::size_t>(48 * 1024, big_body.size() - given);
        if (!s.client.send_data(*id, std::string_view(big_body).substr(given, piece), given + piece == big_body.size())) {
          refused_once = true;  // the buffer is full: wait for the window to take some
          return;
        }
        given += piece;
      }
    };
    feed();
    CHECK(s.client.buffered(*id) <= client_limits.max_send_buffered);
    s.exchange(feed);
    CHECK(refused_once);
    CHECK(given == big_body.size());
  }
  REQUIRE(s.server_events.requests.size() == 1);
  CHECK(s.server_events.requests[0].request.body() == big_body);
}

TEST_CASE("a streamed h2 upstream response arrives in pieces as they are sent and ends with the last") {
  client_and_server s;
  const auto id = s.client.submit(client_and_server::get());
  REQUIRE(id);
  s.exchange();
  REQUIRE(s.server.respond(*id, 200, {{"content-type", "text/event-stream"}, {"x-trace", "t 1"}}, false));
  s.exchange();
  auto& r = s.events.responses[*id];
  CHECK(r.status == 200);
  CHECK(r.fields == h2_fields{{"content-type", "text/event-stream"}, {"x-trace", "t 1"}});
  CHECK(r.body.empty());
  s.server.send_data(*id, "data: 1\n\n", false);
  s.exchange();
  CHECK(r.body == "data: 1\n\n");
  CHECK_FALSE(r.ended);
  s.server.send_data(*id, "data: 2\n\n", true);
  s.exchange();
  CHECK(r.body == "data: 1\n\ndata: 2\n\n");
  CHECK(r.pieces == 2);
  CHECK(r.ended);
  CHECK_FALSE(r.failure);
  CHECK(s.client.streams_open() == 0);
}

TEST_CASE("an h2 upstream response is held to the stream window until the caller consumes it") {
  h2_client_limits limits;
  limits.stream_window = 64 * 1024;
  client_and_server s(limits);
  const auto id = s.client.submit(client_and_server::get());
  REQUIRE(id);
  s.exchange();
  REQUIRE(s.server.respond(*id, 200, {}, false));
  s.server.send_data(*id, big_body, true);
  s.exchange();
  auto& r = s.events.responses[*id];
  CHECK(r.body.size() == limits.stream_window);  // nothing consumed: the upstream may send no more
  s.events.consume = &s.client;
  s.client.consumed(*id, r.body.size());
  s.exchange();
  CHECK(r.body == big_body);
  CHECK(r.ended);
}

TEST_CASE("an RST_STREAM from the h2 upstream fails that stream alone while the others and the connection go on") {
  client_and_server s;
  const auto reset = s.client.submit(client_and_server::get());
  const auto refused = s.client.submit(client_and_server::get());
  const auto served = s.client.submit(client_and_server::get());
  REQUIRE((reset && refused && served));
  s.exchange();
  s.server.reset(*reset, NGHTTP2_INTERNAL_ERROR);
  s.server.reset(*refused, NGHTTP2_REFUSED_STREAM);
  REQUIRE(s.server.respond(*served, 200, {}, false));
  s.exchange();
  CHECK(s.events.responses[*reset].failure == h2_client_failure::reset);
  CHECK(s.events.responses[*reset].code == NGHTTP2_INTERNAL_ERROR);
  CHECK(s.events.responses[*refused].failure == h2_client_failure::refused);
  s.server.send_data(*served, "ok", true);
  s.exchange();
  CHECK(s.events.responses[*served].body == "ok");
  CHECK(s.events.responses[*served].ended);
  CHECK_FALSE(s.events.responses[*served].failure);
  CHECK(s.events.connection_codes.empty());
  CHECK(s.client.can_submit());
}

TEST_CASE("a GOAWAY from the h2 upstream ends the connection: no new stream, the covered one finishes") {
  client_and_server s;
  const auto open = s.client.submit(client_and_server::get());
  REQUIRE(open);
  s.exchange();
  s.server.drain();
  s.exchange();
  CHECK(s.events.connection_codes == std::vector<std::uint32_t>{NGHTTP2_NO_ERROR});
  CHECK_FALSE(s.client.can_submit());
  CHECK_FALSE(s.client.submit(client_and_server::get()));
  CHECK_FALSE(s.client.finished());
  REQUIRE(s.server.respond(*open, 200, {}, true));
  s.exchange();
  CHECK(s.events.responses[*open].ended);
  CHECK(s.client.finished());
}

TEST_CASE("a GOAWAY with an error fails the streams above its last one as refused, told once") {
  client_and_server s;
  const auto first = s.client.submit(client_and_server::get());
  const auto second = s.client.submit(client_and_server::get());
  REQUIRE((first && second));
  s.exchange();
  // GOAWAY: last stream 0, ENHANCE_YOUR_CALM; then the connection closes.
  const std::string goaway = pair_of_sessions::frame(NGHTTP2_GOAWAY, 0, 0, std::string("\0\0\0\0\0\0\0\x0b", 8));
  CHECK_FALSE(s.client.receive(goaway));  // no stream left: nothing more to read
  CHECK(s.events.connection_codes == std::vector<std::uint32_t>{NGHTTP2_ENHANCE_YOUR_CALM});
  CHECK(s.events.responses[*first].failure == h2_client_failure::refused);
  CHECK(s.events.responses[*second].failure == h2_client_failure::refused);
  s.client.connection_lost();
  CHECK(s.events.connection_codes.size() == 1);
  CHECK(s.client.streams_open() == 0);
}

TEST_CASE("the socket lost under an h2 upstream connection fails every open stream once") {
  client_and_server s;
  const auto a = s.client.submit(client_and_server::get());
  REQUIRE(a);
  s.exchange();
  s.client.connection_lost();
  CHECK(s.events.responses[*a].failure == h2_client_failure::connection);
  CHECK_FALSE(s.client.can_submit());
}
