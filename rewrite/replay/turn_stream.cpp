#include "rewrite/replay/turn_stream.hpp"

#include <algorithm>

#include "rewrite/blob/digest.hpp"
#include "rewrite/replay/agent_heads.hpp"
#include "rewrite/turn_memory/turn_reuse.hpp"

namespace gistproxy::rewrite {

namespace {

// A token-count mark about every this many bytes: a turn re-reads at most
// this much (plus the tokenizer's margin) of what it shares with the last.
constexpr std::size_t mark_every = 4096;

// The entry of `v` (ascending at.begin) that begins at `begin`, or null.
// Looked up in the order the turn walks its body: `hint`, the entry after
// the last one found, is tried before a binary search.
template <class T>
const T* at_place(const std::vector<T>& v, std::size_t begin, std::size_t& hint) {
  if (hint >= v.size() || v[hint].at.begin != begin) {
    auto it = std::lower_bound(v.begin(), v.end(), begin, [](const T& e, std::size_t b) { return e.at.begin < b; });
    if (it == v.end() || it->at.begin != begin) return nullptr;
    hint = std::size_t(it - v.begin());
  }
  return &v[hint++];
}

}  // namespace

// What one turn learned, for the next turn of the stream.
struct turn_stream::learned {
  json::walk_record walks, forwarded_walks;
  std::vector<output_memo> outputs;
  conversation_items engine_items, scan_items;
  struct key {
    json::range at;
    bool image = false;
    std::string sha256;
  };
  std::vector<key> keys;  // by at.begin
  std::vector<part_count> parts, forwarded_parts;  // by at.begin
  std::vector<splice_edit> edits;  // how the forwarded body was made (none: it is the body)
  bool rewritten = false;
};

turn_stream::turn_stream(const token_estimator& estimator, replay_work* work, bool reuse)
    : estimator_(estimator), work_(work), reuse_(reuse), previous_(std::make_unique<learned>()),
      next_(std::make_unique<learned>()) {}

turn_stream::~turn_stream() = default;

void turn_stream::reset() {
  last_recorded_ = {};
  items_.reset();
  frame_.reset();
  count_ = items_end_ = 0;
  std::string().swap(buffer_);
  same_ = forwarded_same_ = 0;
  *previous_ = learned{};
}

void turn_stream::set_head(std::uint64_t tokens) {
  if (tokens == head_tokens_) return;
  head_tokens_ = tokens;
  head_api_ = nullptr;
  head_member_.clear();
  items_.reset();  // the next body is rebuilt whole, with it
}

const std::string& turn_stream::head_for(const endpoint& api) {
  if (head_tokens_ && head_api_ != &api) {
    head_member_ = assumed_head_member(api, head_tokens_, estimator_);
    head_api_ = &api;
  }
  static const std::string none;
  return head_tokens_ ? head_member_ : none;
}

std::string_view turn_stream::body_of(const recorded_request& req) {
  if (req.rebuilt_items && req.frame) {
    last_recorded_ = {};
    return rebuild(req);
  }
  items_.reset();
  frame_.reset();
  const std::string_view body = req.recorded_body;
  same_ = reuse_ && !last_recorded_.empty() ? json::common_prefix(last_recorded_, body) : 0;
  last_recorded_ = body;
  return body;
}

// opening [ item , item ... ] closing: when `req` sends this stream's items
// again (the same list, at least as many, the same opening), the bytes up to
// the last item sent before stay and only the new items and the closing are
// written.
std::string_view turn_stream::rebuild(const recorded_request& req) {
  const auto& items = *req.rebuilt_items;
  const auto count = std::min(req.rebuilt_count, items.size());
  const bool continues = reuse_ && items_ == req.rebuilt_items && frame_ && count >= count_ &&
                         (frame_ == req.frame || frame_->opening == req.frame->opening);
  std::string previous_tail;
  std::size_t from = 0;
  if (continues) {
    previous_tail = "]" + frame_->closing;
    buffer_.resize(items_end_);
    from = count_;
  } else {
    // The assumed head first: {"tools":[...], then the frame's own members.
    const auto& opening = req.frame->opening;
    const auto& head = head_for(*req.api);
    buffer_.clear();
    if (!head.empty() && opening.size() > 1 && opening[0] == '{') {
      buffer_ += '{';
      buffer_ += head;
      buffer_ += ',';
      buffer_.append(opening, 1);
    } else {
      buffer_ += opening;
    }
    buffer_ += '[';
  }
  const auto kept = buffer_.size();
  for (std::size_t i = from; i < count; ++i) {
    if (i) buffer_ += ',';
    buffer_ += items[i];
  }
  items_end_ = buffer_.size();
  buffer_ += ']';
  buffer_ += req.frame->closing;
  if (work_) work_->bytes_built += buffer_.size() - kept;
  same_ = continues ? kept + json::common_prefix(previous_tail, std::string_view(buffer_).substr(kept)) : 0;
  items_ = req.rebuilt_items;
  frame_ = req.frame;
  count_ = count;
  return buffer_;
}

json::reuse_scope turn_stream::body_scope(std::string_view body) {
  return json::reuse_scope(body, same_ ? &previous_->walks : nullptr, same_, reuse_ ? &next_->walks : nullptr);
}

void turn_stream::reuse_in(request_scan& scan) {
  scan.previous_items = same_ ? &previous_->scan_items : nullptr;
  scan.same_bytes = same_;
  scan.learn_items = reuse_ ? &next_->scan_items : nullptr;
}

output_reuse turn_stream::engine_reuse() {
  output_reuse r;
  if (same_) {
    r.previous = &previous_->outputs;
    r.previous_items = &previous_->engine_items;
    r.same_bytes = same_;
  }
  if (reuse_) {
    r.learn = &next_->outputs;
    r.learn_items = &next_->engine_items;
  }
  return r;
}

std::string turn_stream::output_key(const tool_output& o) {
  std::string key;
  if (same_ && o.value.end <= same_)
    if (const auto* k = at_place(previous_->keys, o.value.begin, hints_[0]); k && k->at.end == o.value.end && k->image == o.image)
      key = k->sha256;
  if (key.empty()) key = sha256_hex(o.raw);
  if (reuse_) next_->keys.push_back({o.value, o.image, key});
  return key;
}

std::uint64_t turn_stream::counted(std::string_view text, std::vector<tokens::count_mark>& marks, std::size_t same) {
  if (!reuse_) {
    if (work_) work_->bytes_counted += text.size();
    return estimator_.estimate(text, content_kind::text);
  }
  const auto r = tokens::count_resuming(estimator_, text, content_kind::text, marks, same, mark_every);
  if (work_) work_->bytes_counted += text.size() - std::min(r.read_from, text.size());
  return r.tokens;
}

std::uint64_t turn_stream::count_body(std::string_view body) { return counted(body, body_marks_, same_); }

std::uint64_t turn_stream::count_forwarded(std::string_view forwarded, const std::vector<splice_edit>& edits) {
  forwarded_same_ = same_ ? std::min(forwarded_in_common(previous_->edits, edits, same_), forwarded.size()) : 0;
  if (reuse_) {
    next_->edits = edits;
    next_->rewritten = !edits.empty();
  }
  return counted(forwarded, forwarded_marks_, forwarded_same_);
}

std::optional<prefix_parts> turn_stream::split_forwarded(std::string_view forwarded, const prefix_layout& layout) {
  const json::walk_record* walks = nullptr;
  if (forwarded_same_) walks = previous_->rewritten ? &previous_->forwarded_walks : &previous_->walks;
  json::reuse_scope scope(forwarded, walks, forwarded_same_, reuse_ ? &next_->forwarded_walks : nullptr);
  return split_prefix(scope.bytes(), layout);
}

std::uint64_t turn_stream::part_tokens(std::string_view text, json::range at, bool forwarded) {
  const auto limit = forwarded ? forwarded_same_ : same_;
  const auto& known = forwarded ? previous_->forwarded_parts : previous_->parts;
  std::optional<std::uint64_t> tokens;
  if (limit && at.end <= limit)
    if (const auto* p = at_place(known, at.begin, hints_[forwarded ? 2 : 1]); p && p->at.end == at.end) tokens = p->tokens;
  if (!tokens) {
    tokens = estimator_.estimate(text.substr(at.begin, at.size()), content_kind::text);
    if (work_) work_->bytes_counted += at.size();
  }
  if (reuse_) (forwarded ? next_->forwarded_parts : next_->parts).push_back({at, *tokens});
  return *tokens;
}

void turn_stream::finish_turn() {
  if (!reuse_) return;
  // Mostly found in order already: sorted only when not.
  auto in_place_order = [](auto& v) {
    auto by_place = [](const auto& a, const auto& b) { return a.at.begin < b.at.begin; };
    if (!std::is_sorted(v.begin(), v.end(), by_place)) std::sort(v.begin(), v.end(), by_place);
  };
  auto& n = *next_;
  n.walks.finish();
  n.forwarded_walks.finish();
  in_place_order(n.keys);
  in_place_order(n.parts);
  in_place_order(n.forwarded_parts);
  std::swap(previous_, next_);
  *next_ = learned{};
  hints_ = {};
}

}  // namespace gistproxy::rewrite
