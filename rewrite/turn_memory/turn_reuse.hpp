// One turn's use of the turn memory: every walk of its body (the wire format's
// inspect, the offload engine, the prefix check's fingerprints) runs here,
// inside a reuse_scope over the bytes it shares with the conversation's
// previous turn, and records what it learns; finish() makes that record the
// turn to remember. The proxy calls these from its phases (receive, rewrite,
// prefix check, end of exchange); tests call them in the same order, so the
// incremental path they check is the one that serves.
#pragma once

#include <memory>
#include <optional>
#include <string>
#include <string_view>

#include "rewrite/offload/engine.hpp"
#include "rewrite/prompt_cache/prefix_fingerprint.hpp"
#include "rewrite/turn_memory/turn_memory.hpp"

namespace gistproxy::rewrite {

// The bytes two forwarded bodies surely share, without reading them: each
// is its client body with edits spliced in, and the client bodies share
// `same_client` bytes. Up to the first edit either turn made there that the
// other did not make alike (or that reaches past them), both hold the same
// client bytes with the same replacements. Edits ascending, as spliced.
std::size_t forwarded_in_common(const std::vector<splice_edit>& previous, const std::vector<splice_edit>& now,
                                std::size_t same_client);

class turn_reuse {
 public:
  // `previous`: what turn_memory::find gave for `body` (may hold no turn).
  // Walks of any other buffer (a body swapped since, the control group's
  // bytes as sent) reuse nothing: what was compared was `body`.
  turn_reuse(turn_match previous, const endpoint& api, std::string_view body);
  // A turn that is neither helped nor remembered (no conversation memory, a
  // body too short to be worth it, a token count, bytes kept as sent): its
  // walks go as they come, and nothing is recorded.
  explicit turn_reuse(const endpoint& api);

  std::optional<request_facts> inspect(std::string_view body) const;
  // `may_store`: false for a pass on a thread that must not block (see
  // output_reuse::may_store); such a pass can be run again, with true.
  // `conversation`: what its earlier turns decided (output_reuse::conversation).
  rewrite_result rewrite(const offload_engine& engine, std::string_view body, std::string_view tenant,
                         std::optional<double> read_ratio, std::optional<std::uint64_t> threshold_tokens,
                         bool may_store = true, const conversation_record* conversation = nullptr) const;
  // Bytes of the body the previous turn did not send (all of it without one).
  std::size_t new_bytes(std::string_view body) const { return body.size() - shared_with(body); }
  // The client's body, and what goes upstream when it differs from it.
  std::optional<prefix_fingerprint> fingerprint_client(std::string_view body, const prefix_layout& layout) const;
  std::optional<prefix_fingerprint> fingerprint_forwarded(std::string_view forwarded, const prefix_layout& layout) const;
  // This turn's record, holding its body (and its forwarded body when that
  // was not the body itself); the reuse is spent.
  std::shared_ptr<const remembered_turn> finish(std::string body, std::string forwarded);

  std::size_t same_bytes() const { return previous_.same_bytes; }
  // Whether finish() has a turn to file (false for a plain one).
  bool remembers() const { return next_ != nullptr; }

 private:
  // The previous turn's body walks and the bytes they may answer for, when
  // `body` is the buffer that was compared.
  const json::walk_record* previous_walks(std::string_view body) const;
  std::size_t shared_with(std::string_view body) const;

  const endpoint* api_;
  turn_match previous_;
  std::string_view compared_;
  std::shared_ptr<remembered_turn> next_;  // null: a plain one
};

}  // namespace gistproxy::rewrite
