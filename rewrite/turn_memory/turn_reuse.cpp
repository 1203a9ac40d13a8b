#include "rewrite/turn_memory/turn_reuse.hpp"

#include "rewrite/json/walk_reuse.hpp"

namespace gistproxy::rewrite {

turn_reuse::turn_reuse(turn_match previous, const dialect& api, std::string_view body)
    : previous_(std::move(previous)), compared_(body), next_(std::make_shared<remembered_turn>()) {
  next_->api = &api;
}

const json::walk_record* turn_reuse::previous_walks(std::string_view body) const {
  return previous_.turn && shared_with(body) ? &previous_.turn->body_walks : nullptr;
}

std::size_t turn_reuse::shared_with(std::string_view body) const {
  return body.data() == compared_.data() && body.size() == compared_.size() ? previous_.same_bytes : 0;
}

std::optional<request_facts> turn_reuse::inspect(std::string_view body) const {
  json::reuse_scope scope(body, previous_walks(body), shared_with(body), &next_->body_walks);
  return next_->api->inspect(body);
}

rewrite_result turn_reuse::rewrite(const offload_engine& engine, std::string_view body, std::string_view tenant,
                                   std::optional<double> read_ratio,
                                   std::optional<std::uint64_t> threshold_tokens, bool may_store) const {
  const auto* prev = previous_walks(body) ? previous_.turn.get() : nullptr;
  json::reuse_scope scope(body, previous_walks(body), shared_with(body), &next_->body_walks);
  const output_reuse reuse{prev ? &prev->outputs : nullptr, shared_with(body), &next_->outputs,
                           prev ? &prev->items : nullptr, &next_->items, may_store};
  return engine.rewrite(*next_->api, body, tenant, read_ratio, threshold_tokens, reuse);
}

std::optional<prefix_fingerprint> turn_reuse::fingerprint_client(std::string_view body,
                                                                 const prefix_layout& layout) const {
  json::reuse_scope scope(body, previous_walks(body), shared_with(body), &next_->body_walks);
  const auto* prev = previous_walks(body) ? previous_.turn.get() : nullptr;
  return fingerprint_prefix(body, layout,
                            {prev ? &prev->client_prefix : nullptr, shared_with(body), &next_->client_prefix});
}

std::optional<prefix_fingerprint> turn_reuse::fingerprint_forwarded(std::string_view forwarded,
                                                                    const prefix_layout& layout) const {
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
    same = json::common_prefix(as_received ? prev->body : prev->forwarded, forwarded);
  }
  json::reuse_scope scope(forwarded, walks, same, &next_->forwarded_walks);
  return fingerprint_prefix(forwarded, layout, {items, same, &next_->forwarded_prefix});
}

std::shared_ptr<const remembered_turn> turn_reuse::finish(std::string body, std::string forwarded) {
  auto turn = std::move(next_);
  turn->body_walks.finish();
  turn->forwarded_walks.finish();
  turn->body = std::move(body);
  turn->forwarded = std::move(forwarded);
  previous_ = {};
  return turn;
}

}  // namespace gistproxy::rewrite
