#include "rewrite/prompt_cache/prefix_tracker.hpp"

#include <algorithm>
#include <cstring>
#include <functional>

namespace gistproxy::rewrite {

std::string_view break_cause(prefix_verdict v) {
  switch (v) {
    case prefix_verdict::client_break: return "client";
    case prefix_verdict::proxy_break: return "proxy";
    case prefix_verdict::budget_break: return "budget";
    case prefix_verdict::age_break: return "age";
    case prefix_verdict::offer_break: return "offer";
    case prefix_verdict::churn_break: return "churn";
    default: return {};
  }
}

std::size_t prefix_tracker::key_hash::operator()(const key& k) const {
  std::uint64_t a = 0, b = 0;
  std::memcpy(&a, k.data(), 8);
  std::memcpy(&b, k.data() + 8, 8);
  return std::size_t(a ^ (b * 0x9e3779b97f4a7c15ull));
}

prefix_tracker::key prefix_tracker::key_of(std::string_view conversation) {
  key k{};
  if (conversation.size() <= k.size()) {
    std::memcpy(k.data(), conversation.data(), conversation.size());
  } else {  // not a trace id: two independent 64-bit hashes of the name
    const std::uint64_t a = std::hash<std::string_view>{}(conversation);
    const std::uint64_t b = std::hash<std::string_view>{}(std::string(conversation) + '\x01');
    std::memcpy(k.data(), &a, 8);
    std::memcpy(k.data() + 8, &b, 8);
  }
  return k;
}

prefix_tracker::prefix_tracker(std::size_t max_conversations)
    : per_stripe_(std::max<std::size_t>(1, max_conversations / stripes)) {}

prefix_verdict prefix_tracker::observe(std::string_view conversation, const std::optional<prefix_fingerprint>& client,
                                       const std::optional<prefix_fingerprint>& forwarded, planned_break planned) {
  if (!client) return prefix_verdict::unknown;
  const auto& sent = forwarded ? *forwarded : *client;
  const key k = key_of(conversation);
  auto& s = stripes_[key_hash{}(k) % stripes];
  std::lock_guard lock(s.mutex);
  auto it = s.turns.find(k);
  std::optional<turn> previous;
  if (it != s.turns.end()) {
    previous = it->second.first;
    it->second.first = {summary_of(*client), summary_of(sent)};
    s.order.splice(s.order.begin(), s.order, it->second.second);
  } else {
    if (s.turns.size() >= per_stripe_) {  // forget the least recent conversation
      s.turns.erase(s.order.back());
      s.order.pop_back();
    }
    s.order.push_front(k);
    s.turns.emplace(s.order.front(), std::make_pair(turn{summary_of(*client), summary_of(sent)}, s.order.begin()));
  }
  if (!previous) return prefix_verdict::first_turn;
  if (extends(previous->forwarded, sent)) return prefix_verdict::extended;
  if (!extends(previous->client, *client)) return prefix_verdict::client_break;
  switch (planned) {
    case planned_break::budget: return prefix_verdict::budget_break;
    case planned_break::age: return prefix_verdict::age_break;
    case planned_break::offer: return prefix_verdict::offer_break;
    case planned_break::churn: return prefix_verdict::churn_break;
    case planned_break::none: break;
  }
  return prefix_verdict::proxy_break;
}

}  // namespace gistproxy::rewrite
