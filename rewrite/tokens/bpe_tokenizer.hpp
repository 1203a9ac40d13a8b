// Exact token counts: tiktoken's encode_ordinary, counted instead of encoded
// (pre-tokenise with the encoding's regex, BPE-merge each piece). Behind the
// same token_estimator interface as the characters/4 heuristic, so the
// offload engine, page-in and replay use whichever the operator chose.
#pragma once

#include <atomic>
#include <memory>
#include <string>
#include <string_view>

#include "rewrite/gist/content_shape.hpp"
#include "rewrite/tokens/pretokenizer.hpp"
#include "rewrite/tokens/rank_table.hpp"
#include "rewrite/tokens/resumable_count.hpp"

namespace gistproxy::rewrite::tokens {

class bpe_tokenizer final : public token_estimator {
 public:
  // nullptr (and *error) if the table's pattern does not compile.
  static std::unique_ptr<bpe_tokenizer> create(std::unique_ptr<rank_table> ranks, std::string* error);

  std::uint64_t estimate(std::string_view bytes, content_kind kind) const override;
  // Marks only where a piece ends between two printable ASCII characters (no
  // whitespace, whose pieces may depend on far later bytes), and resumes at
  // one lying `resume_margin` bytes or more inside the shared bytes: the
  // pieces before it are decided by bytes both texts hold.
  resumed_count estimate_resuming(std::string_view text, content_kind kind, std::vector<count_mark>& marks,
                                  std::size_t same_bytes, std::size_t every) const;
  static constexpr std::size_t resume_margin = 16;
  std::uint64_t max_tokens(std::size_t bytes) const override { return bytes; }  // a token is at least a byte
  std::string_view name() const override { return ranks_->name(); }
  bool exact() const override { return true; }

  // Texts whose splitting failed part-way (PCRE2 match limit): the unsplit
  // rest was counted by the characters/4 heuristic instead.
  std::uint64_t fallbacks() const { return fallbacks_.load(std::memory_order_relaxed); }

 private:
  bpe_tokenizer(std::unique_ptr<rank_table> ranks, std::unique_ptr<pretokenizer> split)
      : ranks_(std::move(ranks)), split_(std::move(split)), id_(next_id()) {}
  static std::uint64_t next_id();
  // Counts `text` from `start` (0, or a mark), leaving marks when asked.
  std::uint64_t count(std::string_view text, content_kind kind, count_mark start, std::vector<count_mark>* marks,
                      std::size_t every) const;
  std::unique_ptr<rank_table> ranks_;
  std::unique_ptr<pretokenizer> split_;
  // Names this tokenizer in the per-thread piece cache: never reused, as
  // a freed tokenizer's address is (another encoding's counts came back).
  std::uint64_t id_;
  mutable std::atomic<std::uint64_t> fallbacks_{0};
};

// The encodings compiled into the binary (rewrite/tokens/data, generated from
// the npm tiktoken package): "o200k_base", "cl100k_base".
std::unique_ptr<bpe_tokenizer> builtin_tokenizer(std::string_view encoding, std::string* error);

// --tokenizer: "o200k" | "cl100k" (exact) or "estimate" (characters/4).
// nullptr and *error for anything else.
std::unique_ptr<token_estimator> make_token_estimator(std::string_view choice, std::string* error);

}  // namespace gistproxy::rewrite::tokens
