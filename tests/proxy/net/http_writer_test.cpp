#include "proxy/net/http_writer.hpp"

#include <catch2/catch.hpp>

using namespace gistproxy::proxy;

namespace {

http::request_header<> client_request_head() {
  http::request_header<> h;
  h.method(http::verb::post);
  h.target("/v1/chat/completions");
  h.set(http::field::host, "proxy.local");
  h.set(http::field::content_type, "application/json");
  h.set(http::field::connection, "keep-alive, X-Hop");
  h.set("X-Hop", "dropped: the Connection field names it");
  h.set(http::field::keep_alive, "timeout=5");
  h.set(http::field::transfer_encoding, "chunked");
  h.set(http::field::content_length, "12");
  h.set("TraceParent", "00-0af7651916cd43dd8448eb211c80319c-b7ad6b7169203331-01");
  h.set(http::field::authorization, "Bearer k");
  return h;
}

}  // namespace

TEST_CASE("a request head keeps end-to-end fields in order and drops hop-by-hop ones") {
  auto h = client_request_head();
  auto head = head_builder::request("POST", "/v1/chat/completions", head_size_hint(h));
  head.end_to_end_fields_of(h).field("Host", "api.example").content_length(1024);
  CHECK(std::move(head).finish() ==
        "POST /v1/chat/completions HTTP/1.1\r\n"
        "Content-Type: application/json\r\n"
        "TraceParent: 00-0af7651916cd43dd8448eb211c80319c-b7ad6b7169203331-01\r\n"
        "Authorization: Bearer k\r\n"
        "Host: api.example\r\n"
        "Content-Length: 1024\r\n\r\n");
}

TEST_CASE("a field the caller replaces is left out whatever its case") {
  auto h = client_request_head();
  auto head = head_builder::request("POST", "/x", 0);
  head.end_to_end_fields_of(h, {"traceparent"}).field("traceparent", "ours");
  const auto out = std::move(head).finish();
  CHECK(out.find("0af7651916cd43dd8448eb211c80319c") == std::string::npos);
  CHECK(out.find("traceparent: ours\r\n") != std::string::npos);
}

TEST_CASE("a response head says how the connection continues as Beast's keep_alive would") {
  http::response_header<> from;
  from.result(http::status::ok);
  from.set(http::field::content_type, "text/event-stream");
  from.set(http::field::connection, "close");
  auto build = [&](unsigned version, bool keep) {
    auto head = head_builder::response(version, 200, "", head_size_hint(from));
    head.end_to_end_fields_of(from).connection(version, keep);
    return std::move(head).finish();
  };
  CHECK(build(11, true) == "HTTP/1.1 200 OK\r\nContent-Type: text/event-stream\r\n\r\n");
  CHECK(build(11, false) == "HTTP/1.1 200 OK\r\nContent-Type: text/event-stream\r\nConnection: close\r\n\r\n");
  CHECK(build(10, true) == "HTTP/1.0 200 OK\r\nContent-Type: text/event-stream\r\nConnection: keep-alive\r\n\r\n");
  CHECK(build(10, false) == "HTTP/1.0 200 OK\r\nContent-Type: text/event-stream\r\n\r\n");
}

TEST_CASE("a response head keeps the upstream's reason phrase") {
  auto head = head_builder::response(11, 429, "Slow Down", 0);
  CHECK(std::move(head).finish() == "HTTP/1.1 429 Slow Down\r\n\r\n");
}

TEST_CASE("status lines and chunk sizes are formatted exactly") {
  CHECK(std::move(head_builder::response(10, 599, "", 0)).finish() == "HTTP/1.0 599 Network Connect Timeout Error\r\n\r\n");
  CHECK(std::move(head_builder::response(11, 101, "Switching Protocols", 0)).finish() ==
        "HTTP/1.1 101 Switching Protocols\r\n\r\n");
  http::response_header<> h;
  h.version(11);
  h.result(http::status::not_found);
  h.reason("");
  CHECK(response_head(h) == "HTTP/1.1 404 Not Found\r\n\r\n");
  CHECK(chunk_prefix(0) == "0\r\n");
  CHECK(chunk_prefix(255) == "ff\r\n");
  CHECK(chunk_prefix(SIZE_MAX) == "ffffffffffffffff\r\n");
}
