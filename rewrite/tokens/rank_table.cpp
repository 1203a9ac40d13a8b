#include "rewrite/tokens/rank_table.hpp"

#include <bit>
#include <cstring>

namespace gistproxy::rewrite::tokens {
namespace {

constexpr std::size_t max_tokens = std::size_t(1) << 24;  // rank fits 24 bits beside the length byte

// Pieces are short (a word, a number, a run of punctuation): mix 8 bytes at a
// time. Not keyed: the table holds fixed data, and lookups of hostile pieces
// only ever miss or hit real tokens.
std::uint64_t hash_bytes(std::string_view s) {
  std::uint64_t h = 0x9E3779B97F4A7C15ull ^ s.size();
  std::size_t i = 0;
  for (; i + 8 <= s.size(); i += 8) {
    std::uint64_t w;
    std::memcpy(&w, s.data() + i, 8);
    h = (h ^ w) * 0xBF58476D1CE4E5B9ull;
    h ^= h >> 31;
  }
  std::uint64_t w = 0;
  std::memcpy(&w, s.data() + i, s.size() - i);
  h = (h ^ w) * 0x94D049BB133111EBull;
  return h ^ (h >> 29);
}

// "key value\n" header lines, in order.
bool header_line(std::string_view& rest, std::string_view key, std::string_view& value) {
  auto nl = rest.find('\n');
  if (nl == std::string_view::npos) return false;
  auto line = rest.substr(0, nl);
  rest.remove_prefix(nl + 1);
  if (line.size() < key.size() + 1 || line.substr(0, key.size()) != key || line[key.size()] != ' ') return false;
  value = line.substr(key.size() + 1);
  return true;
}

std::optional<rank_table> fail(std::string* error, std::string why) {
  if (error) *error = std::move(why);
  return std::nullopt;
}

}  // namespace

std::optional<rank_table> rank_table::parse(std::string data, std::string* error) {
  rank_table t;
  t.data_ = std::move(data);
  std::string_view rest = t.data_;
  std::string_view version, name, pattern, count_text;
  if (!header_line(rest, "gistproxy-bpe-ranks", version) || version != "1")
    return fail(error, "not a gistproxy-bpe-ranks 1 file");
  if (!header_line(rest, "name", name) || !header_line(rest, "source", version) ||
      !header_line(rest, "pattern", pattern) || !header_line(rest, "count", count_text) || rest.empty() ||
      rest[0] != '\n')
    return fail(error, "malformed header");
  rest.remove_prefix(1);
  t.name_ = name;
  t.pattern_ = pattern;
  std::size_t count = 0;
  for (char c : count_text) {
    if (c < '0' || c > '9' || count > max_tokens) return fail(error, "bad count");
    count = count * 10 + std::size_t(c - '0');
  }
  if (count == 0 || count > max_tokens) return fail(error, "bad count");
  t.count_ = count;
  t.slots_.assign(std::bit_ceil(count * 2), slot{});
  t.mask_ = t.slots_.size() - 1;
  std::size_t pos = std::size_t(rest.data() - t.data_.data());
  for (rank r = 0; r < count; ++r) {
    if (pos >= t.data_.size()) return fail(error, "truncated");
    auto length = std::uint8_t(t.data_[pos]);
    if (length == 0 || t.data_.size() - pos - 1 < length) return fail(error, "truncated");
    if (!t.insert(std::uint32_t(pos + 1), length, r)) return fail(error, "duplicate token");
    pos += 1 + length;
  }
  if (pos != t.data_.size()) return fail(error, "trailing bytes");
  return t;
}

bool rank_table::insert(std::uint32_t offset, std::uint8_t length, rank r) {
  std::string_view bytes(data_.data() + offset, length);
  for (std::size_t i = hash_bytes(bytes) & mask_;; i = (i + 1) & mask_) {
    auto& s = slots_[i];
    if (s.rank_and_length == 0) {
      s = {offset, (r << 8) | length};
      return true;
    }
    if ((s.rank_and_length & 0xFF) == length && std::memcmp(data_.data() + s.offset, bytes.data(), length) == 0)
      return false;
  }
}

rank rank_table::rank_of(std::string_view bytes) const {
  if (bytes.empty() || bytes.size() > 255) return no_rank;
  const auto length = std::uint32_t(bytes.size());
  for (std::size_t i = hash_bytes(bytes) & mask_;; i = (i + 1) & mask_) {
    const auto& s = slots_[i];
    if (s.rank_and_length == 0) return no_rank;
    if ((s.rank_and_length & 0xFF) == length && std::memcmp(data_.data() + s.offset, bytes.data(), length) == 0)
      return s.rank_and_length >> 8;
  }
}

}  // namespace gistproxy::rewrite::tokens
