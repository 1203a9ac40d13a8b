#include "rewrite/tokens/token_floor.hpp"

namespace gistproxy::rewrite::tokens {

std::uint64_t bpe_token_floor(std::string_view text) {
  std::uint64_t floor = 0;
  for (std::size_t i = 0; i + 1 < text.size(); ++i)
    if (text[i] == ' ' && text[i + 1] > ' ' && text[i + 1] < 0x7f) ++floor;
  return floor;
}

}  // namespace gistproxy::rewrite::tokens
