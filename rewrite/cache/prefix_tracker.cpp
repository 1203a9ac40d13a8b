#include "rewrite/cache/prefix_tracker.hpp"

#include <algorithm>
#include <functional>

namespace gistproxy::rewrite {

std::string_view break_cause(prefix_verdict v) {
  switch (v) {
    case prefix_verdict::client_break: return "client";
    case prefix_verdict::proxy_break: return "proxy";
    case prefix_verdict::budget_break: return "budget";
    default: return {};
  }
}

prefix_tracker::prefix_tracker(std::size_t max_conversations)
    : per_stripe_(std::max<std::size_t>(1, max_conversations / stripes)) {}

prefix_verdict prefix_tracker::observe(std::string_view conversation, const std::optional<prefix_fingerprint>& client,
                                       const std::optional<prefix_fingerprint>& forwarded, bool budget_evicted) {
  if (!client) return prefix_verdict::unknown;
  const auto& sent = forwarded ? *forwarded : *client;
  auto& s = stripes_[std::hash<std::string_view>{}(conversation) % stripes];
  std::lock_guard lock(s.mutex);
  auto it = s.turns.find(std::string(conversation));
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
    s.order.emplace_front(conversation);
    s.turns.emplace(s.order.front(), std::make_pair(turn{summary_of(*client), summary_of(sent)}, s.order.begin()));
  }
  if (!previous) return prefix_verdict::first_turn;
  if (extends(previous->forwarded, sent)) return prefix_verdict::extended;
  if (!extends(previous->client, *client)) return prefix_verdict::client_break;
  return budget_evicted ? prefix_verdict::budget_break : prefix_verdict::proxy_break;
}

}  // namespace gistproxy::rewrite
