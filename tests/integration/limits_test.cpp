// Every size limit a request meets, at its boundary, on each transport the
// listener speaks (HTTP/1.1, HTTP/1.1 over TLS, h2c, h2 over TLS): one under
// and at the limit are served, one over is a clear 431/413 (or a stream
// error), the process stays up and the next request is served. The limits
// (docs/RELIABILITY.md, "Limits"): a header block of 256 KiB, one field of
// 65,533 bytes (name or value: the HTTP library's own bound, checked before
// it can throw), the body's --max-body.
#include <catch2/catch.hpp>

#include "proxy/net/checked_parser.hpp"
#include "tests/integration/harness.hpp"
#include "tests/integration/test_pki.hpp"
#include "tests/support/h2_client.hpp"
#include "tests/support/tls_client.hpp"

using namespace gistproxy::testing;

namespace {

constexpr std::size_t field_limit = gistproxy::proxy::max_field_bytes;  // 65,533
constexpr std::size_t head_limit = 256 * 1024;                           // --max-header-bytes is not a flag: fixed

mock_upstream_options lenient_upstream() {
  mock_upstream_options o;
  o.header_limit = 1 << 20;  // the proxy's limits are under test, not the upstream's
  return o;
}

// The proxy on cleartext and on TLS, before one upstream that takes large heads.
struct limits_stack {
  test_pki pki{"localhost"};
  mock_upstream upstream{lenient_upstream()};
  proxy_process plain{{"--upstream", upstream.url(), "--max-body", "1000"}};
  proxy_process tls{{"--upstream", upstream.url(), "--max-body", "1000", "--tls-cert", pki.cert.string(), "--tls-key",
                     pki.key.string()}};
};

int status_of(const std::string& raw) {
  return raw.starts_with("HTTP/1.1 ") && raw.size() >= 12 ? std::atoi(raw.substr(9, 3).c_str()) : 0;
}

// A GET whose head (request line to the blank line) is exactly `head_bytes`
// long, padded with `X-Pad` fields of at most one field's limit each.
std::string http1_head_of(std::size_t head_bytes) {
  std::string head = "GET /bytes?n=10 HTTP/1.1\r\nHost: x\r\nConnection: close\r\n";
  for (int i = 0; head.size() + 2 < head_bytes; ++i) {
    const std::string name = "X-Pad-" + std::to_string(i) + ": ";
    const std::size_t room = head_bytes - 2 - head.size() - name.size() - 2;
    head += name + std::string(std::min(room, std::size_t(60'000)), 'p') + "\r\n";
  }
  REQUIRE(head.size() + 2 == head_bytes);
  return head + "\r\n";
}

std::string http1_with_field(const std::string& name, std::size_t value_bytes) {
  return "GET /bytes?n=10 HTTP/1.1\r\nHost: x\r\nConnection: close\r\n" + name + ": " +
         std::string(value_bytes, 'v') + "\r\n\r\n";
}

std::string http1_post(std::size_t body_bytes) {
  return "POST /echo HTTP/1.1\r\nHost: x\r\nConnection: close\r\nContent-Length: " + std::to_string(body_bytes) +
         "\r\n\r\n" + std::string(body_bytes, 'b');
}

// One request over each HTTP/1.1 transport: its status.
int over_plain(const limits_stack& s, const std::string& bytes) { return status_of(raw_exchange(s.plain.port(), bytes)); }
int over_tls(const limits_stack& s, const std::string& bytes) {
  tls_client_options o;
  o.ca = s.pki.ca;
  return tls_client(s.tls.port(), o).raw_request(bytes).status;
}

// One HTTP/2 request (h2c, or h2 over TLS when `tls` is set): its status
// (0 when the stream was reset instead, -1 when the connection ended first).
int over_h2(const limits_stack& s, bool tls, const std::string& method, const std::string& body,
            const std::vector<std::pair<std::string, std::string>>& fields) {
  h2_client c(tls ? s.tls.port() : s.plain.port(), 65535, tls ? s.pki.ca.string() : std::string());
  const auto id = c.submit(method, method == "GET" ? "/bytes?n=10" : "/echo", body, fields);
  if (!c.pump_until([&] { return c.responses[id].closed; })) return -1;
  return c.responses[id].status;
}

// The process still serves after a refusal, on the same listener.
void still_serves(const limits_stack& s) {
  CHECK(http_request(s.plain.port(), "GET", "/bytes?n=10").status == 200);
  CHECK(over_tls(s, http1_with_field("X-Small", 1)) == 200);
  CHECK(http_request(s.plain.admin_port(), "GET", "/healthz").status == 200);
}

}  // namespace

TEST_CASE("HTTP/1.1 and TLS: one field at 65,533 bytes is served, one byte more is 431, and the proxy serves on") {
  limits_stack s;
  for (auto send : {over_plain, over_tls}) {
    CHECK(send(s, http1_with_field("X-Big", field_limit - 1)) == 200);
    CHECK(send(s, http1_with_field("X-Big", field_limit)) == 200);
    CHECK(send(s, http1_with_field("X-Big", field_limit + 1)) == 431);  // was: the process aborted
    CHECK(send(s, http1_with_field("X-Big", 65'600)) == 431);
    CHECK(send(s, http1_with_field(std::string(field_limit + 1, 'n'), 1)) == 431);  // a name over it
    still_serves(s);
  }
}

TEST_CASE("HTTP/1.1 and TLS: a head of 256 KiB is served, one byte more is 431, and the proxy serves on") {
  limits_stack s;
  for (auto send : {over_plain, over_tls}) {
    CHECK(send(s, http1_head_of(head_limit - 1)) == 200);
    CHECK(send(s, http1_head_of(head_limit)) == 200);
    CHECK(send(s, http1_head_of(head_limit + 1)) == 431);
    still_serves(s);
  }
}

TEST_CASE("HTTP/1.1 and TLS: a body at --max-body is served, one byte more is 413, and the proxy serves on") {
  limits_stack s;
  for (auto send : {over_plain, over_tls}) {
    CHECK(send(s, http1_post(999)) == 200);
    CHECK(send(s, http1_post(1000)) == 200);
    CHECK(send(s, http1_post(1001)) == 413);
    still_serves(s);
  }
}

TEST_CASE("h2c and h2 over TLS: one field at 65,533 bytes is served, one byte more is 431 on its stream") {
  limits_stack s;
  // 'a' is five bits in HPACK's Huffman code: 100,000 of them are sent as
  // 62,500 bytes, under nghttp2's own bound on a string as sent (below).
  for (bool tls : {false, true}) {
    for (std::size_t n : {field_limit - 1, field_limit})
      CHECK(over_h2(s, tls, "GET", "", {{"x-big", std::string(n, 'a')}}) == 200);
    for (std::size_t n : {field_limit + 1, std::size_t(100'000)})  // was: SIGSEGV with another stream open
      CHECK(over_h2(s, tls, "GET", "", {{"x-big", std::string(n, 'a')}}) == 431);
    // Cookie crumbs are one field once joined (RFC 9113 §8.2.3).
    const std::string crumb(30'000, 'c');
    CHECK(over_h2(s, tls, "GET", "", {{"cookie", crumb}, {"cookie", crumb}}) == 200);
    CHECK(over_h2(s, tls, "GET", "", {{"cookie", crumb}, {"cookie", crumb}, {"cookie", crumb}}) == 431);
  }
  still_serves(s);
  const std::string series = R"(gistproxy_h2_refusals_total{reason="field_size"})";
  CHECK(series_value(metrics_with(s.plain.admin_port(), {series + " 3"}), series) == 3);
  CHECK(series_value(metrics_with(s.tls.admin_port(), {series + " 3"}), series) == 3);
}

TEST_CASE("h2c and h2 over TLS: a header list of 256 KiB is served, one byte more is 431 on its stream") {
  limits_stack s;
  // The list's size counts each field's name, value and 32 bytes (RFC 9113
  // §6.5.2), the client's four pseudo-header fields included. A block as
  // sent is at most 9 frames of 16 KiB (the CONTINUATION limit): one field
  // repeated goes by its HPACK index, as a client that hits this limit does.
  const std::size_t pseudo = (7 + 3 + 32) + (5 + 11 + 32) + (7 + 4 + 32) + (10 + 9 + 32);
  auto list_of = [&](std::size_t total) {
    const std::pair<std::string, std::string> repeated{"x-rep", std::string(3000, 'a')};
    std::vector<std::pair<std::string, std::string>> fields;
    std::size_t size = pseudo;
    while (size + 2 * (5 + 3000 + 32) < total) {
      fields.push_back(repeated);
      size += 5 + 3000 + 32;
    }
    const std::size_t pad = total - size - 5 - 32;
    fields.emplace_back("x-pad", std::string(pad, 'a'));
    REQUIRE(size + 5 + pad + 32 == total);
    return fields;
  };
  for (bool tls : {false, true}) {
    CHECK(over_h2(s, tls, "GET", "", list_of(head_limit - 1)) == 200);
    CHECK(over_h2(s, tls, "GET", "", list_of(head_limit)) == 200);
    CHECK(over_h2(s, tls, "GET", "", list_of(head_limit + 1)) == 431);
  }
  still_serves(s);
}

TEST_CASE("h2c and h2 over TLS: a body at --max-body is served, one byte more is 413 on its stream") {
  limits_stack s;
  for (bool tls : {false, true}) {
    for (std::size_t n : {999, 1000}) CHECK(over_h2(s, tls, "POST", std::string(n, 'b'), {}) == 200);
    CHECK(over_h2(s, tls, "POST", std::string(1001, 'b'), {}) == 413);
  }
  still_serves(s);
}

TEST_CASE("h2c: an HPACK string longer than nghttp2's 65,536 bytes ends that connection only (COMPRESSION_ERROR)") {
  limits_stack s;
  h2_client c(s.plain.port());
  c.send_queued();
  // HEADERS + CONTINUATIONs carrying one literal field whose value declares
  // 70,000 bytes (7-bit prefix 127, then 69,873 in 7-bit groups).
  std::string block("\x00\x01x\x7f", 4);
  for (std::size_t rest = 70'000 - 127; ; rest >>= 7) {
    if (rest < 128) {
      block += char(rest);
      break;
    }
    block += char(0x80 | (rest & 0x7f));
  }
  block += std::string(70'000, 'v');
  auto frame = [](std::uint8_t type, std::uint8_t flags, const std::string& payload) {
    const auto n = payload.size();
    return std::string{char(n >> 16), char(n >> 8), char(n), char(type), char(flags), 0, 0, 0, 1} + payload;
  };
  std::string frames;
  for (std::size_t at = 0; at < block.size(); at += 16384) {
    const bool last = at + 16384 >= block.size();
    frames += frame(at == 0 ? 0x1 : 0x9, (last ? 0x4 : 0) | (at == 0 ? 0x1 : 0), block.substr(at, 16384));
  }
  c.send_raw(frames);
  REQUIRE(c.pump_until([&] { return c.ended; }));
  REQUIRE(c.goaway.has_value());
  CHECK(*c.goaway == 0x9);  // COMPRESSION_ERROR: the library's own bound, documented
  still_serves(s);
}

TEST_CASE("TLS: a record over the protocol's size ends that handshake only, counted, and the proxy serves on") {
  limits_stack s;
  // A handshake record declaring 65,535 bytes (TLS allows 16,384 + 2,048).
  raw_exchange(s.tls.port(), std::string("\x16\x03\x01\xff\xff", 5) + std::string(20'000, '\x01'),
               std::chrono::seconds(3));
  const std::string series = R"(gistproxy_tls_handshakes_total{result="failed"})";
  CHECK(series_value(metrics_with(s.tls.admin_port(), {series + " 1"}), series) == 1);
  still_serves(s);
}
