// Codex CLI session rollouts (~/.codex/sessions/**/rollout-*.jsonl): the
// Responses API items of a session, one per line. Two generations:
//   envelope  {"timestamp", "type": "session_meta"|"turn_context"|"response_item"|"event_msg"|"compacted", "payload"}
//   direct    a first line {"id", "timestamp", "instructions"?}, then the items themselves
//             (and {"record_type": "state"} markers)
// Codex sends the whole item list so far with each request, so a request is
// rebuilt at every point where the model starts answering: the first model
// item (reasoning, an assistant message, a tool call) after input items.
#include "rewrite/replay/trace_readers.hpp"

namespace gistproxy::rewrite::trace_readers {
namespace {

bool is_model_item(const ojson& item) {
  const auto type = item.value("type", "");
  if (type == "message") return item.value("role", "") == "assistant";
  return type == "reasoning" || type == "function_call" || type == "custom_tool_call" || type == "local_shell_call" ||
         type == "web_search_call";
}

struct rollout {
  explicit rollout(recorded_trace& t) : items(t, endpoint_named("responses")) {}
  std::string model = "unknown";
  std::string instructions;
  conversation_builder items;
  bool previous_was_model = false;
};

void add_item(rollout& r, const ojson& item) {
  if (!item.is_object() || !is_str(item, "type")) return;
  const bool model = is_model_item(item);
  if (model && !r.previous_was_model && r.items.size()) {
    ojson before = {{"model", r.model}};
    if (!r.instructions.empty()) before["instructions"] = r.instructions;
    r.items.request(before);
  }
  r.previous_was_model = model;
  r.items.add(item);
}

}  // namespace

bool is_codex_envelope(const ojson& line) {
  if (!is_str(line, "type") || !is_obj(line, "payload")) return false;
  const auto type = line["type"].get<std::string>();
  return type == "session_meta" || type == "response_item" || type == "turn_context" || type == "event_msg" ||
         type == "compacted";
}

bool is_codex_direct(const std::vector<ojson>& lines) {
  const auto& first = lines.front();
  if (!is_str(first, "id") || !first.contains("timestamp") || first.contains("type") || first.contains("role")) return false;
  for (std::size_t i = 1; i < lines.size(); ++i)
    if (is_str(lines[i], "type") && (lines[i]["type"] == "message" || lines[i]["type"] == "function_call")) return true;
  return false;
}

void read_codex_rollout(const std::vector<ojson>& lines, recorded_trace& t) {
  t.format = "codex";
  rollout r(t);  // rebuilt: the items are recorded; Codex's tools array is not
  std::size_t compactions = 0;
  for (const auto& line : lines) {
    if (!is_codex_envelope(line)) {  // the direct generation
      if (is_str(line, "id") && line.contains("timestamp") && is_str(line, "instructions"))
        r.instructions = line["instructions"];
      else if (!line.contains("record_type")) add_item(r, line);
      continue;
    }
    const auto type = line["type"].get<std::string>();
    const auto& p = line["payload"];
    if (type == "session_meta" && is_str(p, "instructions")) r.instructions = p["instructions"];
    else if (type == "turn_context" && is_str(p, "model")) r.model = p["model"];
    else if (type == "response_item") add_item(r, p);
    else if (type == "compacted") ++compactions;
  }
  if (compactions)
    t.notes.push_back(std::to_string(compactions) + " history compaction(s): the requests after one carry every earlier "
                      "item, as if it had not happened (an overestimate)");
}

}  // namespace gistproxy::rewrite::trace_readers
