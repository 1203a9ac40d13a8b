#include "rewrite/tokens/embedded_ranks.hpp"

#include <zstd.h>

// The committed files, assembled in verbatim (GISTPROXY_TOKEN_DATA_DIR is set by
// rewrite/CMakeLists.txt, which also rebuilds this file when they change).
#define GISTPROXY_STR2(x) #x
#define GISTPROXY_STR(x) GISTPROXY_STR2(x)
#define GISTPROXY_EMBED(symbol, file)                                                   \
  __asm__(".pushsection .rodata\n.balign 16\n.global " #symbol "\n" #symbol ":\n.incbin \"" \
          GISTPROXY_STR(GISTPROXY_TOKEN_DATA_DIR) "/" file "\"\n.global " #symbol          \
          "_end\n" #symbol "_end:\n.popsection\n");                                     \
  extern "C" const unsigned char symbol[];                                              \
  extern "C" const unsigned char symbol##_end[];

GISTPROXY_EMBED(gistproxy_o200k_base_ranks, "o200k_base.ranks.zst")
GISTPROXY_EMBED(gistproxy_cl100k_base_ranks, "cl100k_base.ranks.zst")

namespace gistproxy::rewrite::tokens {
namespace {

constexpr std::size_t max_rank_data = 64u << 20;  // far above o200k's 1.6 MB

std::optional<std::string> decompress(const unsigned char* begin, const unsigned char* end, std::string* error) {
  const auto size = ZSTD_getFrameContentSize(begin, std::size_t(end - begin));
  if (size == ZSTD_CONTENTSIZE_UNKNOWN || size == ZSTD_CONTENTSIZE_ERROR || size > max_rank_data) {
    if (error) *error = "embedded rank data: bad zstd frame";
    return std::nullopt;
  }
  std::string out(size, '\0');
  const auto n = ZSTD_decompress(out.data(), out.size(), begin, std::size_t(end - begin));
  if (ZSTD_isError(n) || n != size) {
    if (error) *error = "embedded rank data: does not decompress";
    return std::nullopt;
  }
  return out;
}

}  // namespace

std::optional<std::string> embedded_rank_data(std::string_view encoding, std::string* error) {
  if (encoding == "o200k_base") return decompress(gistproxy_o200k_base_ranks, gistproxy_o200k_base_ranks_end, error);
  if (encoding == "cl100k_base")
    return decompress(gistproxy_cl100k_base_ranks, gistproxy_cl100k_base_ranks_end, error);
  if (error) *error = "no built-in encoding named " + std::string(encoding);
  return std::nullopt;
}

}  // namespace gistproxy::rewrite::tokens
