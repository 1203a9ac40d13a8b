// The input side of an HTTP/2 connection (proxy/net/h2_connection.hpp):
// arbitrary frames after the client preface, fed in arbitrary pieces. nghttp2
// parses them and gistproxy assembles requests; requests are answered (whole,
// streamed, or reset) so the output side runs too. Nothing may crash, and no
// request may exceed the limits it was accepted under.
#include <cstdint>
#include <string>
#include <vector>

#include "proxy/net/h2_connection.hpp"
#include "tests/fuzz/fuzz_input.hpp"

using namespace gistproxy::proxy;

namespace {

constexpr std::string_view preface = "PRI * HTTP/2.0\r\n\r\nSM\r\n\r\n";

class answering_events final : public h2_events {
 public:
  explicit answering_events(const h2_limits& l) : limits_(l) {}
  void request_ready(h2_request r) override {
    if (r.request.body().size() > limits_.max_body) __builtin_trap();
    ready.push_back(std::move(r));
  }
  void stream_closed(std::int32_t, std::uint32_t) override {}
  void drained(std::int32_t) override {}
  void refused(h2_refusal) override {}
  void callback_failed() noexcept override {}
  std::vector<h2_request> ready;

 private:
  h2_limits limits_;
};

}  // namespace

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
  gistproxy::fuzz::input in(data, size);
  h2_limits limits;
  limits.max_body = 4096;
  limits.max_resets = 8;
  answering_events events(limits);
  h2_connection conn(events, limits);
  std::string out;
  bool open = conn.receive(preface);
  const std::string_view frames = in.rest();
  std::size_t at = 0, step = 1;
  while (open && at < frames.size()) {
    step = 1 + (static_cast<unsigned char>(frames[at]) % 97);  // piece sizes from the input itself
    open = conn.receive(frames.substr(at, step));
    at += step;
    for (auto& r : events.ready) {
      const std::vector<std::pair<std::string, std::string>> fields{{"content-type", "text/plain"}};
      switch (r.stream % 3) {
        case 0: conn.respond(r.stream, 200, fields, true); break;
        case 1:
          if (conn.respond(r.stream, 200, fields, false)) conn.send_data(r.stream, r.request.body(), true);
          break;
        default: conn.reset(r.stream, 8); break;
      }
      if (conn.buffered(r.stream) > limits.max_body) __builtin_trap();
    }
    events.ready.clear();
    out.clear();
    while (conn.take_output(out)) out.clear();  // bounded: take_output returns false once nothing is queued
  }
  return 0;
}
