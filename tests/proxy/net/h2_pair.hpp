// A client nghttp2 session and an h2_connection talking through memory,
// for the connection's unit tests (tests/proxy/h2_*_test.cpp).
#pragma once

#include <nghttp2/nghttp2.h>

#include <stdexcept>
#include <string>
#include <utility>
#include <vector>

#include "proxy/net/h2_connection.hpp"

namespace gistproxy::testing {

using namespace gistproxy::proxy;

struct recorder final : h2_events {
  std::vector<h2_request> requests;
  std::vector<std::pair<std::int32_t, std::uint32_t>> closed;
  std::vector<h2_refusal> refusals;
  bool throw_on_request = false;  // a bug in the session: the callback that delivers must not let it out
  void request_ready(h2_request r) override {
    if (throw_on_request) throw std::runtime_error("session bug");
    requests.push_back(std::move(r));
  }
  void stream_closed(std::int32_t s, std::uint32_t code) override { closed.emplace_back(s, code); }
  void drained(std::int32_t) override {}
  void refused(h2_refusal why) override { refusals.push_back(why); }
  void callback_failed() noexcept override { ++failures; }
  int failures = 0;
};

// A client session whose bytes go straight to the server, and back.
struct pair_of_sessions {
  recorder events;
  h2_connection server;
  nghttp2_session* client = nullptr;
  std::string client_got;

  explicit pair_of_sessions(h2_limits limits = {}) : server(events, limits) {
    nghttp2_session_callbacks* cb = nullptr;
    nghttp2_session_callbacks_new(&cb);
    nghttp2_session_callbacks_set_on_data_chunk_recv_callback(
        cb, [](nghttp2_session*, std::uint8_t, std::int32_t, const std::uint8_t* d, std::size_t n, void* u) {
          static_cast<pair_of_sessions*>(u)->client_got.append(reinterpret_cast<const char*>(d), n);
          return 0;
        });
    // nghttp2 sends no header block over 64 KiB unless told: the tests send larger ones.
    nghttp2_option* opt = nullptr;
    nghttp2_option_new(&opt);
    nghttp2_option_set_max_send_header_block_length(opt, 1u << 20);
    nghttp2_session_client_new2(&client, cb, this, opt);
    nghttp2_option_del(opt);
    nghttp2_session_callbacks_del(cb);
    nghttp2_submit_settings(client, NGHTTP2_FLAG_NONE, nullptr, 0);
  }
  ~pair_of_sessions() { nghttp2_session_del(client); }

  // `body` (null: none) provides the request body; nghttp2 copies the fields.
  std::int32_t request(std::vector<std::pair<std::string, std::string>> fields, nghttp2_data_provider* body = nullptr) {
    std::vector<nghttp2_nv> nva;
    for (auto& [n, v] : fields)
      nva.push_back({reinterpret_cast<std::uint8_t*>(n.data()), reinterpret_cast<std::uint8_t*>(v.data()), n.size(),
                     v.size(), NGHTTP2_NV_FLAG_NONE});
    return nghttp2_submit_request(client, nullptr, nva.data(), nva.size(), body, nullptr);
  }
  std::int32_t post(nghttp2_data_provider* body) {
    return request({{":method", "POST"}, {":path", "/v1/x"}, {":scheme", "http"}, {":authority", "a"}}, body);
  }
  // What the client has queued, taken without delivering it.
  std::string client_bytes() {
    std::string out;
    const std::uint8_t* p = nullptr;
    for (ssize_t n; (n = nghttp2_session_mem_send(client, &p)) > 0;) out.append(reinterpret_cast<const char*>(p), n);
    return out;
  }
  // A frame written by hand (what nghttp2's client refuses to send).
  static std::string frame(std::uint8_t type, std::uint8_t flags, std::int32_t stream, const std::string& payload) {
    const auto n = payload.size();
    return std::string{char(n >> 16), char(n >> 8), char(n), char(type), char(flags),
                       char(stream >> 24), char(stream >> 16), char(stream >> 8), char(stream)} + payload;
  }
  // Moves bytes both ways until neither side has anything to say; the
  // server reads them at `now`.
  void exchange(h2_connection::clock::time_point now = h2_connection::clock::now()) {
    for (int round = 0; round < 16; ++round) {
      std::string to_server;
      const std::uint8_t* p = nullptr;
      for (ssize_t n; (n = nghttp2_session_mem_send(client, &p)) > 0;) to_server.append(reinterpret_cast<const char*>(p), n);
      if (!to_server.empty()) server.receive(to_server, now);
      std::string to_client;
      server.take_output(to_client);
      if (!to_client.empty())
        nghttp2_session_mem_recv(client, reinterpret_cast<const std::uint8_t*>(to_client.data()), to_client.size());
      if (to_server.empty() && to_client.empty()) return;
    }
  }
};


}  // namespace gistproxy::testing
