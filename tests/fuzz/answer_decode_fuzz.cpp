// Compressed upstream answers (gzip, deflate, br, zstd), decoded as they
// stream: never a crash, never more than the asked-for bytes per step, and
// the same bytes whether decoded whole or piece by piece.
#include "rewrite/content_decoder.hpp"

#include <array>
#include <string>

using namespace gistproxy::rewrite;

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
  if (size < 2) return 0;
  const auto coding = std::array{content_coding::gzip, content_coding::deflate, content_coding::br,
                                 content_coding::zstd}[data[0] % 4];
  const std::size_t piece = 1 + data[1] % 64;  // how the network cuts the body
  std::string_view body(reinterpret_cast<const char*>(data + 2), size - 2);
  constexpr std::size_t limit = 1 << 20;

  const auto whole = content_decoder::decode_whole(coding, body, limit);
  if (whole && whole->size() > limit) __builtin_trap();

  content_decoder d(coding);
  std::string streamed;
  bool ok = true;
  for (std::size_t at = 0; ok && at < body.size() && streamed.size() <= limit; at += piece) {
    d.feed(body.substr(at, piece));
    for (int steps = 0; ok && d.pending() && streamed.size() <= limit; ++steps) {
      const std::size_t before = streamed.size();
      ok = d.decode(streamed, 4096);
      if (streamed.size() - before > 4096) __builtin_trap();
      if (steps > 1 << 20) __builtin_trap();  // pending() must end
    }
  }
  if (whole && ok && d.complete() && streamed != *whole) __builtin_trap();
  return 0;
}
