#include "rewrite/tokens/resumable_count.hpp"

#include <algorithm>

#include "rewrite/tokens/bpe_tokenizer.hpp"
#include "rewrite/tokens/first_use_tokenizer.hpp"

namespace gistproxy::rewrite::tokens {

namespace {

// Code points add up over any cut: resume at the last mark within the
// shared bytes.
resumed_count count_code_points_resuming(std::string_view text, content_kind kind, std::vector<count_mark>& marks,
                                         std::size_t same_bytes, std::size_t every) {
  const auto limit = std::min(same_bytes, text.size());
  while (!marks.empty() && marks.back().at > limit) marks.pop_back();
  const count_mark start = marks.empty() ? count_mark{} : marks.back();
  const std::size_t step = std::max<std::size_t>(every, 1);
  std::uint64_t units = start.units;
  for (std::size_t pos = start.at; pos < text.size();) {
    const auto n = std::min(step, text.size() - pos);
    units += count_code_points(text.substr(pos, n));
    pos += n;
    if (pos < text.size()) marks.push_back({pos, units});
  }
  const std::uint64_t per_token = kind == content_kind::json ? 2 : 4;  // char_ratio_estimator's ratios
  return {(units + per_token - 1) / per_token, start.at};
}

}  // namespace

resumed_count count_resuming(const token_estimator& e, std::string_view text, content_kind kind,
                             std::vector<count_mark>& marks, std::size_t same_bytes, std::size_t every) {
  const auto* bpe = dynamic_cast<const bpe_tokenizer*>(&e);
  if (const auto* later = dynamic_cast<const first_use_tokenizer*>(&e)) bpe = later->built();
  if (bpe) return bpe->estimate_resuming(text, kind, marks, same_bytes, every);
  if (dynamic_cast<const char_ratio_estimator*>(&e))
    return count_code_points_resuming(text, kind, marks, same_bytes, every);
  marks.clear();
  return {e.estimate(text, kind), 0};
}

}  // namespace gistproxy::rewrite::tokens
