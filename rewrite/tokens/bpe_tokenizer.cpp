#include "rewrite/tokens/bpe_tokenizer.hpp"

#include <array>
#include <cstring>
#include <functional>

#include "rewrite/tokens/bpe_merge.hpp"
#include "rewrite/tokens/embedded_ranks.hpp"
#include "rewrite/tokens/first_use_tokenizer.hpp"

namespace gistproxy::rewrite::tokens {

std::uint64_t bpe_tokenizer::next_id() {
  static std::atomic<std::uint64_t> next{1};
  return next.fetch_add(1, std::memory_order_relaxed);
}

std::unique_ptr<bpe_tokenizer> bpe_tokenizer::create(std::unique_ptr<rank_table> ranks, std::string* error) {
  if (!ranks) return nullptr;
  auto split = pretokenizer::compile(ranks->pattern(), error);
  if (!split) return nullptr;
  return std::unique_ptr<bpe_tokenizer>(new bpe_tokenizer(std::move(ranks), std::move(split)));
}

namespace {

// A piece longer than this (no real text has one: it is a run of one
// character class, e.g. 20 MB of one letter) is merged in chunks of this
// size. Merging it whole cost 40 times its size in memory at a tenth of the
// usual speed; in chunks memory stays bounded, and the count can exceed
// tiktoken's by at most one token per chunk (no token spans a cut).
constexpr std::size_t max_merged_piece = 64 * 1024;

// A chunk equal to the one before it (a run of one character: the usual
// shape of such a piece) reuses its count: comparing is a memcmp, merging
// is a heap of every byte.
std::uint64_t count_long_piece(const rank_table& ranks, std::string_view piece, merge_scratch& scratch) {
  std::uint64_t count = 0;
  std::string_view previous;
  std::uint64_t previous_count = 0;
  while (piece.size() > max_merged_piece) {
    const auto chunk = piece.substr(0, max_merged_piece);
    if (chunk != previous) {
      previous_count = count_piece_tokens(ranks, chunk, scratch);
      previous = chunk;
    }
    count += previous_count;
    piece.remove_prefix(max_merged_piece);
  }
  return count + count_piece_tokens(ranks, piece, scratch);
}

// Counts of short pieces this thread merged before. Text repeats its words
// and a tool output its identifiers: a hit costs a hash and a memcmp where a
// merge costs a heap over the piece's bytes. Direct-mapped and fixed in size
// (bounded, no allocation after the first use); each entry holds the piece's
// bytes and its table, so a hit is the count a merge would give.
class piece_counts {
 public:
  static constexpr std::size_t longest = 24;

  static std::size_t slot_of(std::string_view piece) { return std::hash<std::string_view>{}(piece) % slots; }
  void prefetch(std::size_t slot) const { __builtin_prefetch(&slots_[slot]); }
  const std::uint32_t* find_at(std::size_t slot, std::uint64_t table, std::string_view piece) const {
    const auto& e = slots_[slot];
    return e.table == table && e.size == piece.size() && std::memcmp(e.bytes, piece.data(), piece.size()) == 0
               ? &e.count
               : nullptr;
  }
  void put_at(std::size_t slot, std::uint64_t table, std::string_view piece, std::uint32_t count) {
    auto& e = slots_[slot];
    e.table = table;
    e.size = static_cast<std::uint8_t>(piece.size());
    std::memcpy(e.bytes, piece.data(), piece.size());
    e.count = count;
  }

 private:
  static constexpr std::size_t slots = 8192;
  struct entry {
    std::uint64_t table = 0;  // the tokenizer's id (never reused: a freed one's address may be)
    std::uint32_t count = 0;
    std::uint8_t size = 0;
    char bytes[longest];
  };
  std::array<entry, slots> slots_{};
};

piece_counts& thread_piece_counts() {
  thread_local std::unique_ptr<piece_counts> cache;
  if (!cache) cache = std::make_unique<piece_counts>();
  return *cache;
}

constexpr std::size_t not_cached = std::size_t(-1);

// Where a piece's count is cached (not_cached: too short or too long to be).
std::size_t cache_slot(std::string_view piece) {
  return piece.size() < 2 || piece.size() > piece_counts::longest ? not_cached : piece_counts::slot_of(piece);
}

std::uint64_t count_piece(const rank_table& ranks, std::uint64_t table, piece_counts& cache, std::string_view piece,
                          std::size_t slot, merge_scratch& scratch) {
  if (slot == not_cached) return count_long_piece(ranks, piece, scratch);
  if (const auto* known = cache.find_at(slot, table, piece)) return *known;
  const auto count = count_piece_tokens(ranks, piece, scratch);
  cache.put_at(slot, table, piece, static_cast<std::uint32_t>(count));  // at most 24: a token is at least a byte
  return count;
}

}  // namespace

namespace {

bool printable_ascii(char c) { return c > ' ' && c < 0x7F; }

}  // namespace

std::uint64_t bpe_tokenizer::estimate(std::string_view bytes, content_kind kind) const {
  return count(bytes, kind, {}, nullptr, 0);
}

resumed_count bpe_tokenizer::estimate_resuming(std::string_view text, content_kind kind, std::vector<count_mark>& marks,
                                               std::size_t same_bytes, std::size_t every) const {
  const auto shared = std::min(same_bytes, text.size());
  while (!marks.empty() && marks.back().at + resume_margin > shared) marks.pop_back();
  const count_mark start = marks.empty() ? count_mark{} : marks.back();
  return {count(text, kind, start, &marks, every), start.at};
}

std::uint64_t bpe_tokenizer::count(std::string_view text, content_kind kind, count_mark start,
                                   std::vector<count_mark>* marks, std::size_t every) const {
  merge_scratch scratch;
  const auto bytes = text.substr(start.at);
  pretokenizer::cursor pieces(*split_, bytes);
  auto& cache = thread_piece_counts();
  // Each piece's cached count is prefetched a few pieces before it is read:
  // between requests the cache goes cold, and counting piece by piece would
  // wait out every miss in turn.
  struct ahead {
    std::string_view piece;
    std::size_t slot;
  };
  constexpr std::size_t depth = 8;
  std::array<ahead, depth> ring;
  std::size_t next = 0, held = 0;
  std::uint64_t count = start.units;
  auto drain = [&] {  // the ones still held, oldest first
    for (std::size_t k = depth - held; k < depth; ++k) {
      const auto& a = ring[(next + k) % depth];
      count += count_piece(*ranks_, id_, cache, a.piece, a.slot, scratch);
    }
    held = 0;
  };
  std::size_t last_mark = 0;
  std::string_view piece;
  while (pieces.next(piece)) {
    const auto slot = cache_slot(piece);
    if (slot != not_cached) cache.prefetch(slot);
    if (held == depth) count += count_piece(*ranks_, id_, cache, ring[next].piece, ring[next].slot, scratch);
    else ++held;
    ring[next] = {piece, slot};
    next = (next + 1) % depth;
    const auto at = pieces.offset();
    if (marks && at - last_mark >= every && at < bytes.size() && pieces.between_matches() &&
        printable_ascii(bytes[at - 1]) && printable_ascii(bytes[at])) {
      drain();
      marks->push_back({start.at + at, count});
      last_mark = at;
    }
  }
  drain();
  if (pieces.failed()) {
    fallbacks_.fetch_add(1, std::memory_order_relaxed);
    count += char_ratio_estimator().estimate(pieces.rest(), kind);  // marks all lie before the failure
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
  // Built when first counting: a proxy that never counts never holds the table.
  if (choice == "o200k") return first_use_tokenizer::create("o200k_base", error);
  if (choice == "cl100k") return first_use_tokenizer::create("cl100k_base", error);
  if (error) *error = "unknown tokenizer (o200k, cl100k or estimate)";
  return nullptr;
}

}  // namespace gistproxy::rewrite::tokens
