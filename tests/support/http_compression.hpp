// Content codings as the real LLM APIs' front ends apply them, for test
// upstreams: pick a coding from the client's Accept-Encoding, compress a whole
// body, or compress a stream event by event (flushed after each, so it still
// streams). gzip, deflate (zlib format), br and zstd.
#pragma once

#include <memory>
#include <optional>
#include <string>
#include <string_view>

namespace gistproxy::testing {

// The coding a server that prefers br, then zstd, then gzip, then deflate
// picks from `accept_encoding` (q=0 refuses one; "*" allows all); nullopt:
// identity.
std::optional<std::string> pick_coding(std::string_view accept_encoding);

// The whole of `body` in `coding`.
std::string compress(std::string_view coding, std::string_view body);

class stream_compressor {
 public:
  explicit stream_compressor(std::string_view coding);
  ~stream_compressor();
  // The compressed bytes for `piece`, flushed: a decoder can decode all of
  // `piece` from what was returned so far.
  std::string flush(std::string_view piece);
  // The end of the stream.
  std::string finish();

  struct impl;

 private:
  std::unique_ptr<impl> impl_;
};

}  // namespace gistproxy::testing
