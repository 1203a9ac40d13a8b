// Storing the chosen outputs, building the references that replace them,
// offering read_blob and splicing the edits into the body; then what the
// turn leaves for the report and the next turn.
#include <algorithm>

#include "rewrite/gist/reference.hpp"
#include "rewrite/offload/pass.hpp"

namespace gistproxy::rewrite {

// 3. Store each chosen output and build the reference that replaces it.
//    A store failure leaves the output inline (fail-open).
void offload_engine::pass::store_and_replace() {
  if (const auto chosen = std::count_if(cands_.begin(), cands_.end(), [](const candidate& c) { return c.chosen; })) {
    report_.offloads.reserve(std::size_t(chosen));
    edits_.reserve(std::size_t(chosen) + 1);  // and read_blob's definition
  }
  // One clock read per output actually stored: a blob keep() confirms
  // (most of the few hundred a long conversation re-offloads every turn)
  // gets an instant span at the pass's last reading.
  std::uint64_t now = e_.now_ns_();
  for (auto& c : cands_) {
    if (!c.chosen) continue;
    if (c.size > cfg_.max_blob_bytes) {
      ++report_.skipped_too_large;
      c.fate = output_fate::too_large;
      continue;
    }
    offload_record rec = record_of(c, now);
    auto replacement = replacement_for(c, rec);
    bool confirmed = false;
    auto put = store(c, rec, now, confirmed);
    if (!confirmed) now = e_.now_ns_();
    if (!confirmed && put.error == blob_error::none) c.kept_ns = now, c.kept_losses = losses_;
    if (put.found_damaged) ++report_.found_damaged;
    if (put.error != blob_error::none) {
      if (put.error == blob_error::too_large) ++report_.skipped_too_large;
      else if (put.error == blob_error::full) ++report_.store_full;
      else ++report_.store_failures;
      c.fate = put.error == blob_error::too_large ? output_fate::too_large
               : put.error == blob_error::full    ? output_fate::store_full
                                                  : output_fate::store_failed;
      continue;
    }
    c.fate = output_fate::offloaded;
    rec.deduplicated = put.deduplicated;
    replacement.at = c.out->value;
    edits_.push_back(std::move(replacement));
    rec.end_ns = now;
    report_.offloads.push_back(std::move(rec));
  }
}

// Stores a chosen output. Bytes the previous turn offloaded are usually
// stored already: keep() confirms it (and refreshes the TTL as a put
// would) without decoding them; a blob gone since is stored again.
put_result offload_engine::pass::store(candidate& c, const offload_record& rec, std::uint64_t now, bool& confirmed) {
  confirmed = c.known && c.hash && (trusted(*c.known, now) || e_.store_.keep(tenant_, *c.hash));
  if (confirmed) {
    // A confirmation taken on trust keeps its time: the store is asked
    // again once it would look again itself.
    const bool on_trust = trusted(*c.known, now);
    c.kept_ns = on_trust ? c.known->kept_ns : now;
    c.kept_losses = on_trust ? c.known->kept_losses : losses_;
    return {blob_error::none, true, {}};
  }
  if (!reuse_.may_store) {
    report_.store_needed = true;
    return {blob_error::io, false, "not stored: this pass may not block"};
  }
  return e_.store_.put(content(c), blob_meta{std::string(rec.hash), c.size, rec.kind, 0, std::string(tenant_), rec.tool_name});
}

// The previous turn's confirmation that the store holds these bytes, while
// the store would trust its own: a long conversation re-offloads a few
// hundred outputs every turn, and asking the store for each costs a lock,
// a clock reading and a cold hash-table lookup. Not once a read has found a
// blob lost since: it may be this one, and only a put of the bytes this
// request carries repairs it (the store's own keep() knows which).
bool offload_engine::pass::trusted(const output_memo& m, std::uint64_t now) const {
  return m.kept_ns && m.kept_losses == losses_ && now >= m.kept_ns && now - m.kept_ns < e_.store_.keep_trust_ns();
}

offload_record offload_engine::pass::record_of(candidate& c, std::uint64_t start_ns) const {
  offload_record rec;
  rec.start_ns = start_ns;
  rec.hash = hash_of(c);
  rec.hash_text = c.hash;
  rec.tool_name = c.out->tool_name;
  rec.call_id = c.out->call_id;
  rec.order = c.out->order;
  rec.bytes = c.size;
  rec.repeated = c.known && c.known->kept_ns;
  rec.aged = c.aged;
  return rec;
}

// What takes the output's place (its `at` is left to the caller), with its
// kind and tokens before and after filled in. A text's reference is the
// gist's, escaped once when the gist was made.
splice_edit offload_engine::pass::replacement_for(candidate& c, offload_record& rec) const {
  if (c.out->image) {
    rec.kind = c.out->media_type.empty() ? "image" : c.out->media_type;
    rec.tokens_before = rough_tokens(c.out->raw.size());
    auto reference = render_image_reference(c.out->media_type, c.size, c.out->tool_name, rec.hash, ref_cfg_);
    rec.tokens_after = e_.estimator_.estimate(reference, content_kind::text);  // a short line
    return {{}, d_.image_replacement(reference), nullptr, false};
  }
  auto g = gist_of(c);
  rec.kind = std::string(kind_name(g->shape.kind));
  rec.tokens_before = g->shape.tokens;
  rec.tokens_after = g->reference_tokens;
  // Inside a string that keeps its header (c.out->inner): no quotes of our own.
  return {{}, {}, std::move(g), c.out->inner};
}

// 4. read_blob joins the tools: always (so the tools prefix never changes
//    mid-conversation) or only when this request holds a reference
//    (one it made, or one it carried in that the store resolves).
void offload_engine::pass::offer_read_blob() {
  const bool offer_anyway = cfg_.inject == inject_mode::always || (cfg_.inject == inject_mode::cost && offer_);
  bool inject = !report_.offloads.empty() || (offer_anyway && scan_.tools.has_value()) ||
                carries_followable_reference();
  if (!inject || declared(report_.tool_name)) return;
  const auto& def = definition();
  if (scan_.tools) {
    // Append after the client's tools: their bytes (and cache breakpoints) stay put.
    bool empty = scan_.tools->size() >= 2 &&
                 body_.substr(scan_.tools->begin + 1, scan_.tools->size() - 2).find_first_not_of(" \t\r\n") ==
                     std::string_view::npos;
    edits_.push_back({{scan_.tools->end - 1, scan_.tools->end - 1}, (empty ? "" : ",") + def, nullptr, false});
  } else {
    auto added = d_.tools_insertion(body_, scan_, def);  // a new tools array, where this API keeps it
    edits_.push_back({{added.at, added.at}, std::move(added.text), nullptr, false});
  }
  report_.tool_injected = true;
  report_.tool_tokens = definition_tokens();
}

// 5. Splice: copy the untouched bytes around each edit.
void offload_engine::pass::splice() {
  if (edits_.empty()) return;
  std::sort(edits_.begin(), edits_.end(), [](const edit& a, const edit& b) { return a.at.begin < b.at.begin; });
  std::size_t size = body_.size();
  for (const auto& e : edits_) size = size - e.at.size() + e.size();
  auto& out = result_.body;
  out.reserve(size);
  std::size_t pos = 0;
  for (const auto& e : edits_) {
    out.append(body_.substr(pos, e.at.begin - pos));
    e.append_to(out);
    pos = e.at.end;
  }
  out.append(body_.substr(pos));
  report_.outcome = rewrite_outcome::rewritten;
  result_.edits = std::move(edits_);
}

// What this turn derived from its outputs' bytes, for the next turn.
void offload_engine::pass::learn() const {
  if (!reuse_.learn) return;
  auto& out = *reuse_.learn;
  out.clear();
  out.reserve(cands_.size());
  for (const auto& c : cands_)
    if (c.decoded)
      out.push_back({c.out->value, c.out->image, c.exact, c.size, c.hash, c.gist,
                     c.gist ? ref_cfg_.tool_name : std::string(), c.fate == output_fate::offloaded ? c.kept_ns : 0,
                     c.kept_losses});
  auto by_place = [](const output_memo& a, const output_memo& b) { return a.value.begin < b.value.begin; };
  if (!std::is_sorted(out.begin(), out.end(), by_place)) std::sort(out.begin(), out.end(), by_place);
}

// What became of each output, in scan order.
void offload_engine::pass::report_fates() {
  report_.fates.reserve(cands_.size());
  for (const auto& c : cands_) report_.fates.push_back(c.fate);
}

}  // namespace gistproxy::rewrite
