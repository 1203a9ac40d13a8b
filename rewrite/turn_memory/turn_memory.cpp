#include "rewrite/turn_memory/turn_memory.hpp"

#include <algorithm>
#include <functional>

namespace gistproxy::rewrite {

std::size_t remembered_turn::bytes() const {
  std::size_t n = body.capacity() + forwarded.capacity() + body_walks.bytes() + forwarded_walks.bytes() +
                  outputs.size() * sizeof(output_memo) + client_prefix.bytes() + forwarded_prefix.bytes();
  for (const auto& o : outputs) {
    n += (o.hash ? o.hash->capacity() : 0) + o.gist_for.capacity();
    if (o.gist) n += o.gist->reference.capacity() + o.gist->escaped.capacity();  // shared, so counted as if owned
  }
  n += forwarded_edits.size() * sizeof(splice_edit);
  for (const auto& e : forwarded_edits) n += e.owned.capacity();  // a gist is counted with its output's memo
  for (const auto& i : items.items) n += i->bytes;  // counted in full by every turn that shares it: an upper bound
  return n + sizeof(remembered_turn);
}

turn_memory::turn_memory(limits l) : limits_(l) {}

std::string turn_memory::bucket_of(std::string_view tenant, const endpoint& api, std::string_view body) {
  std::string key(tenant);
  key += '\0';
  key += api.name();
  key += '\0';
  key += body.substr(0, opening_bytes);
  return key;
}

turn_match turn_memory::find(std::string_view tenant, const endpoint& api, std::string_view body) const {
  std::vector<std::shared_ptr<const remembered_turn>> turns;
  {
    std::lock_guard lock(mutex_);
    auto b = buckets_.find(bucket_of(tenant, api, body));
    if (b == buckets_.end()) return {};
    for (const auto& key : b->second)
      if (auto e = entries_.find(key); e != entries_.end()) turns.push_back(e->second.turn);
  }
  // Compared outside the lock: the turns are immutable and shared.
  turn_match best;
  for (auto& t : turns) {
    const auto same = json::common_prefix(t->body, body);
    if (!best.turn || same > best.same_bytes) best = {std::move(t), same};
  }
  return best;
}

void turn_memory::remember(std::string_view tenant, std::string_view conversation,
                           std::shared_ptr<const remembered_turn> turn) {
  if (!turn || !turn->api || limits_.per_tenant == 0) return;
  const std::size_t size = turn->bytes();
  if (size > limits_.max_bytes) return;
  std::string key(tenant);
  key += '\0';
  key += conversation;
  auto bucket = bucket_of(tenant, *turn->api, turn->body);
  std::lock_guard lock(mutex_);
  forget(key);
  lru_.push_front(key);
  bytes_ += size;
  ++per_tenant_[std::string(tenant)];
  auto& keys = buckets_[bucket];
  keys.insert(keys.begin(), key);
  if (keys.size() > candidates) keys.pop_back();  // still remembered; only no longer a candidate
  entries_.emplace(key, entry{std::string(tenant), std::move(bucket), std::move(turn), size, lru_.begin()});
  evict(std::string(tenant));
}

// Drops one conversation (under the lock).
void turn_memory::forget(const std::string& key) {
  auto it = entries_.find(key);
  if (it == entries_.end()) return;
  auto& e = it->second;
  bytes_ -= e.bytes;
  if (auto b = buckets_.find(e.bucket); b != buckets_.end()) {
    std::erase(b->second, key);
    if (b->second.empty()) buckets_.erase(b);
  }
  if (auto t = per_tenant_.find(e.tenant); t != per_tenant_.end() && --t->second == 0) per_tenant_.erase(t);
  lru_.erase(e.lru);
  entries_.erase(it);
}

// Least recently used first, until both bounds hold (under the lock): the
// tenant that just added a conversation gives up its oldest when over its share.
void turn_memory::evict(const std::string& tenant) {
  if (auto t = per_tenant_.find(tenant); t != per_tenant_.end() && t->second > limits_.per_tenant)
    for (auto it = lru_.rbegin(); it != lru_.rend(); ++it)
      if (entries_.at(*it).tenant == tenant) {
        forget(std::string(*it));
        ++evictions_;
        break;
      }
  while (bytes_ > limits_.max_bytes && !lru_.empty()) {
    forget(std::string(lru_.back()));
    ++evictions_;
  }
}

turn_memory_stats turn_memory::stats() const {
  std::lock_guard lock(mutex_);
  return {entries_.size(), bytes_, evictions_};
}

}  // namespace gistproxy::rewrite
