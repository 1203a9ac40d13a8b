#include "rewrite/tokens/first_use_tokenizer.hpp"

#include "rewrite/tokens/bpe_tokenizer.hpp"
#include "rewrite/tokens/embedded_ranks.hpp"

namespace gistproxy::rewrite::tokens {

std::unique_ptr<first_use_tokenizer> first_use_tokenizer::create(std::string_view encoding, std::string* error) {
  if (!embedded_rank_data(encoding, error)) return nullptr;
  return std::unique_ptr<first_use_tokenizer>(new first_use_tokenizer(std::string(encoding)));
}

first_use_tokenizer::~first_use_tokenizer() = default;

const bpe_tokenizer* first_use_tokenizer::built() const {
  std::call_once(once_, [this] {
    built_ = builtin_tokenizer(encoding_, nullptr);
    tried_.store(true, std::memory_order_release);
  });
  return built_.get();
}

bool first_use_tokenizer::fell_back() const { return built() == nullptr; }

std::uint64_t first_use_tokenizer::estimate(std::string_view bytes, content_kind kind) const {
  if (const auto* t = built()) return t->estimate(bytes, kind);
  return char_ratio_estimator().estimate(bytes, kind);
}

}  // namespace gistproxy::rewrite::tokens
