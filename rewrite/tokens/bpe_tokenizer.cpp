#include "rewrite/tokens/bpe_tokenizer.hpp"

#include "rewrite/tokens/bpe_merge.hpp"
#include "rewrite/tokens/embedded_ranks.hpp"

namespace gistproxy::rewrite::tokens {

std::unique_ptr<bpe_tokenizer> bpe_tokenizer::create(std::unique_ptr<rank_table> ranks, std::string* error) {
  if (!ranks) return nullptr;
  auto split = pretokenizer::compile(ranks->pattern(), error);
  if (!split) return nullptr;
  return std::unique_ptr<bpe_tokenizer>(new bpe_tokenizer(std::move(ranks), std::move(split)));
}

std::uint64_t bpe_tokenizer::estimate(std::string_view bytes, content_kind kind) const {
  merge_scratch scratch;
  pretokenizer::cursor pieces(*split_, bytes);
  std::uint64_t count = 0;
  std::string_view piece;
  while (pieces.next(piece)) count += count_piece_tokens(*ranks_, piece, scratch);
  if (pieces.failed()) {
    fallbacks_.fetch_add(1, std::memory_order_relaxed);
    count += char_ratio_estimator().estimate(pieces.rest(), kind);
  }
  return count;
}

std::unique_ptr<bpe_tokenizer> builtin_tokenizer(std::string_view encoding, std::string* error) {
  auto data = embedded_rank_data(encoding, error);
  if (!data) return nullptr;
  return bpe_tokenizer::create(rank_table::parse_static(*data, error), error);
}

std::unique_ptr<token_estimator> make_token_estimator(std::string_view choice, std::string* error) {
  if (choice == "estimate") return std::make_unique<char_ratio_estimator>();
  if (choice == "o200k") return builtin_tokenizer("o200k_base", error);
  if (choice == "cl100k") return builtin_tokenizer("cl100k_base", error);
  if (error) *error = "unknown tokenizer (o200k, cl100k or estimate)";
  return nullptr;
}

}  // namespace gistproxy::rewrite::tokens
