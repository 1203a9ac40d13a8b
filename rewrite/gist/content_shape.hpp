// What a tool output is (json, log, source, text) and how big: lines,
// characters (code points) and tokens. Counting is pluggable: an exact BPE
// tokenizer (rewrite/tokens, the default) or the common heuristic,
// characters/4 for prose and characters/2 for JSON.
#pragma once

#include <cstdint>
#include <string_view>

namespace gistproxy::rewrite {

enum class content_kind { json, log, source, text };
std::string_view kind_name(content_kind k);
content_kind classify_content(std::string_view bytes);

struct content_shape {
  content_kind kind = content_kind::text;
  std::uint64_t bytes = 0;
  std::uint64_t lines = 0;
  std::uint64_t chars = 0;  // UTF-8 code points
  std::uint64_t tokens = 0;
};

class token_estimator {
 public:
  virtual ~token_estimator() = default;
  virtual std::uint64_t estimate(std::string_view bytes, content_kind kind) const = 0;
  // The most tokens `bytes` bytes can be: lets callers skip small outputs
  // without decoding or counting them.
  virtual std::uint64_t max_tokens(std::size_t bytes) const = 0;
  // "estimate" or the encoding's name ("o200k_base"): reported with figures.
  virtual std::string_view name() const = 0;
  virtual bool exact() const = 0;
};

class char_ratio_estimator final : public token_estimator {
 public:
  std::uint64_t estimate(std::string_view bytes, content_kind kind) const override;
  std::uint64_t max_tokens(std::size_t bytes) const override { return (bytes + 1) / 2; }  // JSON's ratio
  std::string_view name() const override { return "estimate"; }
  bool exact() const override { return false; }
};

std::uint64_t count_code_points(std::string_view bytes);
std::uint64_t count_lines(std::string_view bytes);
content_shape shape_of(std::string_view bytes, const token_estimator& estimator);

}  // namespace gistproxy::rewrite
