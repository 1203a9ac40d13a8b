// A built-in BPE tokenizer built the first time it counts, not at startup.
//
// Building o200k_base reads its 1.6 MB of embedded ranks and fills 1.4 MB of
// slots: 3 MB of resident memory that a proxy whose traffic has no output
// worth counting (pass-through chat, 1 KB turns) never needs. The name and
// the bounds an estimator reports do not depend on the table, so only a
// count builds it (once, whichever thread counts first; the others wait).
#pragma once

#include <atomic>
#include <memory>
#include <mutex>
#include <string>
#include <string_view>

#include "rewrite/gist/content_shape.hpp"

namespace gistproxy::rewrite::tokens {

class bpe_tokenizer;

class first_use_tokenizer final : public token_estimator {
 public:
  // `encoding` must name a built-in encoding (embedded_rank_data): checked
  // here, without reading the data.
  static std::unique_ptr<first_use_tokenizer> create(std::string_view encoding, std::string* error);
  ~first_use_tokenizer() override;

  std::uint64_t estimate(std::string_view bytes, content_kind kind) const override;
  std::uint64_t max_tokens(std::size_t bytes) const override { return bytes; }  // as bpe_tokenizer's
  std::string_view name() const override { return encoding_; }
  bool exact() const override { return true; }

  // The tokenizer, built on the first call; nullptr if its data failed to
  // build (counts then fall back to characters/4 and say so: fell_back()).
  const bpe_tokenizer* built() const;
  bool fell_back() const;
  // Whether a count (or built()) has built it yet.
  bool is_built() const { return tried_.load(std::memory_order_acquire); }

 private:
  explicit first_use_tokenizer(std::string encoding) : encoding_(std::move(encoding)) {}
  std::string encoding_;
  mutable std::once_flag once_;
  mutable std::unique_ptr<bpe_tokenizer> built_;
  mutable std::atomic<bool> tried_{false};
};

}  // namespace gistproxy::rewrite::tokens
