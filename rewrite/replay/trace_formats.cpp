#include "rewrite/replay/trace_formats.hpp"

#include <stdexcept>

#include "rewrite/json/checked.hpp"
#include "rewrite/replay/trace_readers.hpp"

namespace gistproxy::rewrite {

namespace trace_readers {

std::string dump(const ojson& j) { return j.dump(-1, ' ', false, ojson::error_handler_t::replace); }

bool is_obj(const ojson& j, const char* key) { return j.is_object() && j.contains(key) && j[key].is_object(); }
bool is_arr(const ojson& j, const char* key) { return j.is_object() && j.contains(key) && j[key].is_array(); }
bool is_str(const ojson& j, const char* key) { return j.is_object() && j.contains(key) && j[key].is_string(); }

// A dialect whose conversation member no other dialect shares, when the body has it.
const dialect* dialect_of_unique_member(const ojson& body) {
  for (const auto* d : all_dialects()) {
    const std::string member(d->conversation_member());
    if (!body.contains(member)) continue;
    bool shared = false;
    for (const auto* other : all_dialects()) shared |= other != d && other->conversation_member() == member;
    if (!shared) return d;
  }
  return nullptr;
}

const dialect* guess_api(const ojson& body) {
  if (body.contains("input") && !body.contains("messages")) return dialect_named("responses");
  if (!body.contains("messages"))
    if (const auto* d = dialect_of_unique_member(body)) return d;
  if (body.contains("system") || body.contains("anthropic_version") || body.contains("stop_sequences"))
    return dialect_named("messages");
  for (const auto& m : body.value("messages", ojson::array())) {
    if (!m.is_object()) continue;
    if (m.value("role", "") == "system" || m.value("role", "") == "tool" || m.contains("tool_calls")) return dialect_named("chat");
    if (m.contains("content") && m["content"].is_array())
      for (const auto& b : m["content"])
        if (b.is_object() && (b.value("type", "") == "tool_use" || b.value("type", "") == "tool_result"))
          return dialect_named("messages");
  }
  return dialect_named("chat");
}

bool looks_like_request_body(const ojson& j) {
  if (!j.is_object() || j.contains("role")) return false;
  if (is_arr(j, "messages") || j.contains("input")) return true;
  for (const auto* d : all_dialects())
    if (is_arr(j, std::string(d->conversation_member()).c_str())) return true;
  return false;
}

void add_body(recorded_trace& t, const ojson& body, const dialect* api) {
  if (!body.is_object()) return t.notes.push_back("an entry's body is not a JSON object");
  t.requests.push_back({api ? api : guess_api(body), dump(body), {}});
}

void add_body_text(recorded_trace& t, const std::string& text, const dialect* api) {
  auto j = checked::parse<ojson>(text);
  if (j.is_discarded() || !j.is_object()) return t.notes.push_back("an LLM request body is not JSON: skipped");
  t.requests.push_back({api ? api : guess_api(j), text, {}});
}

std::string path_of_url(const std::string& url) {
  auto scheme = url.find("://");
  auto start = url.find('/', scheme == std::string::npos ? 0 : scheme + 3);
  return start == std::string::npos ? "/" : url.substr(start);
}

}  // namespace trace_readers

namespace {

using namespace trace_readers;

recorded_trace from_lines(const std::vector<ojson>& lines);

// mini-swe-agent's .traj.json: {"info": {...}, "messages": [...], "trajectory_format":
// "mini-swe-agent-1[.1]"}. Its top-level messages array made it look like one
// request body; the format marker (or, in files older than the marker, the
// run info beside the messages) says it is a whole run.
bool is_mini_swe_agent(const ojson& j) {
  if (!is_arr(j, "messages") || j.contains("model")) return false;
  if (is_str(j, "trajectory_format")) return j["trajectory_format"].get<std::string>().rfind("mini-swe-agent", 0) == 0;
  return is_obj(j, "info") && (j["info"].contains("model_stats") || j["info"].contains("mini_version"));
}

// tau-bench results: a list of runs {task_id, reward, info, traj: [chat
// messages], trial}. Each run is its own conversation; the model is not in
// the file (it is in the file's name), so its turns are unpriced.
bool is_tau_bench_run(const ojson& j) { return is_arr(j, "traj") && (j.contains("task_id") || j.contains("reward")); }

void read_tau_bench(const std::vector<ojson>& runs, recorded_trace& t) {
  t.format = "tau-bench";
  for (std::size_t i = 0; i < runs.size(); ++i) {
    if (!is_tau_bench_run(runs[i])) {
      t.notes.push_back("entry " + std::to_string(i) + " is not a tau-bench run (no traj): skipped");
      continue;
    }
    rebuild_chat(runs[i]["traj"], "unknown", ojson(), t);
  }
}

std::string mini_swe_agent_model(const ojson& j) {
  if (is_obj(j, "info") && is_obj(j["info"], "config") && is_obj(j["info"]["config"], "model") &&
      is_str(j["info"]["config"]["model"], "model_name"))
    return j["info"]["config"]["model"]["model_name"];
  return "unknown";
}

recorded_trace from_document(const ojson& j) {
  // A JSONL file of one line is also one JSON document.
  if (j.is_object() && (j.contains("gistproxy_record") || is_obj(j, "request") || (is_str(j, "type") && is_obj(j, "message")) ||
                        is_codex_envelope(j) || (j.contains("instance_id") && is_arr(j, "history"))))
    return from_lines({j});
  recorded_trace t;
  if (is_obj(j, "log") && is_arr(j["log"], "entries")) return read_har(j, t), t;
  if (is_arr(j, "samples") && j.contains("eval")) return read_inspect(j, t), t;
  if (is_arr(j, "history")) {
    t.format = "swe-agent";
    std::string model = "unknown";
    if (is_obj(j, "replay_config")) {
      auto cfg = j["replay_config"].is_string() ? checked::parse<ojson>(j["replay_config"].get<std::string>())
                                                : j["replay_config"];
      if (cfg.is_object() && is_obj(cfg, "agent") && is_obj(cfg["agent"], "model") && is_str(cfg["agent"]["model"], "name"))
        model = cfg["agent"]["model"]["name"];
    }
    rebuild_chat(j["history"], model, ojson(), t);
    return t;
  }
  if (is_gemini_cli_session(j)) return read_gemini_cli(j, t), t;
  if (is_mini_swe_agent(j)) {
    t.format = "mini-swe-agent";
    rebuild_chat(j["messages"], mini_swe_agent_model(j), ojson(), t);
    return t;
  }
  if (is_arr(j, "messages") && (j.contains("kwargs") || (j.contains("response") && j.contains("timestamp"))))
    return read_openhands({j}, t), t;
  if (is_arr(j, "interactions")) {
    t.format = "vcr";
    for (const auto& it : j["interactions"]) {
      if (!is_obj(it, "request")) continue;
      auto api = dialect_for_path(path_of_url(it["request"].value("uri", "")));
      if (api && is_str(it["request"], "body")) add_body_text(t, it["request"]["body"], api);
    }
    return t;
  }
  if (looks_like_request_body(j)) {
    t.format = "request-bodies";
    add_body(t, j, nullptr);
    return t;
  }
  if (j.is_array() && !j.empty()) {
    std::vector<ojson> items(j.begin(), j.end());
    if (is_tau_bench_run(items.front())) return read_tau_bench(items, t), t;
    if (is_cline_history(j)) return read_cline_history(j, t), t;
    if (is_gemini_contents(j)) return read_gemini_cli(j, t), t;
    if (items.front().is_object() && items.front().contains("role")) {
      t.format = "messages";
      rebuild_chat(j, "unknown", ojson(), t);
      return t;
    }
    if (looks_like_request_body(items.front())) {
      t.format = "request-bodies";
      for (const auto& b : items) add_body(t, b, nullptr);
      return t;
    }
    if (is_obj(items.front(), "request")) return read_claude_trace(items, t), t;
  }
  throw std::runtime_error("unrecognised JSON trace (expected HAR, an Inspect log, a SWE-agent .traj, a "
                           "mini-swe-agent .traj.json, tau-bench results, an OpenHands completion, a vcr cassette, "
                           "request bodies or a message list)");
}

recorded_trace from_lines(const std::vector<ojson>& lines) {
  recorded_trace t;
  const auto& first = lines.front();
  if (first.contains("gistproxy_record")) return read_recording(lines, t), t;
  if (is_obj(first, "request")) return read_claude_trace(lines, t), t;
  if (is_codex_envelope(first) || is_codex_direct(lines)) return read_codex_rollout(lines, t), t;
  if (first.contains("instance_id") && is_arr(first, "history")) return read_openhands_output(lines, t), t;
  for (const auto& l : lines)  // transcripts may open with summary/metadata lines
    if (is_str(l, "type") && is_obj(l, "message") && (l.contains("sessionId") || l.contains("uuid")))
      return read_claude_code(lines, t), t;
  if (is_arr(first, "messages") && first.contains("kwargs")) return read_openhands(lines, t), t;
  if (first.contains("role")) {
    t.format = "messages";
    rebuild_chat(ojson(lines), "unknown", ojson(), t);
    return t;
  }
  if (looks_like_request_body(first)) {
    t.format = "request-bodies";
    for (const auto& b : lines) add_body(t, b, nullptr);
    return t;
  }
  throw std::runtime_error("unrecognised JSONL trace (expected a gistproxy recording, claude-trace, a Claude Code "
                           "transcript, a Codex CLI rollout, OpenHands output.jsonl, request bodies or messages)");
}

}  // namespace

recorded_trace read_trace(std::string_view text) {
  auto start = text.find_first_not_of(" \t\r\n\xEF\xBB\xBF");
  if (start == std::string_view::npos) throw std::runtime_error("empty file");
  text.remove_prefix(start);
  if (text.front() == '{' || text.front() == '[') {
    auto whole = checked::parse<ojson>(text);
    if (!whole.is_discarded()) return from_document(whole);
    // JSONL: a line that does not parse (a truncated write, a lone surrogate
    // escape) is skipped and named; one bad line must not lose the trace.
    std::vector<ojson> lines;
    std::vector<std::string> skipped;
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
      else lines.push_back(std::move(j));
    }
    if (lines.empty()) throw std::runtime_error("not JSON, and no line of it is a JSON object (not JSONL)");
    auto t = from_lines(lines);
    t.notes.insert(t.notes.begin(), skipped.begin(), skipped.end());
    return t;
  }
  if (text.find("interactions:") != std::string_view::npos) {
    recorded_trace t;
    read_vcr(text, t);
    return t;
  }
  throw std::runtime_error("unrecognised trace format (expected JSON, JSONL or a vcrpy YAML cassette)");
}

}  // namespace gistproxy::rewrite
