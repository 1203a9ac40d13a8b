// The upstream side of an HTTP/2 client connection
// (proxy/net/h2_client_connection.hpp): arbitrary frames after a SETTINGS
// frame, fed in arbitrary pieces, while the client has requests open (one
// streaming its body). Nothing may crash, and the client may never hand
// over more than its bounds let an upstream send: a head over the header
// list, unconsumed body past the stream window, streams past the limit.
#include <algorithm>
#include <cstdint>
#include <map>
#include <string>

#include "proxy/net/h2_client_connection.hpp"
#include "tests/fuzz/fuzz_input.hpp"

using namespace gistproxy::proxy;

namespace {

constexpr std::string_view empty_settings{"\0\0\0\x04\0\0\0\0\0", 9};

class checking_events final : public h2_client_events {
 public:
  explicit checking_events(const h2_client_limits& l) : limits_(l) {}
  void response_head(std::int32_t, unsigned status, h2_fields fields) override {
    std::size_t bytes = 0;
    for (const auto& [n, v] : fields) bytes += n.size() + v.size() + 32;
    if (status < 200 || status > 999 || bytes > limits_.max_header_list) __builtin_trap();
  }
  void response_data(std::int32_t stream, std::string_view bytes) override {
    if ((stream / 2) % 2 == 0 && client) {  // every other stream's caller reads at once (ids are odd)
      client->consumed(stream, bytes.size());
      return;
    }
    // Until the upstream acknowledges gistproxy's SETTINGS it may use
    // HTTP/2's default window (RFC 9113 §6.9.2): the bound is the larger.
    if ((held[stream] += bytes.size()) > std::max<std::uint64_t>(65535, limits_.stream_window)) __builtin_trap();
  }
  void response_end(std::int32_t stream) override { held.erase(stream); }
  void stream_failed(std::int32_t stream, h2_client_failure, std::uint32_t) override { held.erase(stream); }
  void drained(std::int32_t) override {}
  void connection_ended(std::uint32_t) override {}
  void callback_failed() noexcept override {}
  h2_client_connection* client = nullptr;
  std::map<std::int32_t, std::uint64_t> held;

 private:
  h2_client_limits limits_;
};

}  // namespace

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
  gistproxy::fuzz::input in(data, size);
  h2_client_limits limits;
  limits.max_streams = 4;
  limits.max_header_list = 2048;
  limits.stream_window = 4096;
  limits.connection_window = 16384;
  limits.max_send_buffered = 1024;
  checking_events events(limits);
  h2_client_connection conn(events, limits);
  events.client = &conn;
  const h2_client_request get{"GET", "https", "upstream.test", "/v1/models", {{"x-a", "1"}}};
  conn.submit(get);
  const auto streamed = conn.submit({"POST", "https", "upstream.test", "/v1/x", {}}, "{", false);
  std::string out;
  conn.take_output(out);
  bool open = conn.receive(empty_settings);
  const std::string_view frames = in.rest();
  std::size_t at = 0;
  while (open && at < frames.size()) {
    const std::size_t step = 1 + (static_cast<unsigned char>(frames[at]) % 97);  // piece sizes from the input itself
    open = conn.receive(frames.substr(at, step));
    at += step;
    if (streamed) conn.send_data(*streamed, frames.substr(0, std::min<std::size_t>(at, 512)), at >= frames.size());
    if (conn.can_submit()) conn.submit(get);
    if (conn.streams_open() > limits.max_streams || (streamed && conn.buffered(*streamed) > limits.max_send_buffered))
      __builtin_trap();
    out.clear();
    while (conn.take_output(out)) out.clear();  // bounded: take_output returns false once nothing is queued
  }
  conn.connection_lost();
  return 0;
}
