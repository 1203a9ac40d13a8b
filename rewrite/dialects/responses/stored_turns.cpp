#include "rewrite/dialects/responses/stored_turns.hpp"

namespace gistproxy::rewrite {

stored_turns::stored_turns(limits l) : limits_(l) {}

std::string stored_turns::key(std::string_view tenant, std::string_view id) {
  std::string k;
  k.reserve(tenant.size() + id.size() + 1);
  return k.append(tenant).append(1, '\0').append(id);
}

void stored_turns::forget_calls(std::string_view tenant, const stored_turn& turn) {
  for (const auto& call : turn.read_calls) {
    auto it = read_calls_.find(key(tenant, call));
    if (it != read_calls_.end() && --it->second == 0) read_calls_.erase(it);
  }
}

void stored_turns::erase(std::unordered_map<std::string, entry>::iterator it) {
  const auto& k = it->first;
  forget_calls(std::string_view(k).substr(0, k.find('\0')), it->second.turn);
  bytes_ -= it->second.bytes;
  recency_.erase(it->second.recency);
  turns_.erase(it);
}

void stored_turns::evict() {
  while ((turns_.size() > limits_.max_turns || bytes_ > limits_.max_bytes) && !recency_.empty()) {
    auto it = turns_.find(recency_.back());
    if (it == turns_.end()) recency_.pop_back();  // cannot happen: every key is in both
    else erase(it);
  }
}

void stored_turns::remember(std::string_view tenant, std::string_view client_id, stored_turn turn) {
  auto k = key(tenant, client_id);
  // The key twice (the map's and the recency list's), and a read call's key per call.
  const auto cost = turn.bytes() + 2 * k.size() + turn.read_calls.size() * (tenant.size() + 1);
  if (turn.bytes() > limits_.max_turn_bytes || limits_.max_turns == 0) return;
  std::lock_guard lock(mutex_);
  if (auto it = turns_.find(k); it != turns_.end()) erase(it);
  for (const auto& call : turn.read_calls) ++read_calls_[key(tenant, call)];
  recency_.push_front(k);
  bytes_ += cost;
  turns_.emplace(std::move(k), entry{std::move(turn), recency_.begin(), cost});
  evict();
}

std::optional<stored_turn> stored_turns::find(std::string_view tenant, std::string_view client_id) {
  std::lock_guard lock(mutex_);
  auto it = turns_.find(key(tenant, client_id));
  if (it == turns_.end()) return std::nullopt;
  recency_.splice(recency_.begin(), recency_, it->second.recency);
  return it->second.turn;
}

bool stored_turns::read_call(std::string_view tenant, std::string_view call_id) const {
  std::lock_guard lock(mutex_);
  return read_calls_.count(key(tenant, call_id)) > 0;
}

std::size_t stored_turns::hidden_in_chain(std::string_view tenant, std::string_view client_id, std::size_t depth) const {
  std::lock_guard lock(mutex_);
  std::size_t hidden = 0;
  std::string id(client_id);
  for (std::size_t step = 0; step < depth; ++step) {
    auto it = turns_.find(key(tenant, id));
    if (it == turns_.end()) break;
    const auto& turn = it->second.turn;
    // Each read_blob call is listed with its output; the hops' items once.
    hidden += 2 * turn.read_calls.size() + (step == 0 ? turn.hop_items.size() : 0);
    if (!turn.previous_response_id.is_string()) break;
    id = turn.previous_response_id.get<std::string>();
  }
  return hidden;
}

std::size_t stored_turns::size() const {
  std::lock_guard lock(mutex_);
  return turns_.size();
}

std::size_t stored_turns::bytes() const {
  std::lock_guard lock(mutex_);
  return bytes_;
}

}  // namespace gistproxy::rewrite
