#include "rewrite/tokens/bpe_merge.hpp"

#include <algorithm>

namespace gistproxy::rewrite::tokens {
namespace {

constexpr std::size_t scan_limit = 128;  // above this many bytes the heap wins

// tiktoken's loop. parts[i].start are the boundaries; parts[i].pair_rank the
// rank of parts i and i+1 joined. Leaves the final boundaries in `parts`.
void merge_by_scan(const rank_table& ranks, std::string_view piece, merge_scratch& s) {
  auto& parts = s.parts;
  parts.clear();
  for (std::uint32_t i = 0; i + 1 < piece.size(); ++i) parts.push_back({i, ranks.rank_of(piece.substr(i, 2))});
  parts.push_back({std::uint32_t(piece.size() - 1), no_rank});
  parts.push_back({std::uint32_t(piece.size()), no_rank});
  auto joined_rank = [&](std::size_t i) {
    return i + 3 < parts.size() ? ranks.rank_of(piece.substr(parts[i].start, parts[i + 3].start - parts[i].start))
                                : no_rank;
  };
  for (;;) {
    std::size_t best = parts.size();
    rank best_rank = no_rank;
    for (std::size_t i = 0; i + 1 < parts.size(); ++i)
      if (parts[i].pair_rank < best_rank) best_rank = parts[i].pair_rank, best = i;
    if (best_rank == no_rank) return;
    if (best > 0) parts[best - 1].pair_rank = joined_rank(best - 1);
    parts[best].pair_rank = joined_rank(best);
    parts.erase(parts.begin() + std::ptrdiff_t(best) + 1);
  }
}

// The same merges with a min-heap of (rank, start): a linked list of parts,
// each candidate stamped with its node's version so stale ones are skipped.
std::size_t merge_by_heap(const rank_table& ranks, std::string_view piece, merge_scratch& s) {
  const auto n = std::uint32_t(piece.size());
  constexpr std::uint32_t none = UINT32_MAX;
  auto& nodes = s.nodes;
  nodes.resize(n);
  for (std::uint32_t i = 0; i < n; ++i) nodes[i] = {i, i == 0 ? none : i - 1, i + 1 == n ? none : i + 1, 0};
  auto end_of = [&](std::uint32_t i) { return nodes[i].next == none ? n : nodes[nodes[i].next].start; };
  auto later = [](const merge_scratch::candidate& a, const merge_scratch::candidate& b) {
    return a.pair_rank != b.pair_rank ? a.pair_rank > b.pair_rank : a.start > b.start;
  };
  auto& heap = s.heap;
  heap.clear();
  auto push_pair = [&](std::uint32_t i) {
    if (i == none || nodes[i].next == none) return;
    auto r = ranks.rank_of(piece.substr(nodes[i].start, end_of(nodes[i].next) - nodes[i].start));
    if (r == no_rank) return;
    heap.push_back({r, nodes[i].start, i, nodes[i].version});
    std::push_heap(heap.begin(), heap.end(), later);
  };
  for (std::uint32_t i = 0; i + 1 < n; ++i) push_pair(i);
  std::size_t count = n;
  while (!heap.empty()) {
    std::pop_heap(heap.begin(), heap.end(), later);
    auto c = heap.back();
    heap.pop_back();
    auto& node = nodes[c.node];
    if (node.version != c.version) continue;  // this node changed since the candidate was pushed
    const auto gone = node.next;
    node.next = nodes[gone].next;
    if (node.next != none) nodes[node.next].prev = c.node;
    ++nodes[gone].version;  // its own candidate is stale now
    ++node.version;
    --count;
    if (node.prev != none) {
      ++nodes[node.prev].version;  // its pair now ends later
      push_pair(node.prev);
    }
    push_pair(c.node);
  }
  return count;
}

}  // namespace

std::size_t count_piece_tokens(const rank_table& ranks, std::string_view piece, merge_scratch& scratch) {
  if (piece.size() <= 1) return piece.size();
  if (ranks.rank_of(piece) != no_rank) return 1;
  if (piece.size() > scan_limit) return merge_by_heap(ranks, piece, scratch);
  merge_by_scan(ranks, piece, scratch);
  return scratch.parts.size() - 1;
}

std::vector<std::uint32_t> split_piece(const rank_table& ranks, std::string_view piece) {
  merge_scratch s;
  std::vector<std::uint32_t> bounds;
  if (piece.empty()) return bounds;
  if (piece.size() == 1 || ranks.rank_of(piece) != no_rank) return {0, std::uint32_t(piece.size())};
  merge_by_scan(ranks, piece, s);
  for (const auto& p : s.parts) bounds.push_back(p.start);
  return bounds;
}

}  // namespace gistproxy::rewrite::tokens
