#include "rewrite/tokens/rank_table.hpp"

#include <cstring>

namespace gistproxy::rewrite::tokens {
namespace {

constexpr unsigned offset_bits = 21;  // rank data up to 2 MiB (o200k_base: 1.6 MB)
constexpr std::uint32_t offset_mask = (1u << offset_bits) - 1;
constexpr std::uint32_t tag_mask = ~offset_mask;

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

std::uint32_t tag_of(std::uint64_t hash) { return std::uint32_t(hash) & tag_mask; }

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

bool fail(std::string* error, const char* why) {
  if (error) *error = why;
  return false;
}

}  // namespace

std::unique_ptr<rank_table> rank_table::parse(std::string data, std::string* error) {
  std::unique_ptr<rank_table> t(new rank_table);
  t->owned_ = std::move(data);
  t->data_ = t->owned_;
  return t->build(error) ? std::move(t) : nullptr;
}

std::unique_ptr<rank_table> rank_table::parse_static(std::string_view data, std::string* error) {
  std::unique_ptr<rank_table> t(new rank_table);
  t->data_ = data;
  return t->build(error) ? std::move(t) : nullptr;
}

bool rank_table::build(std::string* error) {
  if (data_.size() > offset_mask) return fail(error, "rank data over 2 MiB");
  std::string_view rest = data_;
  std::string_view version, source, count_text;
  if (!header_line(rest, "gistproxy-bpe-ranks", version) || version != "1")
    return fail(error, "not a gistproxy-bpe-ranks 1 file");
  if (!header_line(rest, "name", name_) || !header_line(rest, "source", source) ||
      !header_line(rest, "pattern", pattern_) || !header_line(rest, "count", count_text) || rest.empty() ||
      rest[0] != '\n')
    return fail(error, "malformed header");
  rest.remove_prefix(1);
  std::size_t count = 0;
  for (char c : count_text) {
    if (c < '0' || c > '9' || count > offset_mask) return fail(error, "bad count");
    count = count * 10 + std::size_t(c - '0');
  }
  if (count == 0 || count > offset_mask) return fail(error, "bad count");
  count_ = count;
  slots_.assign(count + count / 2 + 1, 0);  // load 2/3: short probes, 4 bytes a slot
  pairs_.assign(std::size_t(1) << 16, no_rank);
  std::size_t pos = std::size_t(rest.data() - data_.data());
  for (std::size_t r = 0; r < count; ++r) {
    if (pos >= data_.size()) return fail(error, "truncated");
    const auto length = std::uint8_t(data_[pos]);
    if (length == 0 || data_.size() - pos - 1 < length) return fail(error, "truncated");
    const auto offset = std::uint32_t(pos + 1);
    if (!insert(offset, hash_bytes(data_.substr(offset, length)))) return fail(error, "duplicate token");
    if (length == 2) pairs_[std::size_t(std::uint8_t(data_[offset])) << 8 | std::uint8_t(data_[offset + 1])] = offset;
    pos += 1 + std::size_t(length);
  }
  if (pos != data_.size()) return fail(error, "trailing bytes");
  return true;
}

bool rank_table::insert(std::uint32_t offset, std::uint64_t hash) {
  const auto length = std::uint8_t(data_[offset - 1]);
  for (std::size_t i = slot_of(hash);; i = i + 1 == slots_.size() ? 0 : i + 1) {
    auto& s = slots_[i];
    if (s == 0) {
      s = tag_of(hash) | offset;
      return true;
    }
    const auto other = s & offset_mask;
    if (std::uint8_t(data_[other - 1]) == length && std::memcmp(data_.data() + other, data_.data() + offset, length) == 0)
      return false;
  }
}

rank rank_table::rank_of(std::string_view bytes) const {
  if (bytes.size() == 2) return pairs_[std::size_t(std::uint8_t(bytes[0])) << 8 | std::uint8_t(bytes[1])];
  if (bytes.empty() || bytes.size() > 255) return no_rank;
  const auto hash = hash_bytes(bytes);
  const auto tag = tag_of(hash);
  const auto length = std::uint8_t(bytes.size());
  for (std::size_t i = slot_of(hash);; i = i + 1 == slots_.size() ? 0 : i + 1) {
    const auto s = slots_[i];
    if (s == 0) return no_rank;
    if ((s & tag_mask) != tag) continue;
    const auto offset = s & offset_mask;
    if (std::uint8_t(data_[offset - 1]) == length && std::memcmp(data_.data() + offset, bytes.data(), length) == 0)
      return offset;
  }
}

}  // namespace gistproxy::rewrite::tokens
