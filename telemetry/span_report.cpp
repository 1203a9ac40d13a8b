#include "telemetry/span_report.hpp"

#include <algorithm>
#include <cstdio>
#include <tuple>
#include <unordered_map>

#include "rewrite/json/checked.hpp"  // header-only: bounded parsing of untrusted JSON
#include "telemetry/number_format.hpp"

namespace gistproxy::telemetry {
namespace {

std::uint64_t uint_attr(const nlohmann::json& a, const char* key) {
  auto it = a.find(key);
  if (it == a.end()) return 0;
  if (it->is_number_unsigned()) return it->get<std::uint64_t>();
  if (it->is_number_integer()) return std::uint64_t(std::max<std::int64_t>(0, it->get<std::int64_t>()));
  return 0;
}

std::string string_attr(const nlohmann::json& a, const char* key) {
  auto it = a.find(key);
  return it != a.end() && it->is_string() ? it->get<std::string>() : std::string();
}

// A request span's ledger entry (gistproxy.input_tokens_without, _with and
// gistproxy.saved_usd); a span without one (no usage, or a log from before
// the ledger) is counted as unmeasured.
void add_ledger(report_counts& c, const nlohmann::json& a) {
  if (a.find("gistproxy.input_tokens_without") == a.end()) {
    ++c.unmeasured;
    return;
  }
  c.input_without += uint_attr(a, "gistproxy.input_tokens_without");
  c.input_with += uint_attr(a, "gistproxy.input_tokens_with");
  if (auto usd = a.find("gistproxy.saved_usd"); usd != a.end() && usd->is_number()) c.usd_saved += usd->get<double>();
}

// The tool whose output a page-in read: gistproxy.tool; span logs from before
// page-ins were execute_tool spans named it gen_ai.tool.name (now read_blob).
std::string page_in_tool(const nlohmann::json& a) {
  if (auto tool = string_attr(a, "gistproxy.tool"); !tool.empty()) return tool;
  return string_attr(a, "gen_ai.operation.name") == "execute_tool" ? std::string() : string_attr(a, "gen_ai.tool.name");
}

std::string short_handle(const std::string& h) { return h.substr(0, 16); }

// A request span's tenant as gistproxy writes it (16 hex digits, or
// "anonymous"); anything else in a span log is not ours to repeat at length.
std::string tenant_of(const nlohmann::json& a) {
  auto tenant = string_attr(a, "gistproxy.tenant");
  if (tenant.empty()) return "(unknown)";
  return tenant.size() <= 64 ? tenant : "(invalid)";
}

}  // namespace

void report_counts::add(const report_counts& o) {
  requests += o.requests;
  offloads += o.offloads;
  tokens_before += o.tokens_before;
  tokens_after += o.tokens_after;
  page_ins += o.page_ins;
  page_in_errors += o.page_in_errors;
  churn += o.churn;
  integrity_failures += o.integrity_failures;
  input_without += o.input_without;
  input_with += o.input_with;
  usd_saved += o.usd_saved;
  unmeasured += o.unmeasured;
}

void span_report_builder::add_line(std::string_view line, const std::string& where) {
  if (line.find_first_not_of(" \t\r") == std::string_view::npos) return;
  auto j = gistproxy::rewrite::checked::parse(line);
  if (j.is_discarded() || !j.is_object()) {
    problems_.push_back(where + ": not a JSON object");
    return;
  }
  auto str = [&](const char* k) { return j.contains(k) && j[k].is_string() ? j[k].get<std::string>() : std::string(); };
  span_row row{str("traceId"), str("spanId"), str("parentSpanId"), str("name"), 0, j.value("attributes", nlohmann::json::object())};
  if (row.trace.empty() || row.name.empty()) {
    problems_.push_back(where + ": not a gistproxy span (no traceId or name)");
    return;
  }
  if (auto it = j.find("startTimeUnixNano"); it != j.end() && it->is_number_unsigned()) row.start_ns = it->get<std::uint64_t>();
  if (!row.attributes.is_object()) row.attributes = nlohmann::json::object();
  // A conversation is what gistproxy named one (a client's traceparent may
  // start a trace per turn); span logs from before it said so: the trace.
  if (auto c = row.attributes.find("gen_ai.conversation.id");
      c != row.attributes.end() && c->is_string() && c->get<std::string>().size() == 32)
    row.trace = c->get<std::string>();
  // Only the spans the report reads are kept (a span log holds upstream spans too).
  if (row.name == "gistproxy.request" || row.name == "compaction" || row.name == "page_in") rows_.push_back(std::move(row));
}

span_report span_report_builder::build() const {
  span_report r;
  r.spans = rows_.size();
  r.problems = problems_;

  struct trace_rows {
    std::vector<const span_row*> requests, compactions, page_ins;
  };
  std::unordered_map<std::string, trace_rows> traces;
  for (const auto& row : rows_) {
    auto& t = traces[row.trace];
    (row.name == "gistproxy.request" ? t.requests : row.name == "compaction" ? t.compactions : t.page_ins).push_back(&row);
  }

  for (auto& entry : traces) {
    // Plain references, not a structured binding: lambdas below capture them.
    const auto& trace = entry.first;
    auto& t = entry.second;
    conversation_report c;
    c.trace_id = trace;
    std::sort(t.requests.begin(), t.requests.end(), [](auto* a, auto* b) { return a->start_ns < b->start_ns; });
    std::unordered_map<std::string, std::uint64_t> turn_of;  // request span id → 1-based turn
    for (std::size_t i = 0; i < t.requests.size(); ++i) turn_of[t.requests[i]->id] = i + 1;
    auto turn = [&](const span_row* s) {
      auto it = turn_of.find(s->parent);
      return it == turn_of.end() ? std::uint64_t(0) : it->second;
    };
    c.first_start_ns = t.requests.empty() ? UINT64_MAX : t.requests.front()->start_ns;
    c.counts.requests = t.requests.size();
    for (const auto* request : t.requests) {
      add_ledger(c.counts, request->attributes);
      report_counts one;
      one.requests = 1;
      add_ledger(one, request->attributes);
      r.by_tenant[tenant_of(request->attributes)].add(one);
    }

    // Fed to the join in turn order, as the live view feeds it: offloads of a
    // turn before its page-ins; unknown turns (0): offloads first, page-ins last.
    auto by_turn = [&](bool unknown_last) {
      return [&, unknown_last](const span_row* a, const span_row* b) {
        auto key = [&](const span_row* s) {
          auto n = turn(s);
          return n == 0 ? (unknown_last ? UINT64_MAX : 0) : n;
        };
        return key(a) < key(b);
      };
    };
    std::stable_sort(t.compactions.begin(), t.compactions.end(), by_turn(false));
    std::vector<std::pair<std::size_t, const span_row*>> page_ins;  // (log order, span)
    for (std::size_t i = 0; i < t.page_ins.size(); ++i) page_ins.emplace_back(i, t.page_ins[i]);
    std::stable_sort(page_ins.begin(), page_ins.end(),
                     [cmp = by_turn(true)](const auto& a, const auto& b) { return cmp(a.second, b.second); });
    conversation_join join(options_.churn_turns);
    std::size_t next = 0;
    auto offloads_up_to = [&](std::uint64_t limit) {
      for (; next < t.compactions.size() && turn(t.compactions[next]) <= limit; ++next) {
        const auto* s = t.compactions[next];
        auto tool = string_attr(s->attributes, "gen_ai.tool.name");
        report_counts one;
        one.offloads = 1;
        one.tokens_before = uint_attr(s->attributes, "gistproxy.tokens_before");
        one.tokens_after = uint_attr(s->attributes, "gistproxy.tokens_after");
        c.counts.add(one);
        r.by_tool[tool.empty() ? "(unknown)" : tool].add(one);
        join.offload(string_attr(s->attributes, "gistproxy.handle"), tool, turn(s));
      }
    };
    std::vector<std::pair<std::size_t, integrity_failure>> failures;
    for (const auto& [order, s] : page_ins) {
      const auto t1 = turn(s);
      offloads_up_to(t1 ? t1 : UINT64_MAX);
      auto handle = string_attr(s->attributes, "gistproxy.handle");
      auto joined = join.page_in(handle, page_in_tool(s->attributes), t1);
      report_counts one;
      one.page_ins = 1;
      if (string_attr(s->attributes, "gistproxy.result") != "ok") one.page_in_errors = 1;
      auto integrity = s->attributes.find("gistproxy.integrity_ok");
      if (integrity != s->attributes.end() && *integrity == false) {
        one.integrity_failures = 1;
        failures.push_back({order, {handle, joined.tool, t1, s->id}});
      }
      if (joined.churn) {
        one.churn = 1;
        c.churn.push_back(std::move(*joined.churn));
      }
      c.counts.add(one);
      r.by_tool[joined.tool.empty() ? "(unknown)" : joined.tool].add(one);
    }
    offloads_up_to(UINT64_MAX);
    std::sort(failures.begin(), failures.end(), [](const auto& a, const auto& b) { return a.first < b.first; });
    for (auto& f : failures) c.failures.push_back(std::move(f.second));
    r.total.add(c.counts);
    r.conversations.push_back(std::move(c));
  }
  std::sort(r.conversations.begin(), r.conversations.end(), [](const auto& a, const auto& b) {
    return a.first_start_ns != b.first_start_ns ? a.first_start_ns < b.first_start_ns : a.trace_id < b.trace_id;
  });
  for (auto& c : r.conversations)
    std::sort(c.churn.begin(), c.churn.end(), [](const auto& a, const auto& b) {
      return std::tie(a.page_in_turn, a.handle) < std::tie(b.page_in_turn, b.handle);
    });
  return r;
}

namespace {

// What the provider billed: the same "saved" as every meter.
std::string ledger_text(const report_counts& c) {
  if (!c.input_without) return {};
  char text[160];
  std::snprintf(text, sizeof text, "; billed input tokens %s without, %s with (%.1f%% saved), $%.4f saved",
                thousands(c.input_without).c_str(), thousands(c.input_with).c_str(),
                100.0 * (1.0 - double(c.input_with) / double(c.input_without)), c.usd_saved);
  return text;
}

std::string counts_line(const report_counts& c) {
  char ratio[32] = "-";
  if (c.tokens_before) std::snprintf(ratio, sizeof ratio, "%.1f%%", 100.0 * double(c.tokens_saved()) / double(c.tokens_before));
  return "offloads " + thousands(c.offloads) + ", tokens saved " + thousands(c.tokens_saved()) + " (" + ratio +
         " of offloaded), page-ins " + thousands(c.page_ins) + ", churn " + thousands(c.churn) +
         ", integrity failures " + thousands(c.integrity_failures) + ledger_text(c);
}

std::string turn_text(std::uint64_t t) { return t ? std::to_string(t) : std::string("?"); }

}  // namespace

std::string format_report_text(const span_report& r) {
  std::string out;
  for (const auto& c : r.conversations) {
    out += "conversation " + c.trace_id + " (" + thousands(c.counts.requests) + " requests)\n";
    out += "  " + counts_line(c.counts) + "\n";
    for (const auto& p : c.churn)
      out += "  churn: " + short_handle(p.handle) + " " + (p.tool.empty() ? "?" : p.tool) + ": offloaded turn " +
             std::to_string(p.offload_turn) + ", paged in turn " + std::to_string(p.page_in_turn) + " (" +
             std::to_string(p.turns_between()) + " turns later)\n";
    for (const auto& f : c.failures)
      out += "  INTEGRITY FAILURE: " + f.handle + " " + (f.tool.empty() ? "?" : f.tool) + ", turn " + turn_text(f.turn) +
             ", span " + f.span_id + "\n";
  }
  if (!r.by_tool.empty()) {
    out += "by tool:\n";
    for (const auto& [tool, c] : r.by_tool) out += "  " + tool + ": " + counts_line(c) + "\n";
  }
  if (r.by_tenant.size() > 1 || (r.by_tenant.size() == 1 && r.by_tenant.begin()->first != "(unknown)")) {
    out += "by tenant:\n";
    for (const auto& [tenant, c] : r.by_tenant)
      out += "  " + tenant + ": " + thousands(c.requests) + " requests" + ledger_text(c) + "\n";
  }
  out += "total: " + thousands(r.conversations.size()) + " conversations, " + thousands(r.total.requests) +
         " requests, " + counts_line(r.total) + "\n";
  if (r.total.offloads) {
    char ratio[64];
    std::snprintf(ratio, sizeof ratio, "churn ratio %.1f%% of offloads\n", 100.0 * double(r.total.churn) / double(r.total.offloads));
    out += ratio;
  }
  for (const auto& p : r.problems) out += "skipped " + p + "\n";
  return out;
}

namespace {

nlohmann::json counts_json(const report_counts& c) {
  return {{"requests", c.requests},     {"offloads", c.offloads},           {"tokens_before", c.tokens_before},
          {"tokens_after", c.tokens_after}, {"tokens_saved", c.tokens_saved()}, {"page_ins", c.page_ins},
          {"page_in_errors", c.page_in_errors}, {"churn", c.churn},           {"integrity_failures", c.integrity_failures},
          {"input_tokens_without", c.input_without}, {"input_tokens_with", c.input_with},
          {"usd_saved", c.usd_saved},           {"unmeasured_requests", c.unmeasured}};
}

}  // namespace

nlohmann::json report_to_json(const span_report& r) {
  nlohmann::json conversations = nlohmann::json::array();
  for (const auto& c : r.conversations) {
    auto j = counts_json(c.counts);
    j["trace_id"] = c.trace_id;
    j["churn_pairs"] = nlohmann::json::array();
    for (const auto& p : c.churn)
      j["churn_pairs"].push_back({{"handle", p.handle}, {"tool", p.tool}, {"offload_turn", p.offload_turn},
                                  {"page_in_turn", p.page_in_turn}, {"turns_between", p.turns_between()}});
    j["integrity_failure_details"] = nlohmann::json::array();
    for (const auto& f : c.failures)
      j["integrity_failure_details"].push_back({{"handle", f.handle}, {"tool", f.tool}, {"turn", f.turn}, {"span_id", f.span_id}});
    conversations.push_back(std::move(j));
  }
  nlohmann::json by_tool = nlohmann::json::object();
  for (const auto& [tool, c] : r.by_tool) by_tool[tool] = counts_json(c);
  nlohmann::json by_tenant = nlohmann::json::object();
  for (const auto& [tenant, c] : r.by_tenant)  // the ledger only: offloads are the conversations'
    by_tenant[tenant] = {{"requests", c.requests}, {"input_tokens_without", c.input_without},
                         {"input_tokens_with", c.input_with}, {"usd_saved", c.usd_saved},
                         {"unmeasured_requests", c.unmeasured}};
  auto total = counts_json(r.total);
  total["conversations"] = r.conversations.size();
  total["churn_ratio"] = r.total.offloads ? double(r.total.churn) / double(r.total.offloads) : 0.0;
  return {{"spans", r.spans}, {"conversations", conversations}, {"by_tool", by_tool}, {"by_tenant", by_tenant}, {"total", total},
          {"skipped", r.problems}};
}

}  // namespace gistproxy::telemetry
