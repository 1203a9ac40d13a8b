// A minimal WebSocket client for tests (plain ws://, Boost.Beast), driven
// from the test thread: every call runs its own io_context for a bounded
// time, so a silent server makes a call return empty, never hang. A read
// stays pending between calls (pings are answered while a call runs), and
// what it reads waits in an inbox.
#pragma once

#include <chrono>
#include <cstdint>
#include <deque>
#include <map>
#include <memory>
#include <nlohmann/json.hpp>
#include <optional>
#include <string>
#include <vector>

namespace gistproxy::testing {

struct ws_client_options {
  std::string target = "/v1/responses";
  std::map<std::string, std::string> headers;  // added to the upgrade request
  bool offer_deflate = true;                   // as Codex does (permessage-deflate)
  std::chrono::milliseconds timeout = std::chrono::seconds(10);  // connect and handshake
};

class ws_client {
 public:
  // Connects and asks for the upgrade; never throws: see open() and handshake_status().
  ws_client(const std::string& host, std::uint16_t port, ws_client_options options = {});
  ~ws_client();
  ws_client(const ws_client&) = delete;
  ws_client& operator=(const ws_client&) = delete;

  bool open() const;                 // upgraded and not closed
  int handshake_status() const;      // 101, a refusal's status, or 0 (no answer)
  const std::map<std::string, std::string>& handshake_headers() const;  // lowercase names
  const std::string& refusal_body() const;

  bool send_text(const std::string& payload);
  bool send_binary(const std::string& payload);

  struct frame {
    bool text = true;
    std::string payload;
  };
  // The next frame; nullopt when none came within `timeout` or the socket closed.
  std::optional<frame> read(std::chrono::milliseconds timeout = std::chrono::seconds(10));

  // Frames until one whose type ends a response (response.completed,
  // response.failed, response.incomplete, error), the socket closes, or the
  // time is up. `end`: that last type, empty when none came.
  struct response {
    std::vector<std::string> frames;
    std::vector<nlohmann::json> events;  // the frames that parsed as JSON
    std::string end;
    const nlohmann::json* last() const { return events.empty() ? nullptr : &events.back(); }
  };
  response read_response(std::chrono::milliseconds timeout = std::chrono::seconds(10));
  // Sends {"type":"response.create", ...body} and reads its response.
  response create(nlohmann::json body, std::chrono::milliseconds timeout = std::chrono::seconds(10));

  bool closed() const;      // the server closed or the connection broke
  int close_code() const;   // the server's close frame code; 0 without one
  void close(std::chrono::milliseconds timeout = std::chrono::seconds(5));

 private:
  struct impl;
  std::unique_ptr<impl> impl_;
};

}  // namespace gistproxy::testing
