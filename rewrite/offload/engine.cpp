#include "rewrite/offload/engine.hpp"

#include <algorithm>
#include <memory>

#include "rewrite/blob/digest.hpp"
#include "rewrite/gist/reference.hpp"
#include "rewrite/offload/base64.hpp"
#include "rewrite/text/utf8.hpp"

namespace gistproxy::rewrite {
namespace {

struct edit {
  json::range at;
  std::string replacement;
};

struct candidate {
  const tool_output* out;
  std::string bytes;
  bool decoded = false;
  bool chosen = false;
  std::string hash;  // computed once, when needed
};

// Tokens the rest of the request costs, roughly: bytes/4.
std::uint64_t rough_tokens(std::size_t bytes) { return (bytes + 3) / 4; }

// What offloading an output saves, roughly: its tokens less its reference
// (a preview of at most a quarter of it, plus about 80 tokens of framing).
std::uint64_t rough_saving(std::size_t raw_bytes, std::uint64_t preview_tokens) {
  auto t = rough_tokens(raw_bytes);
  auto after = std::min<std::uint64_t>(preview_tokens, t / 4) + 80;
  return t > after ? t - after : 0;
}

}  // namespace

std::shared_ptr<const offload_engine::gist> offload_engine::gist_of(std::string_view bytes, const std::string& hash,
                                                                     std::string_view tool_name,
                                                                     const reference_config& ref) const {
  // The reference is a pure function of (bytes, tool name, configuration): a
  // cache keyed by the bytes' hash returns the same text without re-reading
  // them. It holds derived text only, never the blob's bytes.
  std::string key = hash;
  key += '\0';
  key += tool_name;
  key += '\0';
  key += ref.tool_name;
  {
    std::lock_guard lock(gist_mutex_);
    if (auto it = gists_.find(key); it != gists_.end()) return it->second;
  }
  auto g = std::make_shared<gist>();
  g->shape = shape_of(bytes, estimator_);
  g->reference = render_reference(bytes, g->shape, tool_name, hash, ref);
  std::lock_guard lock(gist_mutex_);
  if (gists_.size() >= max_cached_gists) gists_.clear();  // bounded; a miss only costs a re-render
  gists_.emplace(std::move(key), g);
  return g;
}

std::string tenant_of(std::string_view api_key) {
  if (api_key.empty()) return "anonymous";
  return sha256_hex(api_key).substr(0, 16);
}

offload_engine::offload_engine(offload_config cfg, blob_store& store, const token_estimator& estimator,
                               std::function<std::uint64_t()> now_ns)
    : cfg_(std::move(cfg)), store_(store), estimator_(estimator), now_ns_(std::move(now_ns)) {
  if (!now_ns_) now_ns_ = [] { return std::uint64_t(0); };
  if (cfg_.budget_tokens && !cfg_.floor_tokens) cfg_.floor_tokens = cfg_.budget_tokens * 6 / 10;
}

rewrite_result offload_engine::rewrite(const dialect& d, std::string_view body, std::string_view tenant) const {
  rewrite_result result;
  auto& report = result.report;
  request_scan scan;
  if (!d.scan(body, scan)) {
    report.outcome = rewrite_outcome::unparsable;
    return result;
  }
  report.outputs_seen = scan.outputs.size();

  auto declared = [&](std::string_view n) {
    return std::find(scan.declared_tools.begin(), scan.declared_tools.end(), n) != scan.declared_tools.end();
  };
  report.tool_name = declared(cfg_.tool_name) ? cfg_.fallback_tool_name : cfg_.tool_name;
  reference_config ref_cfg = cfg_.reference;
  ref_cfg.tool_name = report.tool_name;

  std::vector<candidate> cands;
  cands.reserve(scan.outputs.size());
  for (const auto& o : scan.outputs) cands.push_back({&o, {}, false, false, {}});

  // Exact bytes of an output, decoded once: JSON-unescaped text or base64-decoded image.
  auto decode = [&](candidate& c) -> bool {
    if (c.decoded) return !c.bytes.empty() || c.out->raw.empty();
    c.decoded = true;
    bool lossy = false;
    bool ok = c.out->image ? base64_decode(c.out->raw, c.bytes) : json::unescape(c.out->raw, c.bytes, &lossy);
    // Text that is not UTF-8 could not be paged back exactly inside the
    // API's JSON: it stays inline, as the client sent it.
    if (ok && !c.out->image && !text::is_valid_utf8(c.bytes)) lossy = true;
    if (!ok || lossy) {
      c.bytes.clear();
      ++report.skipped_lossy;
      return false;
    }
    return true;
  };
  auto hash_of = [](candidate& c) -> const std::string& {
    if (c.hash.empty()) c.hash = sha256_hex(c.bytes);
    return c.hash;
  };
  auto rule_of = [&](const tool_output& o) -> tool_rule {
    auto it = cfg_.tool_rules.find(o.tool_name);
    if (it != cfg_.tool_rules.end()) return it->second;
    return {tool_rule::action::threshold, cfg_.threshold_tokens};
  };

  // 1. Threshold and per-tool rules. The escaped size bounds the token
  //    estimate from above (at most one token per two bytes), so small
  //    outputs are skipped without decoding them.
  for (auto& c : cands) {
    auto rule = rule_of(*c.out);
    if (rule.what == tool_rule::action::never) continue;
    // Images cost tokens by their pixels, not their bytes: always offloaded.
    if (c.out->image) {
      c.chosen = decode(c);
      continue;
    }
    if (c.out->raw.size() < cfg_.min_offload_bytes) continue;
    if (rule.what == tool_rule::action::threshold && c.out->raw.size() <= rule.tokens * 2 && !c.out->image) continue;
    if (!decode(c)) continue;
    if (c.bytes.size() < cfg_.min_offload_bytes) continue;
    if (rule.what == tool_rule::action::always || gist_of(c.bytes, hash_of(c), c.out->tool_name, ref_cfg)->shape.tokens > rule.tokens)
      c.chosen = true;
  }

  // 2. Budget mode: outputs offloaded on an earlier turn stay offloaded (their
  //    bytes are in the store), then the oldest go until the request fits the floor.
  if (cfg_.budget_tokens) {
    std::uint64_t total = rough_tokens(body.size()), saved = 0;
    const auto preview = cfg_.reference.preview_tokens;
    for (auto& c : cands)
      if (c.chosen) saved += rough_saving(c.out->raw.size(), preview);
    for (auto& c : cands) {
      if (c.chosen || rule_of(*c.out).what == tool_rule::action::never || c.out->raw.size() < cfg_.min_offload_bytes)
        continue;
      if (decode(c) && store_.contains(tenant, hash_of(c))) {
        c.chosen = true;
        saved += rough_saving(c.out->raw.size(), preview);
      }
    }
    if (total - std::min(total, saved) > cfg_.budget_tokens) {
      for (auto& c : cands) {
        if (total - std::min(total, saved) <= cfg_.floor_tokens) break;
        if (c.chosen || rule_of(*c.out).what == tool_rule::action::never ||
            c.out->raw.size() < cfg_.min_offload_bytes || !decode(c))
          continue;
        c.chosen = true;
        saved += rough_saving(c.out->raw.size(), preview);
      }
    }
  }

  // 3. Store and build the replacements.
  std::vector<edit> edits;
  for (auto& c : cands) {
    if (!c.chosen) continue;
    if (c.bytes.size() > cfg_.max_blob_bytes) {
      ++report.skipped_too_large;
      continue;
    }
    offload_record rec;
    rec.start_ns = now_ns_();
    rec.hash = hash_of(c);
    rec.tool_name = c.out->tool_name;
    rec.call_id = c.out->call_id;
    rec.order = c.out->order;
    rec.bytes = c.bytes.size();
    std::string reference;
    if (c.out->image) {
      rec.kind = c.out->media_type.empty() ? "image" : c.out->media_type;
      rec.tokens_before = rough_tokens(c.out->raw.size());
      reference = render_image_reference(c.out->media_type, c.bytes.size(), c.out->tool_name, rec.hash, ref_cfg);
    } else {
      auto g = gist_of(c.bytes, rec.hash, c.out->tool_name, ref_cfg);
      rec.kind = std::string(kind_name(g->shape.kind));
      rec.tokens_before = g->shape.tokens;
      reference = g->reference;
    }
    auto put = store_.put(c.bytes, blob_meta{rec.hash, c.bytes.size(), rec.kind, 0, std::string(tenant), rec.tool_name});
    if (put.error != blob_error::none) {
      if (put.error == blob_error::too_large) ++report.skipped_too_large;
      else ++report.store_failures;
      continue;  // fail-open: the output stays inline
    }
    rec.deduplicated = put.deduplicated;
    rec.tokens_after = estimator_.estimate(reference, content_kind::text);
    std::string replacement;
    if (c.out->image) {
      replacement = d.image_replacement(reference);
    } else {
      replacement.reserve(reference.size() + 16);
      replacement += '"';
      json::escape_into(replacement, reference);
      replacement += '"';
    }
    edits.push_back({c.out->value, std::move(replacement)});
    rec.end_ns = now_ns_();
    report.offloads.push_back(std::move(rec));
  }

  // 4. read_blob joins the tools: always (so the tools prefix never changes
  //    mid-conversation) or only when this request holds a reference.
  bool inject = !report.offloads.empty() || (cfg_.inject == inject_mode::always && scan.tools.has_value());
  if (inject && !declared(report.tool_name)) {
    auto def = d.read_blob_tool(report.tool_name);
    if (scan.tools) {
      // Append after the client's tools: their bytes (and cache breakpoints) stay put.
      bool empty = scan.tools->size() >= 2 &&
                   body.substr(scan.tools->begin + 1, scan.tools->size() - 2).find_first_not_of(" \t\r\n") ==
                       std::string_view::npos;
      edits.push_back({{scan.tools->end - 1, scan.tools->end - 1}, (empty ? "" : ",") + def});
    } else {
      edits.push_back({{scan.object_end, scan.object_end}, ",\"tools\":[" + def + "]"});
    }
    report.tool_injected = true;
  }
  if (edits.empty()) return result;

  // 5. Splice: copy the untouched bytes around each edit.
  std::sort(edits.begin(), edits.end(), [](const edit& a, const edit& b) { return a.at.begin < b.at.begin; });
  std::size_t size = body.size();
  for (const auto& e : edits) size = size - e.at.size() + e.replacement.size();
  result.body.reserve(size);
  std::size_t pos = 0;
  for (const auto& e : edits) {
    result.body.append(body.substr(pos, e.at.begin - pos));
    result.body.append(e.replacement);
    pos = e.at.end;
  }
  result.body.append(body.substr(pos));
  report.outcome = rewrite_outcome::rewritten;
  return result;
}

}  // namespace gistproxy::rewrite
