#include "rewrite/body_encoding.hpp"

#include "rewrite/content_decoder.hpp"

namespace gistproxy::rewrite {

decode_status decode_body(std::string_view encoding, std::string_view body, std::uint64_t max_bytes, std::string& out) {
  out.clear();
  const auto coding = parse_content_coding(encoding);
  if (!coding) return decode_status::unsupported;
  if (*coding == content_coding::identity) {
    out.assign(body);
    return decode_status::ok;
  }
  // The same decoder as compressed answers: bounded steps, every gzip member,
  // raw or zlib deflate, zstd windows up to 8 MiB.
  content_decoder decoder(*coding);
  decoder.feed(body);
  while (decoder.pending()) {
    if (!decoder.decode(out, 64 * 1024)) return decode_status::corrupt;
    if (out.size() > max_bytes) return decode_status::too_large;
  }
  return decoder.complete() ? decode_status::ok : decode_status::corrupt;
}

}  // namespace gistproxy::rewrite
