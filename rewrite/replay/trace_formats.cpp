// The format table behind read_trace(): each format's marks (detection), the
// shape its reader needs (what --format still checks) and the reader. Order
// is detection order: specific formats first, the generic message list and
// request bodies last, since most formats also hold messages or bodies.
#include "rewrite/replay/trace_formats.hpp"

#include <stdexcept>

#include "rewrite/json/checked.hpp"
#include "rewrite/replay/trace_readers.hpp"

namespace gistproxy::rewrite {

std::string recorded_request::body() const {
  if (!rebuilt_items || !frame) return recorded_body;
  const auto count = std::min(rebuilt_count, rebuilt_items->size());
  std::size_t size = frame->opening.size() + frame->closing.size() + 2 + count;
  for (std::size_t i = 0; i < count; ++i) size += (*rebuilt_items)[i].size();
  std::string out;
  out.reserve(size);
  out += frame->opening;
  out += '[';
  for (std::size_t i = 0; i < count; ++i) {
    if (i) out += ',';
    out += (*rebuilt_items)[i];
  }
  out += ']';
  out += frame->closing;
  return out;
}


namespace {

using namespace trace_readers;

// One file, parsed the ways the formats need.
struct trace_input {
  std::string_view text;
  bool json_like = false;      // starts with { or [: JSON or JSONL
  const ojson* document = nullptr;  // the whole file as one JSON value, when it is one
  std::vector<ojson> items;    // the document's elements, the document when an object, or the JSONL objects

  const ojson& front() const { return items.front(); }
  bool is_array_document() const { return document && document->is_array() && !document->empty(); }
  bool is_object_document() const { return document && document->is_object(); }
};

bool has_items(const trace_input& in) { return !in.items.empty(); }
bool front_has(const trace_input& in, const char* key) { return has_items(in) && in.front().is_object() && in.front().contains(key); }

// --- the small readers: formats whose reading is a few lines ------------------

std::string swe_agent_model(const ojson& j) {
  if (!is_obj(j, "replay_config") && !is_str(j, "replay_config")) return "unknown";
  auto cfg = j["replay_config"].is_string() ? checked::parse<ojson>(j["replay_config"].get<std::string>()) : j["replay_config"];
  if (cfg.is_object() && is_obj(cfg, "agent") && is_obj(cfg["agent"], "model") && is_str(cfg["agent"]["model"], "name"))
    return cfg["agent"]["model"]["name"];
  return "unknown";
}

// mini-swe-agent's .traj.json: {"info": {...}, "messages": [...], "trajectory_format":
// "mini-swe-agent-1[.1]"}. Its top-level messages array made it look like one
// request body; the format marker (or, in files older than the marker, the
// run info beside the messages) says it is a whole run.
bool is_mini_swe_agent(const ojson& j) {
  if (!is_arr(j, "messages") || j.contains("model")) return false;
  if (is_str(j, "trajectory_format")) return j["trajectory_format"].get<std::string>().rfind("mini-swe-agent", 0) == 0;
  return is_obj(j, "info") && (j["info"].contains("model_stats") || j["info"].contains("mini_version"));
}

std::string mini_swe_agent_model(const ojson& j) {
  if (is_obj(j, "info") && is_obj(j["info"], "config") && is_obj(j["info"]["config"], "model") &&
      is_str(j["info"]["config"]["model"], "model_name"))
    return j["info"]["config"]["model"]["model_name"];
  return "unknown";
}

// tau-bench results: a list of runs {task_id, reward, info, traj: [chat
// messages], trial}. Each run is its own conversation; the model is not in
// the file (it is in the file's name), so its turns are unpriced.
bool is_tau_bench_run(const ojson& j) { return is_arr(j, "traj") && (j.contains("task_id") || j.contains("reward")); }

void read_tau_bench(const std::vector<ojson>& runs, recorded_trace& t) {
  t.format = "tau-bench";
  for (std::size_t i = 0; i < runs.size(); ++i) {
    if (!is_arr(runs[i], "traj")) {
      t.notes.push_back("entry " + std::to_string(i) + " is not a tau-bench run (no traj): skipped");
      continue;
    }
    rebuild_chat(runs[i]["traj"], "unknown", ojson(), t);
  }
}

// vcrpy also writes JSON cassettes (serializer="json").
void read_vcr_json(const ojson& j, recorded_trace& t) {
  t.format = "vcr";
  for (const auto& it : j["interactions"]) {
    if (!is_obj(it, "request")) continue;
    auto api = endpoint_for_path(path_of_url(it["request"].value("uri", "")));
    if (api && is_str(it["request"], "body")) add_body_text(t, it["request"]["body"], api);
  }
}

// --- the table ------------------------------------------------------------------

struct format_entry {
  trace_format_info info;
  bool (*detect)(const trace_input&);    // the format's own marks
  bool (*can_read)(const trace_input&);  // the shape its reader needs (checked when forced)
  void (*read)(const trace_input&, recorded_trace&);
};

const std::vector<format_entry>& table() {
  static const std::vector<format_entry> formats = {
      {{"gistproxy-recording", "JSONL lines with \"gistproxy_record\""},
       [](const trace_input& in) { return front_has(in, "gistproxy_record"); }, has_items,
       [](const trace_input& in, recorded_trace& t) { read_recording(in.items, t); }},
      {{"claude-trace", "entries with a \"request\" object (url, body)"},
       [](const trace_input& in) { return has_items(in) && is_obj(in.front(), "request"); }, has_items,
       [](const trace_input& in, recorded_trace& t) { read_claude_trace(in.items, t); }},
      {{"codex", "JSONL of {type: session_meta|response_item|turn_context|event_msg, payload}, or {id, timestamp} then Responses items"},
       [](const trace_input& in) { return has_items(in) && (is_codex_envelope(in.front()) || is_codex_direct(in.items)); },
       has_items, [](const trace_input& in, recorded_trace& t) { read_codex_rollout(in.items, t); }},
      {{"pi", "JSONL opening {type: session, id} (a pi session), or a document whose \"messages\" are pi's (toolResult, toolCall)"},
       [](const trace_input& in) {
         return has_items(in) && (is_pi_session(in.items) || (in.is_object_document() && is_pi_document(*in.document)));
       },
       [](const trace_input& in) {
         return has_items(in) && (is_pi_session(in.items) || (in.is_object_document() && is_arr(*in.document, "messages")));
       },
       [](const trace_input& in, recorded_trace& t) {
         is_pi_session(in.items) ? read_pi_session(in.items, t) : read_pi_document(*in.document, t);
       }},
      {{"openhands-output", "JSONL lines with \"instance_id\" and a \"history\" list"},
       [](const trace_input& in) { return front_has(in, "instance_id") && is_arr(in.front(), "history"); }, has_items,
       [](const trace_input& in, recorded_trace& t) { read_openhands_output(in.items, t); }},
      {{"claude-code", "JSONL lines {type, message, sessionId|uuid}"},
       [](const trace_input& in) {
         for (const auto& l : in.items)  // transcripts may open with summary/metadata lines
           if (is_str(l, "type") && is_obj(l, "message") && (l.contains("sessionId") || l.contains("uuid"))) return true;
         return false;
       },
       has_items, [](const trace_input& in, recorded_trace& t) { read_claude_code(in.items, t); }},
      {{"har", "a JSON document with log.entries"},
       [](const trace_input& in) { return in.is_object_document() && is_obj(*in.document, "log") && is_arr((*in.document)["log"], "entries"); },
       nullptr, [](const trace_input& in, recorded_trace& t) { read_har(*in.document, t); }},
      {{"inspect", "a JSON document with \"samples\" and \"eval\""},
       [](const trace_input& in) { return in.is_object_document() && is_arr(*in.document, "samples") && in.document->contains("eval"); },
       [](const trace_input& in) { return in.is_object_document() && is_arr(*in.document, "samples"); },
       [](const trace_input& in, recorded_trace& t) { read_inspect(*in.document, t); }},
      {{"swe-agent", "a JSON document with a \"history\" list"},
       [](const trace_input& in) { return in.is_object_document() && is_arr(*in.document, "history"); }, nullptr,
       [](const trace_input& in, recorded_trace& t) {
         t.format = "swe-agent";
         rebuild_chat((*in.document)["history"], swe_agent_model(*in.document), ojson(), t);
       }},
      {{"gemini-cli", "a JSON list of {role, parts}, or {sessionId|projectHash, messages}"},
       [](const trace_input& in) {
         return (in.is_object_document() && is_gemini_cli_session(*in.document)) || (in.is_array_document() && is_gemini_contents(*in.document));
       },
       [](const trace_input& in) { return in.is_array_document() || (in.is_object_document() && is_arr(*in.document, "messages")); },
       [](const trace_input& in, recorded_trace& t) { read_gemini_cli(*in.document, t); }},
      {{"mini-swe-agent", "a JSON document with \"messages\" and trajectory_format mini-swe-agent* (or info.model_stats)"},
       [](const trace_input& in) { return in.is_object_document() && is_mini_swe_agent(*in.document); },
       [](const trace_input& in) { return in.is_object_document() && is_arr(*in.document, "messages"); },
       [](const trace_input& in, recorded_trace& t) {
         t.format = "mini-swe-agent";
         rebuild_chat((*in.document)["messages"], mini_swe_agent_model(*in.document), ojson(), t);
       }},
      {{"openhands", "calls with \"messages\" and \"kwargs\" (or response and timestamp)"},
       [](const trace_input& in) {
         return has_items(in) && is_arr(in.front(), "messages") &&
                (in.front().contains("kwargs") || (in.front().contains("response") && in.front().contains("timestamp")));
       },
       [](const trace_input& in) { return has_items(in) && is_arr(in.front(), "messages"); },
       [](const trace_input& in, recorded_trace& t) { read_openhands(in.items, t); }},
      {{"vcr", "a YAML (or JSON) cassette with \"interactions\""},
       [](const trace_input& in) {
         if (in.json_like) return in.is_object_document() && is_arr(*in.document, "interactions");
         return in.text.find("interactions:") != std::string_view::npos;
       },
       [](const trace_input& in) { return !in.json_like || (in.is_object_document() && is_arr(*in.document, "interactions")); },
       [](const trace_input& in, recorded_trace& t) { in.json_like ? read_vcr_json(*in.document, t) : read_vcr(in.text, t); }},
      {{"tau-bench", "a list of runs with \"traj\" and task_id/reward"},
       [](const trace_input& in) { return has_items(in) && is_tau_bench_run(in.front()); },
       [](const trace_input& in) { return has_items(in) && is_arr(in.front(), "traj"); },
       [](const trace_input& in, recorded_trace& t) { read_tau_bench(in.items, t); }},
      {{"cline", "a JSON list of messages whose first user text opens with <task> or <feedback>"},
       [](const trace_input& in) { return in.is_array_document() && is_cline_history(*in.document); },
       [](const trace_input& in) { return in.is_array_document(); },
       [](const trace_input& in, recorded_trace& t) { read_cline_history(*in.document, t); }},
      {{"messages", "a JSON list or JSONL of messages with \"role\""},
       [](const trace_input& in) { return front_has(in, "role"); }, has_items,
       [](const trace_input& in, recorded_trace& t) {
         t.format = "messages";
         rebuild_chat(ojson(in.items), "unknown", ojson(), t);
       }},
      {{"request-bodies", "request bodies with \"messages\", \"input\" or \"contents\""},
       [](const trace_input& in) { return has_items(in) && looks_like_request_body(in.front()); }, has_items,
       [](const trace_input& in, recorded_trace& t) {
         t.format = "request-bodies";
         for (const auto& b : in.items) add_body(t, b, nullptr);
       }},
  };
  return formats;
}

// --- parsing the file ------------------------------------------------------------

// The document, or, when the whole does not parse, its JSONL lines: a line
// that does not parse (a truncated write, a lone surrogate escape) is skipped
// and named; one bad line must not lose the trace.
void parse_json(std::string_view text, ojson& document, trace_input& in, std::vector<std::string>& skipped) {
  document = checked::parse<ojson>(text);
  if (!document.is_discarded()) {
    in.document = &document;
    if (document.is_array()) in.items.assign(document.begin(), document.end());
    else if (document.is_object()) in.items.push_back(document);
    return;
  }
  std::size_t pos = 0, n = 0;
  while (pos < text.size()) {
    auto end = text.find('\n', pos);
    if (end == std::string_view::npos) end = text.size();
    auto line = text.substr(pos, end - pos);
    pos = end + 1;
    ++n;
    if (line.find_first_not_of(" \t\r") == std::string_view::npos) continue;
    auto j = checked::parse<ojson>(line);
    if (j.is_discarded() || !j.is_object()) skipped.push_back("line " + std::to_string(n) + " is not a JSON object: skipped");
    else in.items.push_back(std::move(j));
  }
  if (in.items.empty()) throw std::runtime_error("not JSON, and no line of it is a JSON object (not JSONL)");
}

// The file, parsed the ways the formats need; `document` and `skipped` are
// the caller's, so that `in` can point into them.
trace_input prepare(std::string_view text, ojson& document, std::vector<std::string>& skipped) {
  auto start = text.find_first_not_of(" \t\r\n\xEF\xBB\xBF");
  if (start == std::string_view::npos) throw std::runtime_error("empty file");
  text.remove_prefix(start);
  trace_input in;
  in.text = text;
  in.json_like = text.front() == '{' || text.front() == '[';
  if (in.json_like) parse_json(text, document, in, skipped);
  return in;
}

std::string what_was_looked_for() {
  std::string s;
  for (const auto& f : table()) s += "\n  " + std::string(f.info.name) + ": " + std::string(f.info.looks_for);
  return s;
}

const format_entry& entry_named(std::string_view name) {
  for (const auto& f : table())
    if (f.info.name == name) return f;
  std::string names;
  for (const auto& f : table()) names += std::string(names.empty() ? "" : ", ") + std::string(f.info.name);
  throw std::runtime_error("unknown trace format \"" + std::string(name) + "\" (formats: " + names + ")");
}

recorded_trace read_with(const format_entry& f, const trace_input& in) {
  recorded_trace t;
  f.read(in, t);
  t.format = std::string(f.info.name);
  return t;
}

}  // namespace

const std::vector<trace_format_info>& trace_formats() {
  static const std::vector<trace_format_info> infos = [] {
    std::vector<trace_format_info> v;
    for (const auto& f : table()) v.push_back(f.info);
    return v;
  }();
  return infos;
}

std::vector<std::string> formats_claiming(std::string_view text) {
  ojson document;
  std::vector<std::string> skipped;
  auto in = prepare(text, document, skipped);
  std::vector<std::string> names;
  for (const auto& f : table())
    if (f.detect(in)) names.emplace_back(f.info.name);
  return names;
}

recorded_trace read_trace(std::string_view text, std::string_view format) {
  const format_entry* forced = format.empty() ? nullptr : &entry_named(format);
  ojson document;
  std::vector<std::string> skipped;
  auto in = prepare(text, document, skipped);

  const format_entry* chosen = nullptr;
  if (forced) {
    if (!(forced->can_read ? forced->can_read : forced->detect)(in))
      throw std::runtime_error("not a " + std::string(forced->info.name) + " trace: expected " + std::string(forced->info.looks_for));
    chosen = forced;
  } else {
    for (const auto& f : table())
      if (f.detect(in)) {
        chosen = &f;
        break;
      }
  }
  if (!chosen)
    throw std::runtime_error(std::string(in.json_like ? (in.document ? "unrecognised JSON trace" : "unrecognised JSONL trace")
                                                      : "unrecognised trace format (not JSON, JSONL or a YAML cassette)") +
                             "; --format NAME forces a reader; looked for:" + what_was_looked_for());
  auto t = read_with(*chosen, in);
  t.notes.insert(t.notes.begin(), skipped.begin(), skipped.end());
  return t;
}

}  // namespace gistproxy::rewrite
