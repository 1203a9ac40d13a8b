#include "rewrite/prompt_cache/prefix_fingerprint.hpp"

#include <algorithm>

#define XXH_INLINE_ALL
#include <xxhash.h>

#include "rewrite/json/walk_reuse.hpp"

namespace gistproxy::rewrite {
namespace {

// Beyond this depth a value is hashed as its raw bytes (markers included):
// still deterministic, and no recursion the other side can deepen.
constexpr int max_depth = 32;

std::uint64_t mix(std::uint64_t h, std::uint64_t v) {
  // A 64-bit combine (boost::hash_combine's, widened): order matters.
  return h ^ (v + 0x9e3779b97f4a7c15ull + (h << 12) + (h >> 4));
}

// XXH3: every key and scalar of the prefix is hashed, every turn (the new
// part of it); std::hash's murmur took 1.6k instructions of a 1 KB request.
std::uint64_t bytes_hash(std::string_view s) { return XXH3_64bits(s.data(), s.size()); }

// What a value's hash leaves out (prefix_layout): `marker` members at any
// depth (none when empty), and blocks whose text begins with `text`.
struct left_out {
  std::string_view marker;
  std::string_view text;  // the block's "text" as JSON, its opening quote included
};

// Hashes one JSON value without what `out` names. An array element that is
// an object holding nothing but the marker (a marker block: Converse's
// {"cachePoint":{…}}), or a block of uncached text, is left out of its array
// entirely, as if the client had not sent it: clients move those every turn
// just as they move cache_control members. When `dropped` is given and the
// value is such a block, it is set and `h` is left as it was. Returns false
// on malformed JSON.
bool hash_value(json::cursor& c, const left_out& out, int depth, std::uint64_t& h, bool* dropped = nullptr) {
  const auto k = c.peek();
  if (depth < max_depth && k == json::kind::object) {
    std::uint64_t inner = mix(h, '{');
    std::size_t kept = 0, markers = 0;
    bool uncached = false;
    const bool ok = c.object([&](std::string_view key, json::cursor& v) {
                       if (!out.marker.empty() && key == out.marker) {
                         ++markers;
                         return v.skip_value().has_value();
                       }
                       ++kept;
                       inner = mix(inner, bytes_hash(key));
                       if (!out.text.empty() && key == "text" && v.peek() == json::kind::string) {
                         auto r = v.skip_value();
                         if (!r) return false;
                         const auto raw = c.doc().substr(r->begin, r->size());
                         uncached = raw.substr(0, out.text.size()) == out.text;
                         inner = mix(inner, bytes_hash(raw));
                         return true;
                       }
                       return hash_value(v, out, depth + 1, inner);
                     }).has_value();
    if (dropped && ((markers > 0 && kept == 0) || uncached)) {
      *dropped = true;
      return ok;
    }
    h = mix(inner, '}');
    return ok;
  }
  if (depth < max_depth && k == json::kind::array) {
    h = mix(h, '[');
    const bool ok = c.array([&](std::size_t, json::cursor& v) {
                       bool dropped_here = false;
                       return hash_value(v, out, depth + 1, h, &dropped_here);
                     }).has_value();
    h = mix(h, ']');
    return ok;
  }
  auto r = c.skip_value();
  if (!r) return false;
  h = mix(h, bytes_hash(c.doc().substr(r->begin, r->size())));
  return true;
}

// One value hashed, with where it lies. A value the previous turn's body
// had at this offset, within the bytes both bodies share, has the hash it had
// then (walk_reuse.hpp): the cursor only steps over it.
bool hashed_part(json::cursor& c, const left_out& omit, prefix_part& out) {
  out = {};
  c.peek();  // past whitespace: the range starts at the value
  out.at.begin = c.pos();
  auto* reuse = c.doc().reuse();
  if (reuse)
    if (auto known = reuse->hash_at(out.at.begin)) {
      auto r = c.skip_value();
      if (!r) return false;
      if (r->end == known->at.end) {
        out = {known->hash, *r};
        reuse->saw_hash(out.at, out.hash);  // the next turn asks again
        return true;
      }
      return false;  // cannot happen for shared bytes; never a hash for bytes it does not cover
    }
  if (!hash_value(c, omit, 0, out.hash)) return false;
  out.at.end = c.pos();
  if (reuse) reuse->saw_hash(out.at, out.hash);
  return true;
}

std::optional<std::size_t> head_slot(const prefix_layout& layout, std::string_view key) {
  for (std::size_t i = 0; i < layout.head.size(); ++i)
    if (!layout.head[i].empty() && layout.head[i] == key) return i;
  return std::nullopt;
}

}  // namespace

std::uint64_t chain_hash(std::uint64_t previous, std::uint64_t item) { return mix(previous, item); }

namespace {

// One walk of a body's prefix for both readers: on_head(slot, part) for each
// head member, on_items_reset(list_begin) when the conversation member starts
// (a repeated member: the last one counts, as parsers take it; list_begin is
// npos when it is not a list), on_item(part) per item. take_items(list_begin,
// cursor) may step over the list's first items instead (the turn memory) and
// says whether it did. Whether the provider holds the conversation; nullopt
// when the body is not a JSON object that scans.
template <class OnHead, class OnReset, class OnItem, class TakeItems>
std::optional<bool> walk_prefix(json::document body, const prefix_layout& layout, OnHead on_head, OnReset on_items_reset,
                                OnItem on_item, TakeItems take_items) {
  json::cursor c(body);
  if (c.peek() != json::kind::object) return std::nullopt;
  bool provider_held = false;
  const std::string quoted_uncached = layout.uncached_text.empty() ? std::string() : '"' + std::string(layout.uncached_text);
  const left_out omit_head{layout.cache_marker, quoted_uncached}, omit_item{layout.cache_marker, {}};
  auto item = [&](json::cursor& v) {
    prefix_part one;
    if (!hashed_part(v, omit_item, one)) return false;
    on_item(one);
    return true;
  };
  auto conversation = [&](json::cursor& v) {
    if (v.peek() != json::kind::array) {  // Responses' input may be one string: one item
      on_items_reset(std::string_view::npos);
      return item(v);
    }
    const std::size_t list_begin = v.pos();
    on_items_reset(list_begin);
    return v.array([&](std::size_t index, json::cursor& m) {
             if (index == 0 && take_items(list_begin, m)) return !m.failed();
             return item(m);
           })
        .has_value();
  };
  auto ok = c.object([&](std::string_view key, json::cursor& v) {
    if (auto slot = head_slot(layout, key)) {
      prefix_part part;
      if (!hashed_part(v, omit_head, part)) return false;
      on_head(*slot, part);
      return true;
    }
    if (!layout.provider_state.empty() && key == layout.provider_state) {
      provider_held = v.peek() != json::kind::null;
      return v.skip_value().has_value();
    }
    if (key == layout.conversation) return conversation(v);
    return v.skip_value().has_value();
  });
  if (!ok) return std::nullopt;
  return provider_held;
}

}  // namespace

std::optional<prefix_parts> split_prefix(json::document body, const prefix_layout& layout) {
  prefix_parts out;
  auto held = walk_prefix(
      body, layout, [&](std::size_t slot, const prefix_part& p) { out.head[slot] = p; },
      [&](std::size_t) {
        out.has_conversation = true;
        out.items.clear();
      },
      [&](const prefix_part& p) { out.items.push_back(p); }, [](std::size_t, json::cursor&) { return false; });
  if (!held) return std::nullopt;
  out.provider_held = *held;
  return out;
}

namespace {

// How many of the previous body's items lie wholly in the bytes both bodies
// share, when its list opened where this one does (0: none to take).
std::size_t items_to_take(const prefix_reuse& reuse, std::size_t list_begin) {
  const auto* prev = reuse.previous;
  if (!prev || prev->list_begin != list_begin || list_begin >= reuse.same_bytes) return 0;
  if (prev->item_ends.size() != prev->cumulative.size()) return 0;
  const auto& ends = prev->item_ends;
  return std::size_t(std::upper_bound(ends.begin(), ends.end(), reuse.same_bytes) - ends.begin());
}

}  // namespace

// The serve path's reader: hashes only, no parts kept.
std::optional<prefix_fingerprint> fingerprint_prefix(json::document body, const prefix_layout& layout,
                                                     const prefix_reuse& reuse) {
  std::array<std::uint64_t, prefix_layout::max_head> head{};
  prefix_fingerprint fp;
  std::uint64_t running = 0;
  auto* learn = reuse.learn;  // null: nothing recorded (no allocation for it either)
  if (learn) learn->clear();
  auto held = walk_prefix(
      body, layout, [&](std::size_t slot, const prefix_part& p) { head[slot] = p.hash; },
      [&](std::size_t list_begin) {
        fp.cumulative.clear();
        running = 0;
        if (learn) {
          learn->clear();
          learn->list_begin = list_begin;
        }
      },
      [&](const prefix_part& p) {
        fp.cumulative.push_back(running = chain_hash(running, p.hash));
        if (learn) learn->item_ends.push_back(p.at.end);
      },
      [&](std::size_t list_begin, json::cursor& c) {
        const std::size_t taken = items_to_take(reuse, list_begin);
        if (taken == 0) return false;
        const auto& prev = *reuse.previous;
        c.step_to(prev.item_ends[taken - 1]);
        fp.cumulative.assign(prev.cumulative.begin(), prev.cumulative.begin() + std::ptrdiff_t(taken));
        if (learn) learn->item_ends.assign(prev.item_ends.begin(), prev.item_ends.begin() + std::ptrdiff_t(taken));
        running = fp.cumulative.back();
        return true;
      });
  if (!held || *held) {
    if (learn) learn->clear();
    return std::nullopt;
  }
  if (learn) learn->cumulative = fp.cumulative;
  fp.head = 1;
  for (const auto h : head) fp.head = mix(fp.head, h);
  return fp;
}

namespace {

bool same_part(const std::optional<prefix_part>& a, const std::optional<prefix_part>& b) {
  return a.has_value() == b.has_value() && (!a || a->hash == b->hash);
}

}  // namespace

bool keeps_prefix(const prefix_parts& prev, const prefix_parts& cur) {
  for (std::size_t i = 0; i < prev.head.size(); ++i)
    if (!same_part(prev.head[i], cur.head[i])) return false;
  if (cur.provider_held) return true;  // the cached prefix is the provider's
  if (!prev.has_conversation || !cur.has_conversation || prev.items.size() > cur.items.size()) return false;
  for (std::size_t i = 0; i < prev.items.size(); ++i)
    if (prev.items[i].hash != cur.items[i].hash) return false;
  return true;
}

std::uint64_t shared_prefix(const prefix_parts& prev, const prefix_parts& cur,
                            const std::function<std::uint64_t(json::range)>& measure) {
  std::uint64_t shared = 0;
  for (std::size_t i = 0; i < prev.head.size(); ++i) {
    if (!same_part(prev.head[i], cur.head[i])) return shared;
    if (cur.head[i]) shared += measure(cur.head[i]->at);
  }
  if (!prev.has_conversation || !cur.has_conversation) return shared;
  for (std::size_t i = 0; i < prev.items.size() && i < cur.items.size() && prev.items[i].hash == cur.items[i].hash; ++i)
    shared += measure(cur.items[i].at);
  return shared;
}

prefix_summary summary_of(const prefix_fingerprint& fp) {
  return {fp.head, std::uint32_t(fp.cumulative.size()), fp.cumulative.empty() ? 0 : fp.cumulative.back()};
}

bool extends(const prefix_summary& prev, const prefix_fingerprint& cur) {
  if (prev.head != cur.head) return false;
  if (prev.messages == 0) return true;
  return cur.cumulative.size() >= prev.messages && cur.cumulative[prev.messages - 1] == prev.all;
}

}  // namespace gistproxy::rewrite
