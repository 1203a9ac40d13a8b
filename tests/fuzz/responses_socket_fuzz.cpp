// The Responses WebSocket message mapping on fuzzed frames. Beyond "no
// crash": a read client create is the frame without `type` and with
// `stream` true (nlohmann as the oracle on valid frames) and reads back the
// same through the upstream create frame; an upstream event's SSE gives
// back exactly its frame (CR read as LF); an error event is always JSON;
// nothing is read past its bound.
#include <cstdint>
#include <string>
#include <vector>

#include <nlohmann/json.hpp>

#include "rewrite/dialects/responses/responses_socket.hpp"
#include "rewrite/json/checked.hpp"
#include "tests/fuzz/fuzz_input.hpp"

using namespace gistproxy::rewrite;
using J = nlohmann::json;

namespace {

// What a JSON oracle may judge: nlohmann reads a NUL byte as the end of input.
bool oracle_valid(std::string_view text) {
  return text.find('\0') == std::string_view::npos && checked::within_depth(text, 500) && J::accept(text);
}

void check_client_frame(std::string_view frame, std::size_t bound) {
  const auto read = read_client_frame(frame, bound);
  if (read.kind == client_frame_kind::refused) {
    if (read.refusal.empty() || !read.request_body.empty()) __builtin_trap();
    return;
  }
  if (frame.size() > bound) __builtin_trap();
  if (read.kind != client_frame_kind::create) return;
  if (oracle_valid(frame)) {
    auto want = J::parse(frame);
    want.erase("type");
    want["stream"] = true;
    if (J::parse(read.request_body, nullptr, false) != want) __builtin_trap();
  }
  const auto upstream = response_create_frame(read.request_body);
  if (!upstream) __builtin_trap();
  const auto again = read_client_frame(*upstream, upstream->size());
  if (again.kind != client_frame_kind::create || again.request_body != read.request_body) __builtin_trap();
}

std::string lf_lines(std::string_view frame) {
  std::string out;
  for (std::size_t i = 0; i < frame.size(); ++i) {
    if (frame[i] == '\r') {
      out += '\n';
      if (i + 1 < frame.size() && frame[i + 1] == '\n') ++i;
    } else {
      out += frame[i];
    }
  }
  return out;
}

std::vector<std::string> frames_of(std::string_view sse, std::size_t cut, std::size_t bound) {
  sse_to_client_frames cutter(bound);
  std::vector<std::string> out;
  auto keep = [&](std::string_view f) { out.emplace_back(f); };
  cut = cut < sse.size() ? cut : sse.size();
  cutter.feed(sse.substr(0, cut), keep);
  cutter.feed(sse.substr(cut), keep);
  return out;
}

void check_upstream_frame(std::string_view frame, std::size_t bound, std::size_t cut) {
  const auto event = sse_of_upstream_frame(frame, bound);
  if (!event) return;
  if (frame.size() > bound) __builtin_trap();
  const auto back = frames_of(event->sse, cut, SIZE_MAX);
  if (back.size() != 1 || back[0] != lf_lines(frame)) __builtin_trap();
}

}  // namespace

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
  gistproxy::fuzz::input in(data, size);
  const std::size_t bound = in.u16();
  const std::size_t cut = in.u16();
  const int status = int(in.u16()) - 1000;
  const std::string_view frame = in.rest();
  check_client_frame(frame, bound);
  check_upstream_frame(frame, bound, cut);
  if (!J::accept(error_event_frame(status, frame, bound))) __builtin_trap();
  // The input as the SSE the exchange writes: no frame is empty or [DONE].
  for (const auto& f : frames_of(frame, cut, bound))
    if (f.empty() || f == "[DONE]") __builtin_trap();
  return 0;
}
