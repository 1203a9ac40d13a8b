// The HTTP/2 connection's limits and resets without sockets: a field over
// the limit is a 431 on its stream (never an exception through nghttp2), a
// stream reset in the read that opened it is never served, a stream's slot
// is held while its work runs, streams past the limit are refused one by
// one, and resets the client provokes count toward the flood limit.
#include <catch2/catch.hpp>

#include "proxy/net/checked_parser.hpp"
#include "tests/proxy/net/h2_pair.hpp"

using namespace gistproxy::proxy;
using gistproxy::testing::pair_of_sessions;

namespace {

using fields = std::vector<std::pair<std::string, std::string>>;

fields get_with(fields extra) {
  fields f{{":method", "GET"}, {":path", "/v1/models"}, {":scheme", "http"}, {":authority", "a"}};
  f.insert(f.end(), extra.begin(), extra.end());
  return f;
}

bool closed_with(const pair_of_sessions& s, std::int32_t stream, std::uint32_t code) {
  const std::pair<std::int32_t, std::uint32_t> want{stream, code};
  return std::find(s.events.closed.begin(), s.events.closed.end(), want) != s.events.closed.end();
}

std::string window_overflow(std::int32_t stream) {  // 2^31-1 on top of an open window: FLOW_CONTROL_ERROR
  return pair_of_sessions::frame(NGHTTP2_WINDOW_UPDATE, 0, stream, std::string("\x7f\xff\xff\xff", 4));
}

}  // namespace

TEST_CASE("an h2 field at 65,533 bytes is assembled, one byte more is a 431 on its stream alone") {
  pair_of_sessions s;
  const auto at_limit = s.request(get_with({{"x-big", std::string(max_field_bytes, 'a')}}));
  const auto over = s.request(get_with({{"x-big", std::string(max_field_bytes + 1, 'a')}}));
  const auto long_name = s.request(get_with({{std::string(max_field_bytes + 1, 'n'), "v"}}));
  s.exchange();
  REQUIRE(s.events.requests.size() == 3);
  CHECK_FALSE(s.events.requests[0].refusal);
  CHECK(s.events.requests[0].stream == at_limit);
  CHECK(s.events.requests[0].request["x-big"].size() == max_field_bytes);
  for (int i : {1, 2}) {
    REQUIRE(s.events.requests[i].refusal);
    CHECK(s.events.requests[i].refusal->kind == error_kind::headers_too_large);
    CHECK(s.events.requests[i].refusal->status() == 431);
  }
  CHECK(s.events.requests[1].stream == over);
  CHECK(s.events.requests[2].stream == long_name);
  CHECK(s.events.refusals == std::vector<h2_refusal>{h2_refusal::field_size, h2_refusal::field_size});
  CHECK(s.events.failures == 0);
  CHECK(s.server.respond(over, 431, {}, true));  // the stream is open: its answer goes out
}

TEST_CASE("h2 cookie crumbs are joined: a joined cookie over the limit is a 431, crumbs within it are served") {
  pair_of_sessions s;
  const std::string crumb(30'000, 'c');
  s.request(get_with({{"cookie", crumb}, {"cookie", crumb}}));                  // 60,002 bytes joined
  s.request(get_with({{"cookie", crumb}, {"cookie", crumb}, {"cookie", crumb}}));  // 90,004
  s.exchange();
  REQUIRE(s.events.requests.size() == 2);
  CHECK_FALSE(s.events.requests[0].refusal);
  CHECK(s.events.requests[0].request[boost::beast::http::field::cookie].size() == 60'002);
  REQUIRE(s.events.requests[1].refusal);
  CHECK(s.events.requests[1].refusal->kind == error_kind::headers_too_large);
  CHECK(s.events.failures == 0);
}

TEST_CASE("an h2 stream reset in the same read as its HEADERS is delivered closed and takes no answer") {
  pair_of_sessions s;
  const auto id = s.request(get_with({}));
  std::string bytes = s.client_bytes();  // the preface, SETTINGS and the HEADERS, not yet delivered
  bytes += pair_of_sessions::frame(NGHTTP2_RST_STREAM, 0, id, std::string("\0\0\0\x08", 4));  // CANCEL
  s.server.receive(bytes);
  REQUIRE(s.events.requests.size() == 1);  // whole before the reset was read
  CHECK_FALSE(s.server.open(id));           // ... and closed after it: the session starts nothing
  CHECK_FALSE(s.server.respond(id, 200, {}, false));
  s.server.send_data(id, std::string(100'000, 'x'), true);
  CHECK(s.server.buffered(id) == 0);  // nothing is kept for a stream that is gone
}

TEST_CASE("a reset h2 stream holds its slot until its work is done: past the limit new streams are refused") {
  h2_limits limits;
  limits.max_concurrent_streams = 4;
  pair_of_sessions s(limits);
  std::vector<std::int32_t> ids;
  for (int i = 0; i < 4; ++i) ids.push_back(s.request(get_with({})));
  s.exchange();
  REQUIRE(s.events.requests.size() == 4);
  for (auto id : ids) nghttp2_submit_rst_stream(s.client, NGHTTP2_FLAG_NONE, id, NGHTTP2_CANCEL);
  s.exchange();
  CHECK(s.server.slots_taken() == 4);  // reset, but the work (an upstream hop) still runs
  const auto refused = s.request(get_with({}));
  s.exchange();
  CHECK(s.events.requests.size() == 4);
  CHECK(closed_with(s, refused, NGHTTP2_REFUSED_STREAM));
  CHECK(s.events.refusals == std::vector<h2_refusal>{h2_refusal::stream_limit});
  s.server.work_done(ids[0]);
  CHECK(s.server.slots_taken() == 3);
  const auto served = s.request(get_with({}));
  s.exchange();
  REQUIRE(s.events.requests.size() == 5);
  CHECK(s.events.requests[4].stream == served);
}

TEST_CASE("h2 streams opened past the advertised limit are refused one by one while the others are served") {
  h2_limits limits;
  limits.max_concurrent_streams = 4;
  pair_of_sessions s(limits);
  // Sent before the client has read the proxy's SETTINGS (so nghttp2's
  // client does not hold them back), as a client ignoring the limit would.
  std::vector<std::int32_t> ids;
  for (int i = 0; i < 6; ++i) ids.push_back(s.request(get_with({})));
  s.exchange();
  CHECK(nghttp2_session_get_remote_settings(s.client, NGHTTP2_SETTINGS_MAX_CONCURRENT_STREAMS) == 4);
  CHECK(s.events.requests.size() == 4);
  CHECK(closed_with(s, ids[4], NGHTTP2_REFUSED_STREAM));
  CHECK(closed_with(s, ids[5], NGHTTP2_REFUSED_STREAM));
  CHECK_FALSE(s.server.finished());  // no GOAWAY: the four go on
  for (int i = 0; i < 4; ++i) CHECK(s.server.respond(ids[i], 200, {}, true));
}

TEST_CASE("resets a client provokes (MadeYouReset) count toward the flood limit, gistproxy's own do not") {
  h2_limits limits;
  limits.max_resets = 8;
  SECTION("WINDOW_UPDATE overflows: nghttp2 resets each stream, the ninth reset ends the connection") {
    pair_of_sessions s(limits);
    bool open = true;
    for (int i = 0; i < 20 && open; ++i) {
      const auto id = s.request(get_with({}));
      open = s.server.receive(s.client_bytes() + window_overflow(id));
      s.exchange();
      if (!s.events.requests.empty()) CHECK_FALSE(s.server.open(s.events.requests.back().stream));
    }
    CHECK(std::count(s.events.refusals.begin(), s.events.refusals.end(), h2_refusal::rapid_reset) == 1);
    CHECK(s.events.requests.size() <= 9);
  }
  SECTION("resets gistproxy chooses (an upstream that failed) are not the client's flood") {
    pair_of_sessions s(limits);
    for (int i = 0; i < 20; ++i) {
      const auto id = s.request(get_with({}));
      s.exchange();
      s.server.reset(id, NGHTTP2_INTERNAL_ERROR);
      s.exchange();
    }
    CHECK(s.events.refusals.empty());
    CHECK(s.events.requests.size() == 20);
  }
}

TEST_CASE("an exception in the h2 session's code resets that stream only and never crosses nghttp2") {
  pair_of_sessions s;
  s.events.throw_on_request = true;
  const auto failed = s.request(get_with({}));
  s.exchange();
  CHECK(s.events.failures == 1);
  CHECK(closed_with(s, failed, NGHTTP2_INTERNAL_ERROR));
  s.events.throw_on_request = false;
  const auto next = s.request(get_with({}));
  s.exchange();
  REQUIRE(s.events.requests.size() == 1);
  CHECK(s.events.requests[0].stream == next);
}

TEST_CASE("an h2 request still arriving meets its 408 at next_deadline, without another read") {
  h2_limits limits;
  limits.request_time = std::chrono::seconds(60);
  pair_of_sessions s(limits);
  const auto t0 = h2_connection::clock::time_point{} + std::chrono::hours(1);
  // HEADERS without END_STREAM: a body is announced and never sent.
  fields f{{":method", "POST"}, {":path", "/v1/x"}, {":scheme", "http"}, {":authority", "a"}};
  std::vector<nghttp2_nv> nva;
  for (auto& [n, v] : f)
    nva.push_back({reinterpret_cast<std::uint8_t*>(n.data()), reinterpret_cast<std::uint8_t*>(v.data()), n.size(),
                   v.size(), NGHTTP2_NV_FLAG_NONE});
  const auto id = nghttp2_submit_headers(s.client, NGHTTP2_FLAG_NONE, -1, nullptr, nva.data(), nva.size(), nullptr);
  s.exchange(t0);
  REQUIRE(s.server.next_deadline() == t0 + std::chrono::seconds(60));
  s.server.expire(t0 + std::chrono::seconds(59));
  CHECK(s.events.requests.empty());
  s.server.expire(t0 + std::chrono::seconds(60));
  REQUIRE(s.events.requests.size() == 1);
  CHECK(s.events.requests[0].stream == id);
  REQUIRE(s.events.requests[0].refusal);
  CHECK(s.events.requests[0].refusal->kind == error_kind::request_timeout);
  CHECK_FALSE(s.server.next_deadline());
}
