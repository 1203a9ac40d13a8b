#include "rewrite/conversation/conversation_chains.hpp"

#include <cstring>
#include <string>

#include "rewrite/blob/digest.hpp"

namespace gistproxy::rewrite {
namespace {

// The id of the n-th conversation started under an opening (n ≥ 1): the
// opening's own for the first, a hash of it and n for the others.
conversation_id nth_id(const conversation_id& opening, std::uint64_t n) {
  if (n <= 1) return opening;
  std::string key(reinterpret_cast<const char*>(opening.data()), opening.size());
  key += "\nconversation ";
  key += std::to_string(n);
  const auto digest = sha256(key);
  conversation_id id{};
  std::memcpy(id.data(), digest.data(), id.size());
  return id;
}

}  // namespace

conversation_id opening_of(std::string_view conversation_key, std::string_view credential) {
  std::string key;
  key.reserve(conversation_key.size() + credential.size() + 1);
  key.append(conversation_key).append(1, '\0').append(credential);
  return opening_of_joined(key);
}

conversation_id opening_of_joined(std::string_view joined) {
  const auto digest = sha256(joined);
  conversation_id id{};
  std::memcpy(id.data(), digest.data(), id.size());
  if (id == conversation_id{}) id[15] = 1;
  return id;
}

std::string conversation_hex(const conversation_id& id) {
  static constexpr char digits[] = "0123456789abcdef";
  std::string out;
  out.reserve(id.size() * 2);
  for (auto b : id) out.push_back(digits[b >> 4]), out.push_back(digits[b & 15]);
  return out;
}

std::optional<conversation_id> conversation_from_hex(std::string_view hex) {
  auto nibble = [](char ch) { return ch >= '0' && ch <= '9' ? ch - '0' : ch >= 'a' && ch <= 'f' ? ch - 'a' + 10 : -1; };
  conversation_id id{};
  if (hex.size() != id.size() * 2) return std::nullopt;
  for (std::size_t i = 0; i < id.size(); ++i) {
    const int hi = nibble(hex[2 * i]), lo = nibble(hex[2 * i + 1]);
    if (hi < 0 || lo < 0) return std::nullopt;
    id[i] = std::uint8_t(hi << 4 | lo);
  }
  return id;
}

std::size_t conversation_chains::id_hash::operator()(const conversation_id& k) const {
  std::uint64_t a = 0, b = 0;
  std::memcpy(&a, k.data(), 8);
  std::memcpy(&b, k.data() + 8, 8);
  return std::size_t(a ^ (b * 0x9e3779b97f4a7c15ull));
}

conversation_chains::conversation_chains(std::size_t max_openings, std::size_t max_chains)
    : max_openings_(max_openings ? max_openings : 1), max_chains_(max_chains ? max_chains : 1) {}

conversation_chains::opening_state& conversation_chains::touch(const conversation_id& opening) {
  auto [it, added] = openings_.try_emplace(opening);
  if (added) {
    lru_.push_front(opening);
    it->second.lru = lru_.begin();
    if (openings_.size() > max_openings_) {  // forget the least recently used (never the new one)
      openings_.erase(lru_.back());
      lru_.pop_back();
    }
  } else {
    lru_.splice(lru_.begin(), lru_, it->second.lru);
  }
  return it->second;
}

conversation_chains::chain* conversation_chains::longest_extended(opening_state& s, const turn_position& turn) {
  chain* best = nullptr;
  for (auto& c : s.chains) {
    if (c.head != turn.head || c.items > turn.cumulative.size()) continue;
    if (c.items && turn.cumulative[c.items - 1] != c.all) continue;
    if (!best || c.items > best->items) best = &c;
  }
  return best;
}

conversation_chains::chain* conversation_chains::longest_edited(opening_state& s, const turn_position& turn) {
  chain* best = nullptr;
  for (auto& c : s.chains) {
    if (c.head != turn.head || c.items <= c.first_items || c.items > turn.cumulative.size()) continue;
    if (turn.cumulative[c.first_items] != c.anchor) continue;
    if (!best || c.items > best->items) best = &c;
  }
  return best;
}

conversation_chains::chain& conversation_chains::start(opening_state& s, const conversation_id& opening) {
  if (s.chains.size() >= max_chains_) {  // the conversation heard from least recently gives way
    auto oldest = s.chains.begin();
    for (auto it = s.chains.begin(); it != s.chains.end(); ++it)
      if (it->used < oldest->used) oldest = it;
    s.chains.erase(oldest);
  }
  auto& c = s.chains.emplace_back();
  c.id = nth_id(opening, ++s.made);
  return c;
}

conversation_turn conversation_chains::resolve(const conversation_id& opening, const turn_position& turn) {
  if (turn.cumulative.empty()) return {opening, false, false};
  std::lock_guard lock(mutex_);
  auto& s = touch(opening);
  conversation_turn out;
  chain* c = longest_extended(s, turn);
  if (c) out.retry = c->items == turn.cumulative.size();
  if (!c) c = longest_edited(s, turn);
  if (!c) {
    out.branched = s.made > 0;
    c = &start(s, opening);
    c->first_items = turn.cumulative.size();
  }
  c->head = turn.head;
  c->items = turn.cumulative.size();
  c->all = turn.cumulative.back();
  if (c->items > c->first_items) c->anchor = turn.cumulative[c->first_items];
  c->used = ++clock_;
  out.id = c->id;
  return out;
}

std::size_t conversation_chains::openings() {
  std::lock_guard lock(mutex_);
  return openings_.size();
}

}  // namespace gistproxy::rewrite
