// An HTTP/2 client that writes frames by hand, for hostile tests nghttp2's
// client will not help with (a WINDOW_UPDATE that overflows a window, a
// RST_STREAM in the same write as its HEADERS, more streams than allowed).
// It reads only what the tests assert on: the server's SETTINGS, which
// streams it answered or reset (and with what code), and its GOAWAY. Every
// wait is bounded by a deadline.
#pragma once

#include <chrono>
#include <cstdint>
#include <functional>
#include <map>
#include <optional>
#include <set>
#include <string>

namespace gistproxy::testing {

class raw_h2 {
 public:
  explicit raw_h2(std::uint16_t port);  // connects; sends the preface and an empty SETTINGS
  ~raw_h2();
  raw_h2(const raw_h2&) = delete;
  raw_h2& operator=(const raw_h2&) = delete;

  static std::string frame(std::uint8_t type, std::uint8_t flags, std::int32_t stream, const std::string& payload);
  // A GET of `path` (HPACK literals, never indexed: no table state to keep).
  static std::string get(std::int32_t stream, const std::string& path);
  // The head of a POST whose body follows in data() frames.
  static std::string post_head(std::int32_t stream, const std::string& path);
  static std::string data(std::int32_t stream, const std::string& bytes, bool end);
  static std::string reset(std::int32_t stream, std::uint32_t code = 0x8);  // CANCEL
  static std::string window_update(std::int32_t stream, std::uint32_t increment);

  void send(const std::string& bytes);
  // Reads frames until `done()` holds, the connection ends or `timeout` passes.
  bool read_until(const std::function<bool()>& done, std::chrono::milliseconds timeout = std::chrono::seconds(10));

  std::optional<std::uint32_t> max_concurrent_streams;  // from the server's SETTINGS
  std::set<std::int32_t> answered;                      // streams the server sent HEADERS on
  std::map<std::int32_t, std::uint32_t> resets;         // streams the server reset, with the code
  std::optional<std::uint32_t> goaway;                  // the server's GOAWAY error code
  bool ended = false;

 private:
  void on_frame(std::uint8_t type, std::uint8_t flags, std::int32_t stream, const std::string& payload);
  int fd_ = -1;
  std::string pending_;  // bytes read, not yet a whole frame
};

}  // namespace gistproxy::testing
