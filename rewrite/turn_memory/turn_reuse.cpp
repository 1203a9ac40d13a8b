#include "rewrite/turn_memory/turn_reuse.hpp"

#include "rewrite/json/walk_reuse.hpp"

namespace gistproxy::rewrite {

namespace {

// The size of `body` with `edits` spliced in: a forwarded body of another
// size was not made this way, and its edits say nothing about it.
std::size_t spliced_size(std::string_view body, const std::vector<splice_edit>& edits) {
  std::size_t n = body.size();
  for (const auto& e : edits) n = n - e.at.size() + e.size();
  return n;
}

}  // namespace

std::size_t forwarded_in_common(const std::vector<splice_edit>& previous, const std::vector<splice_edit>& now,
                                std::size_t same_client) {
  constexpr std::size_t none = std::size_t(-1);
  std::size_t limit = same_client;
  std::ptrdiff_t shift = 0;  // forwarded offset less client offset, past the edits taken
  for (std::size_t i = 0; i < previous.size() || i < now.size(); ++i) {
    const auto* a = i < previous.size() ? &previous[i] : nullptr;
    const auto* b = i < now.size() ? &now[i] : nullptr;
    const std::size_t next = std::min(a ? a->at.begin : none, b ? b->at.begin : none);
    if (next >= limit) break;
    if (!a || !b || !a->alike(*b) || b->at.end > limit) {
      limit = next;
      break;
    }
    shift += std::ptrdiff_t(b->size()) - std::ptrdiff_t(b->at.size());
  }
  return std::size_t(std::ptrdiff_t(limit) + shift);
}

turn_reuse::turn_reuse(turn_match previous, const endpoint& api, std::string_view body)
    : api_(&api), previous_(std::move(previous)), compared_(body), next_(std::make_shared<remembered_turn>()) {
  next_->api = &api;
}

turn_reuse::turn_reuse(const endpoint& api) : api_(&api) {}

const json::walk_record* turn_reuse::previous_walks(std::string_view body) const {
  return previous_.turn && shared_with(body) ? &previous_.turn->body_walks : nullptr;
}

std::size_t turn_reuse::shared_with(std::string_view body) const {
  return body.data() == compared_.data() && body.size() == compared_.size() ? previous_.same_bytes : 0;
}

std::optional<request_facts> turn_reuse::inspect(std::string_view body) const {
  if (!next_) return api_->wire().inspect(body);
  json::reuse_scope scope(body, previous_walks(body), shared_with(body), &next_->body_walks);
  return next_->api->wire().inspect(scope.bytes());
}

rewrite_result turn_reuse::rewrite(const offload_engine& engine, std::string_view body, std::string_view tenant,
                                   std::optional<double> read_ratio,
                                   std::optional<std::uint64_t> threshold_tokens, bool may_store,
                                   const conversation_record* conversation) const {
  if (!next_) {
    output_reuse plain;
    plain.may_store = may_store;
    plain.conversation = conversation;
    return engine.rewrite(api_->wire(), body, tenant, read_ratio, threshold_tokens, plain);
  }
  const auto* prev = previous_walks(body) ? previous_.turn.get() : nullptr;
  json::reuse_scope scope(body, previous_walks(body), shared_with(body), &next_->body_walks);
  const output_reuse reuse{prev ? &prev->outputs : nullptr, shared_with(body), &next_->outputs,
                           prev ? &prev->items : nullptr, &next_->items, may_store, conversation};
  auto result = engine.rewrite(next_->api->wire(), scope.bytes(), tenant, read_ratio, threshold_tokens, reuse);
  // How this body's forwarded bytes were made, for fingerprint_forwarded and
  // the next turn; only for the buffer that was compared (and is remembered).
  next_->edits_known = body.data() == compared_.data() && body.size() == compared_.size();
  next_->forwarded_edits = next_->edits_known ? std::move(result.edits) : std::vector<splice_edit>();
  return result;
}

std::optional<prefix_fingerprint> turn_reuse::fingerprint_client(std::string_view body,
                                                                 const prefix_layout& layout) const {
  if (!next_) return fingerprint_prefix(body, layout);
  json::reuse_scope scope(body, previous_walks(body), shared_with(body), &next_->body_walks);
  const auto* prev = previous_walks(body) ? previous_.turn.get() : nullptr;
  return fingerprint_prefix(scope.bytes(), layout,
                            {prev ? &prev->client_prefix : nullptr, shared_with(body), &next_->client_prefix});
}

std::optional<prefix_fingerprint> turn_reuse::fingerprint_forwarded(std::string_view forwarded,
                                                                    const prefix_layout& layout) const {
  if (!next_) return fingerprint_prefix(forwarded, layout);
  // What went upstream last time, compared byte for byte with what goes now
  // (a turn forwarded as received: its forwarded bytes are its body).
  const auto* prev = previous_.turn.get();
  const json::walk_record* walks = nullptr;
  const prefix_memo* items = nullptr;
  std::size_t same = 0;
  if (prev) {
    const bool as_received = prev->forwarded.empty();
    walks = as_received ? &prev->body_walks : &prev->forwarded_walks;
    items = as_received ? &prev->client_prefix : &prev->forwarded_prefix;
    const std::string_view before = as_received ? std::string_view(prev->body) : std::string_view(prev->forwarded);
    // What both turns' edits say is shared is not read again (it is cold by
    // now: a whole forwarded body), only what follows it.
    static const std::vector<splice_edit> no_edits;
    const auto& earlier = as_received ? no_edits : prev->forwarded_edits;
    std::size_t known = 0;
    if ((as_received || prev->edits_known) && spliced_size(prev->body, earlier) == before.size() &&
        next_->edits_known && spliced_size(compared_, next_->forwarded_edits) == forwarded.size())
      known = std::min({forwarded_in_common(earlier, next_->forwarded_edits, previous_.same_bytes), before.size(),
                        forwarded.size()});
    same = known + json::common_prefix(before.substr(known), forwarded.substr(known));
  }
  json::reuse_scope scope(forwarded, walks, same, &next_->forwarded_walks);
  return fingerprint_prefix(scope.bytes(), layout, {items, same, &next_->forwarded_prefix});
}

std::shared_ptr<const remembered_turn> turn_reuse::finish(std::string body, std::string forwarded) {
  auto turn = std::move(next_);
  turn->body_walks.finish();
  turn->forwarded_walks.finish();
  turn->body = std::move(body);
  turn->forwarded = std::move(forwarded);
  if (turn->forwarded.empty()) {  // forwarded as received, whatever a pass made
    turn->forwarded_edits.clear();
    turn->edits_known = false;
  }
  previous_ = {};
  return turn;
}

}  // namespace gistproxy::rewrite
