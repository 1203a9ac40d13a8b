// The HTTP/2 connection without sockets (proxy/net/h2_connection.hpp): an
// nghttp2 client session talks to it through memory, and what it assembles
// is the request an HTTP/1.1 client would have sent.
#include <catch2/catch.hpp>
#include <nghttp2/nghttp2.h>

#include <cstring>

#include "tests/proxy/net/h2_pair.hpp"

using namespace gistproxy::proxy;
using gistproxy::testing::pair_of_sessions;
namespace http = boost::beast::http;


TEST_CASE("an h2 request becomes the HTTP/1.1 request it stands for: method, target, Host from :authority, cookies joined") {
  pair_of_sessions s;
  s.request({{":method", "GET"}, {":path", "/v1/models/../models?x=1"}, {":scheme", "http"}, {":authority", "api.test:8080"},
             {"cookie", "a=1"}, {"x-other", "y"}, {"cookie", "b=2"}});
  s.exchange();
  REQUIRE(s.events.requests.size() == 1);
  const auto& r = s.events.requests[0];
  CHECK_FALSE(r.refusal);
  CHECK(r.request.method() == http::verb::get);
  CHECK(r.request.target() == "/v1/models?x=1");  // dot segments removed, as on HTTP/1.1
  CHECK(r.request.version() == 20);
  CHECK(r.request[http::field::host] == "api.test:8080");
  CHECK(r.request[http::field::cookie] == "a=1; b=2");
  CHECK(r.request["x-other"] == "y");
}

TEST_CASE("an h2 request keeps its pseudo-fields byte for byte beside the request made of them") {
  // A SigV4 signature over :authority and the path verifies upstream only
  // with these bytes (h2_upstream_hop sends them), whatever the request made of them says.
  pair_of_sessions s;
  s.request({{":method", "POST"}, {":path", "/model/a%3Ab/../b/converse?x=%2F&y"}, {":scheme", "http"},
             {":authority", "Bedrock.Test:8443"}});
  s.request({{":method", "POST"}, {":path", "/p"}, {":scheme", "https"}, {":authority", "a.test"}, {"host", "b.test"}});
  s.exchange();
  REQUIRE(s.events.requests.size() == 2);
  const auto& made = s.events.requests[0];
  CHECK(made.request.target() == "/model/b/converse?x=%2F&y");  // normalised for gistproxy's own reading
  CHECK(made.pseudo.path == "/model/a%3Ab/../b/converse?x=%2F&y");     // as sent, for the upstream
  CHECK(made.pseudo.authority == "Bedrock.Test:8443");
  CHECK(made.pseudo.scheme == "http");
  CHECK(made.pseudo.host_from_authority);
  const auto& with_host = s.events.requests[1];
  CHECK(with_host.pseudo.authority == "a.test");
  CHECK(with_host.pseudo.scheme == "https");
  CHECK_FALSE(with_host.pseudo.host_from_authority);  // the client's own Host goes upstream as its own field
  CHECK(with_host.request[http::field::host] == "b.test");
}

TEST_CASE("an h2 request body over the limit is refused 413 at once and the rest of it dropped") {
  h2_limits limits;
  limits.max_body = 100;
  pair_of_sessions s(limits);
  static std::string body(1000, 'x');
  static std::size_t sent = 0;
  sent = 0;
  nghttp2_data_provider prd{};
  prd.read_callback = [](nghttp2_session*, std::int32_t, std::uint8_t* buf, std::size_t length, std::uint32_t* flags,
                         nghttp2_data_source*, void*) -> ssize_t {
    const std::size_t n = std::min<std::size_t>({length, body.size() - sent, 64});
    std::memcpy(buf, body.data() + sent, n);
    sent += n;
    if (sent == body.size()) *flags |= NGHTTP2_DATA_FLAG_EOF;
    return ssize_t(n);
  };
  s.post(&prd);
  s.exchange();
  REQUIRE(s.events.requests.size() == 1);
  REQUIRE(s.events.requests[0].refusal);
  CHECK(s.events.requests[0].refusal->kind == error_kind::body_too_large);
  CHECK(s.events.requests[0].request.body().empty());
}

TEST_CASE("a streamed h2 response waits for data, resumes, and ends with its last piece") {
  pair_of_sessions s;
  const auto id = s.request({{":method", "GET"}, {":path", "/"}, {":scheme", "http"}, {":authority", "a"}});
  s.exchange();
  REQUIRE(s.events.requests.size() == 1);
  REQUIRE(s.server.respond(id, 200, {{"content-type", "text/event-stream"}}, false));
  s.exchange();  // the head goes out; the body is deferred until there is some
  CHECK(s.client_got.empty());
  s.server.send_data(id, "data: 1\n\n", false);
  s.exchange();
  CHECK(s.client_got == "data: 1\n\n");
  CHECK(s.events.closed.empty());
  s.server.send_data(id, "data: 2\n\n", true);
  s.exchange();
  CHECK(s.client_got == "data: 1\n\ndata: 2\n\n");
  REQUIRE(s.events.closed.size() == 1);
  CHECK(s.events.closed[0] == std::pair<std::int32_t, std::uint32_t>{id, 0});
  CHECK(s.server.buffered(id) == 0);
}

TEST_CASE("h2 bodies arriving on one connection share a budget: past it a stream is refused and the others go on") {
  h2_limits limits;
  limits.max_body = 1000;
  limits.max_receiving = 1000;
  pair_of_sessions s(limits);
  // Two uploads of 600 bytes each, interleaved, neither ended yet: the second
  // one's bytes take the connection over its budget.
  std::string n[] = {":method", ":path", ":scheme", ":authority"}, v[] = {"POST", "/v1/x", "http", "a"};
  nghttp2_nv nva[4];
  for (int i = 0; i < 4; ++i)
    nva[i] = {reinterpret_cast<std::uint8_t*>(n[i].data()), reinterpret_cast<std::uint8_t*>(v[i].data()), n[i].size(),
              v[i].size(), NGHTTP2_NV_FLAG_NONE};
  const auto first = nghttp2_submit_headers(s.client, NGHTTP2_FLAG_NONE, -1, nullptr, nva, 4, nullptr);
  const auto second = nghttp2_submit_headers(s.client, NGHTTP2_FLAG_NONE, -1, nullptr, nva, 4, nullptr);
  s.exchange();
  static const std::string part(600, 'x');
  nghttp2_data_provider once{};
  once.read_callback = [](nghttp2_session*, std::int32_t, std::uint8_t* buf, std::size_t, std::uint32_t* flags,
                          nghttp2_data_source*, void*) -> ssize_t {
    std::memcpy(buf, part.data(), part.size());
    *flags |= NGHTTP2_DATA_FLAG_EOF;
    return ssize_t(part.size());
  };
  nghttp2_data_provider end{};
  end.read_callback = [](nghttp2_session*, std::int32_t, std::uint8_t*, std::size_t, std::uint32_t* flags,
                         nghttp2_data_source*, void*) -> ssize_t {
    *flags |= NGHTTP2_DATA_FLAG_EOF;
    return 0;
  };
  nghttp2_submit_data(s.client, NGHTTP2_FLAG_NONE, first, &once);  // in flight, not ended
  s.exchange();
  nghttp2_submit_data(s.client, NGHTTP2_FLAG_END_STREAM, second, &once);  // over the budget: refused
  s.exchange();
  nghttp2_submit_data(s.client, NGHTTP2_FLAG_END_STREAM, first, &end);
  s.exchange();
  CHECK(s.events.refusals == std::vector<h2_refusal>{h2_refusal::body_budget});
  REQUIRE(s.events.requests.size() == 1);  // the other one, whole
  CHECK(s.events.requests[0].stream == first);
  CHECK(s.events.requests[0].request.body() == part);
  const std::pair<std::int32_t, std::uint32_t> refused{second, NGHTTP2_REFUSED_STREAM};
  CHECK(std::find(s.events.closed.begin(), s.events.closed.end(), refused) != s.events.closed.end());
}

TEST_CASE("an h2 request still short of its body after the request time is answered 408 on the next read") {
  h2_limits limits;
  limits.request_time = std::chrono::seconds(60);
  pair_of_sessions s(limits);
  // A body that trickles: the provider gives what the test allows, never the end.
  static std::size_t allowance = 0;
  allowance = 0;
  nghttp2_data_provider trickle{};
  trickle.read_callback = [](nghttp2_session*, std::int32_t, std::uint8_t* buf, std::size_t length, std::uint32_t*,
                             nghttp2_data_source*, void*) -> ssize_t {
    if (allowance == 0) return NGHTTP2_ERR_DEFERRED;
    const std::size_t n = std::min(length, allowance);
    std::memset(buf, 'x', n);
    allowance -= n;
    return ssize_t(n);
  };
  auto submit = [&] { return s.post(&trickle); };
  auto trickle_at = [&](std::int32_t stream, h2_connection::clock::time_point at) {
    allowance = 10;
    nghttp2_session_resume_data(s.client, stream);
    s.exchange(at);
  };
  const auto t0 = h2_connection::clock::time_point{} + std::chrono::hours(1);
  const auto slow = submit();
  s.exchange(t0);
  const auto later = submit();
  s.exchange(t0 + std::chrono::seconds(50));
  trickle_at(slow, t0 + std::chrono::seconds(59));
  CHECK(s.events.requests.empty());  // within its time: still arriving
  trickle_at(slow, t0 + std::chrono::seconds(61));
  REQUIRE(s.events.requests.size() == 1);
  CHECK(s.events.requests[0].stream == slow);
  REQUIRE(s.events.requests[0].refusal);
  CHECK(s.events.requests[0].refusal->kind == error_kind::request_timeout);
  CHECK(s.events.requests[0].request.body().empty());
  // The stream that began later has time left; its next bytes are kept.
  trickle_at(later, t0 + std::chrono::seconds(100));
  CHECK(s.events.requests.size() == 1);
}

TEST_CASE("a draining h2 connection refuses a stream opened before its GOAWAY went out and ends after the open one") {
  pair_of_sessions s;
  auto get = [&] { return s.request({{":method", "GET"}, {":path", "/"}, {":scheme", "http"}, {":authority", "a"}}); };
  const auto open = get();
  s.exchange();
  REQUIRE(s.events.requests.size() == 1);
  s.server.drain();
  // The client's next stream reaches the proxy before the GOAWAY leaves it.
  const auto late = get();
  const std::uint8_t* p = nullptr;
  std::string to_server;
  for (ssize_t n; (n = nghttp2_session_mem_send(s.client, &p)) > 0;) to_server.append(reinterpret_cast<const char*>(p), n);
  REQUIRE(s.server.receive(to_server));
  s.exchange();
  CHECK(s.events.requests.size() == 1);  // never assembled, never served
  const std::pair<std::int32_t, std::uint32_t> refused{late, NGHTTP2_REFUSED_STREAM};
  CHECK(std::find(s.events.closed.begin(), s.events.closed.end(), refused) != s.events.closed.end());
  CHECK_FALSE(s.server.finished());  // the open stream still runs
  REQUIRE(s.server.respond(open, 200, {}, true));
  s.exchange();
  CHECK(s.server.finished());
}
