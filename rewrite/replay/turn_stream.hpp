// Replay's consecutive turns re-send each other: a conversation rebuilt from
// a message list sends, on turn N+1, turn N's items and a few more, and a
// recorded agent sends its whole history again with each request. Replayed
// whole, each turn's body is rebuilt, scanned, rewritten, tokenized and
// hashed from its first byte: the square of the conversation (a 5,000-turn
// history never finished).
//
// A turn_stream keeps what the previous turn's work learned and hands it to
// the next: the body rebuilt in place (only the new items appended), the
// walks (json/walk_reuse.hpp), the offload engine's and the scan's memos
// (turn_memory.hpp's rules), each output's key, token-count marks and the
// token counts of prefix parts. Nothing is reused on trust: every answer is
// for bytes lying wholly within those both bodies share, which for a rebuilt
// body are known by construction (the same frame and first items) and for a
// recorded one are compared. Figures are identical either way (tests compare
// them with a replay that reuses nothing).
#pragma once

#include <array>
#include <cstdint>
#include <memory>
#include <string>
#include <string_view>
#include <vector>

#include "rewrite/gist/content_shape.hpp"
#include "rewrite/json/walk_reuse.hpp"
#include "rewrite/offload/engine.hpp"
#include "rewrite/prompt_cache/prefix_fingerprint.hpp"
#include "rewrite/replay/trace_formats.hpp"
#include "rewrite/tokens/resumable_count.hpp"

namespace gistproxy::rewrite {

// Work replay did, for tests that bound it by what each turn adds.
struct replay_work {
  std::uint64_t bytes_built = 0;    // body bytes written while rebuilding requests
  std::uint64_t bytes_counted = 0;  // bytes the tokenizer read for input and cached-prefix tokens
};

class turn_stream {
 public:
  // `work` may be null; with `reuse` false the stream learns and reuses
  // nothing (every turn from its first byte, as replay did before).
  turn_stream(const token_estimator& estimator, replay_work* work, bool reuse);
  ~turn_stream();
  turn_stream(const turn_stream&) = delete;
  turn_stream& operator=(const turn_stream&) = delete;

  // The body of `req`, valid until the next call or reset(), and the bytes
  // it shares with the body the previous call returned (same_bytes()).
  std::string_view body_of(const recorded_request& req);
  std::size_t same_bytes() const { return same_; }
  // A trace part is over: recorded bodies it held are gone.
  void reset();
  // Rebuilt bodies carry a head of about this many tokens (agent_heads.hpp; 0: none).
  void set_head(std::uint64_t tokens);

  // Reuse for each walk of this turn's body (inspect, scan, split_prefix).
  json::reuse_scope body_scope(std::string_view body);
  // The scan's and the engine's memos of conversation items and outputs.
  void reuse_in(request_scan& scan);
  output_reuse engine_reuse();
  // SHA-256 of an output's raw bytes: the previous turn's where it had the
  // same value at the same place within the shared bytes.
  std::string output_key(const tool_output& o);

  // Input tokens of the body, and of what is forwarded (the body with
  // `edits` spliced in; the body itself when `edits` is empty).
  std::uint64_t count_body(std::string_view body);
  std::uint64_t count_forwarded(std::string_view forwarded, const std::vector<splice_edit>& edits);
  // The prefix of what is forwarded, walked with the previous turn's
  // forwarded walks (the same text as the body when nothing was edited).
  std::optional<prefix_parts> split_forwarded(std::string_view forwarded, const prefix_layout& layout);
  // Tokens of one prefix part of the body or of the forwarded text.
  std::uint64_t part_tokens(std::string_view text, json::range at, bool forwarded);

  // The turn is over: what it learned becomes the previous turn's.
  void finish_turn();

 private:
  struct learned;
  struct part_count {
    json::range at;
    std::uint64_t tokens = 0;
  };
  std::string_view rebuild(const recorded_request& req);
  const std::string& head_for(const endpoint& api);
  std::uint64_t counted(std::string_view text, std::vector<tokens::count_mark>& marks, std::size_t same);

  const token_estimator& estimator_;
  replay_work* work_;
  bool reuse_;
  std::unique_ptr<learned> previous_, next_;
  std::size_t same_ = 0, forwarded_same_ = 0;
  std::array<std::size_t, 3> hints_{};  // where the next key, part and forwarded part likely are
  std::string_view last_recorded_;  // the previous recorded body (lives as long as its part)
  // The rebuilt body, in place: its items, frame and count, and where its items end.
  std::string buffer_;
  std::shared_ptr<const std::vector<std::string>> items_;
  std::shared_ptr<const rebuilt_frame> frame_;
  std::size_t count_ = 0, items_end_ = 0;
  std::vector<tokens::count_mark> body_marks_, forwarded_marks_;
  std::uint64_t head_tokens_ = 0;
  const endpoint* head_api_ = nullptr;  // the API head_member_ is written for
  std::string head_member_;
};

}  // namespace gistproxy::rewrite
