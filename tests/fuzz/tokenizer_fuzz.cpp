// Hostile text through the exact tokenizer (tool outputs and page-in answers
// are counted with it): any bytes, valid UTF-8 or not, are split and merged
// without a crash, within bounds, deterministically; long pieces merge on the
// heap exactly as tiktoken's scan would; and a rank file built from the input
// parses or is refused, never read out of bounds.
#include <cstdint>
#include <cstdlib>
#include <string>

#include "rewrite/tokens/bpe_merge.hpp"
#include "rewrite/tokens/bpe_tokenizer.hpp"
#include "rewrite/tokens/embedded_ranks.hpp"
#include "tests/fuzz/fuzz_input.hpp"

using namespace gistproxy::rewrite;

namespace {

const tokens::bpe_tokenizer& o200k() {
  static auto t = tokens::builtin_tokenizer("o200k_base", nullptr);
  if (!t) std::abort();
  return *t;
}

const tokens::rank_table& o200k_ranks() {
  static auto t = tokens::rank_table::parse_static(*tokens::embedded_rank_data("o200k_base", nullptr), nullptr);
  if (!t) std::abort();
  return *t;
}

}  // namespace

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
  gistproxy::fuzz::input in(data, size);
  const auto mode = in.byte();
  const auto text = in.rest();
  if (mode % 3 == 0) {
    const auto n = o200k().estimate(text, content_kind::text);
    if (n > text.size() || (n == 0 && !text.empty())) std::abort();
    if (o200k().estimate(text, content_kind::text) != n) std::abort();
  } else if (mode % 3 == 1) {
    // A piece as long as the input: heap (over 128 bytes) against scan.
    tokens::merge_scratch scratch;
    const auto piece = text.substr(0, 4096);
    const auto counted = tokens::count_piece_tokens(o200k_ranks(), piece, scratch);
    const auto split = tokens::split_piece(o200k_ranks(), piece);
    if (counted != (split.empty() ? 0 : split.size() - 1)) std::abort();
  } else {
    std::string error;
    auto t = tokens::rank_table::parse(std::string(text), &error);
    if (t) (void)t->rank_of(text.substr(0, 8));
  }
  return 0;
}
