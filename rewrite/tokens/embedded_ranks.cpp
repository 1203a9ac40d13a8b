#include "rewrite/tokens/embedded_ranks.hpp"

// The committed files, assembled in verbatim (GISTPROXY_TOKEN_DATA_DIR is set by
// rewrite/CMakeLists.txt, which also rebuilds this file when they change).
#define GISTPROXY_STR2(x) #x
#define GISTPROXY_STR(x) GISTPROXY_STR2(x)
#define GISTPROXY_EMBED(symbol, file)                                                   \
  __asm__(".pushsection .rodata\n.balign 16\n.global " #symbol "\n" #symbol ":\n.incbin \"" \
          GISTPROXY_STR(GISTPROXY_TOKEN_DATA_DIR) "/" file "\"\n.global " #symbol          \
          "_end\n" #symbol "_end:\n.popsection\n");                                     \
  extern "C" const char symbol[];                                                       \
  extern "C" const char symbol##_end[];

GISTPROXY_EMBED(gistproxy_o200k_base_ranks, "o200k_base.ranks")
GISTPROXY_EMBED(gistproxy_cl100k_base_ranks, "cl100k_base.ranks")

namespace gistproxy::rewrite::tokens {

std::optional<std::string_view> embedded_rank_data(std::string_view encoding, std::string* error) {
  if (encoding == "o200k_base")
    return std::string_view(gistproxy_o200k_base_ranks, std::size_t(gistproxy_o200k_base_ranks_end - gistproxy_o200k_base_ranks));
  if (encoding == "cl100k_base")
    return std::string_view(gistproxy_cl100k_base_ranks,
                            std::size_t(gistproxy_cl100k_base_ranks_end - gistproxy_cl100k_base_ranks));
  if (error) *error = "no built-in encoding named " + std::string(encoding);
  return std::nullopt;
}

}  // namespace gistproxy::rewrite::tokens
