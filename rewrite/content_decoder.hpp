// Answers the upstream sends in a Content-Encoding (gzip, deflate, br, zstd)
// must be read to intercept read_blob calls: an answer relayed compressed is
// an answer nobody inspected. This decodes them as they stream, a bounded
// amount at a time (a few compressed bytes can stand for gigabytes), and says
// which codings to ask the upstream for so that it never sends another.
#pragma once

#include <cstddef>
#include <cstdint>
#include <memory>
#include <optional>
#include <string>
#include <string_view>

namespace gistproxy::rewrite {

enum class content_coding { identity, gzip, deflate, br, zstd };

// A Content-Encoding field value naming one coding this decodes ("gzip",
// "x-gzip", "deflate", "br", "zstd", "identity" or empty; case-insensitive).
// nullopt for anything else: an unknown coding, or several applied in turn
// (gistproxy never asks for those).
std::optional<content_coding> parse_content_coding(std::string_view field);
// Its name as a metric label ("gzip", "deflate", "br", "zstd", "identity").
std::string_view coding_name(content_coding coding);

// The Accept-Encoding to send upstream when gistproxy must read the answer:
// the client's own list (nullopt: it sent none) reduced to the codings this
// decodes, q-values kept, "*" spelled out; "identity" when nothing is left.
// The client then gets the answer decoded (identity), which every client
// accepts.
std::string decodable_accept_encoding(std::optional<std::string_view> client_field);

class content_decoder {
 public:
  explicit content_decoder(content_coding coding);
  ~content_decoder();
  content_coding coding() const { return coding_; }
  content_decoder(const content_decoder&) = delete;
  content_decoder& operator=(const content_decoder&) = delete;

  // Takes the next compressed bytes of the body (copied).
  void feed(std::string_view compressed);
  // Appends at most `max_out` decoded bytes to `out`. False when the input is
  // not a valid stream of the coding (corrupt, trailing garbage, a zstd frame
  // asking for a window over 8 MiB).
  bool decode(std::string& out, std::size_t max_out);
  // Input fed that decode() has not consumed, or output it may still hold:
  // call decode() again before feeding more or ending.
  bool pending() const;
  // The compressed stream ended where a stream of that coding may end (every
  // gzip member, zstd frame or brotli stream whole). An empty body counts as
  // complete in any coding.
  bool complete() const;

  // Decodes a whole body (at most `max_out` bytes of output). nullopt when it
  // is corrupt, incomplete or larger.
  static std::optional<std::string> decode_whole(content_coding coding, std::string_view body, std::size_t max_out);

  class engine;  // one per coding (content_decoder.cpp)

 private:
  content_coding coding_;
  std::unique_ptr<engine> engine_;
  std::string input_;
  std::size_t consumed_ = 0;
  bool output_full_ = false;  // the last decode() stopped at max_out: more may come
  bool stalled_ = false;      // the last decode() neither consumed nor produced: it needs more input
  bool any_input_ = false;
  bool failed_ = false;
};

}  // namespace gistproxy::rewrite
