// An h2_client_connection and the server h2_connection talking through
// memory, for the client's unit tests (tests/proxy/net/h2_client_*_test.cpp).
#pragma once

#include <map>
#include <optional>
#include <stdexcept>
#include <string>
#include <vector>

#include "proxy/net/h2_client_connection.hpp"
#include "tests/proxy/net/h2_pair.hpp"

namespace gistproxy::testing {

struct client_recorder final : h2_client_events {
  struct response {
    unsigned status = 0;
    h2_fields fields;
    std::string body;
    int pieces = 0;
    bool ended = false;
    std::optional<h2_client_failure> failure;
    std::uint32_t code = 0;
  };
  std::map<std::int32_t, response> responses;
  std::vector<std::uint32_t> connection_codes;
  int failures = 0;
  bool throw_on_head = false;  // a bug in the caller: the callback that delivers must not let it out
  h2_client_connection* consume = nullptr;  // when set, every piece is consumed as it arrives

  void response_head(std::int32_t s, unsigned status, h2_fields fields) override {
    if (throw_on_head) throw std::runtime_error("caller bug");
    responses[s].status = status;
    responses[s].fields = std::move(fields);
  }
  void response_data(std::int32_t s, std::string_view bytes) override {
    responses[s].body.append(bytes);
    ++responses[s].pieces;
    if (consume) consume->consumed(s, bytes.size());
  }
  void response_end(std::int32_t s) override { responses[s].ended = true; }
  void stream_failed(std::int32_t s, h2_client_failure why, std::uint32_t code) override {
    responses[s].failure = why;
    responses[s].code = code;
  }
  void drained(std::int32_t) override {}
  void connection_ended(std::uint32_t code) override { connection_codes.push_back(code); }
  void callback_failed() noexcept override { ++failures; }
};

struct client_and_server {
  recorder server_events;
  client_recorder events;
  h2_connection server;
  h2_client_connection client;

  explicit client_and_server(h2_client_limits client_limits = {}, h2_limits server_limits = {})
      : server(server_events, server_limits), client(events, client_limits) {}

  // Moves bytes both ways until neither side has anything to say (flow
  // control can take many round trips); `between` runs after each round.
  template <class Between>
  void exchange(Between between) {
    for (int round = 0; round < 4096; ++round) {
      std::string to_server, to_client;
      client.take_output(to_server);
      if (!to_server.empty()) server.receive(to_server);
      server.take_output(to_client);
      if (!to_client.empty()) client.receive(to_client);
      between();
      if (to_server.empty() && to_client.empty()) return;
    }
    throw std::runtime_error("the two sides never went quiet");
  }
  void exchange() {
    exchange([] {});
  }
  static h2_client_request get(std::string authority = "upstream.test") {
    return {"GET", "http", std::move(authority), "/v1/models", {}};
  }
};

}  // namespace gistproxy::testing
