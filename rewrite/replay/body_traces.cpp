#include <algorithm>

#include "rewrite/replay/trace_readers.hpp"
#include "rewrite/conversation/conversation_chains.hpp"

#include "rewrite/offload/base64.hpp"

namespace gistproxy::rewrite::trace_readers {

namespace {

// Inspect AI stores each large string once, as attachment://<id>.
ojson resolve_attachments(const ojson& j, const ojson& attachments) {
  if (j.is_string()) {
    const auto& s = j.get_ref<const std::string&>();
    if (s.rfind("attachment://", 0) == 0) {
      auto id = s.substr(13);
      if (attachments.contains(id)) return attachments[id];
    }
    return j;
  }
  if (j.is_array() || j.is_object()) {
    ojson out = j;
    for (auto& [k, v] : out.items()) v = resolve_attachments(v, attachments);
    return out;
  }
  return j;
}

}  // namespace

void read_claude_trace(const std::vector<ojson>& entries, recorded_trace& t) {
  t.format = "claude-trace";
  for (const auto& e : entries) {
    if (!is_obj(e, "request")) continue;
    const auto& r = e["request"];
    auto api = endpoint_for_path(path_of_url(r.value("url", "")));
    if (!api) {
      t.notes.push_back("not an LLM request: " + path_of_url(r.value("url", "")).substr(0, 80));
      continue;
    }
    if (r.contains("body") && r["body"].is_string()) add_body_text(t, r["body"], api);
    else if (r.contains("body")) add_body(t, r["body"], api);
  }
}

namespace {

// A recorded line's read-backs: handles only (64 lowercase hex characters),
// at most as many as serve records; anything else in the list is skipped.
std::vector<std::string> read_backs_of(const ojson& line) {
  std::vector<std::string> out;
  if (!is_arr(line, "read_backs")) return out;
  for (const auto& h : line["read_backs"]) {
    if (out.size() == 1024) break;
    if (!h.is_string()) continue;
    const auto& s = h.get_ref<const std::string&>();
    if (s.size() == 64 && s.find_first_not_of("0123456789abcdef") == std::string::npos) out.push_back(s);
  }
  return out;
}

}  // namespace

void read_recording(const std::vector<ojson>& lines, recorded_trace& t) {
  t.format = "gistproxy-recording";
  auto body_of = [](const ojson& line, const std::string& key) -> std::optional<std::string> {
    if (is_str(line, key.c_str())) return line[key].get<std::string>();
    std::string decoded;
    if (is_str(line, (key + "_base64").c_str()) && base64_decode(line[key + "_base64"].get<std::string>(), decoded))
      return decoded;
    return std::nullopt;
  };
  for (const auto& line : lines) {
    const std::string path = is_str(line, "path") ? line["path"].get<std::string>() : std::string();
    auto api = endpoint_for_path(path);
    auto body = body_of(line, "request_body");
    if (!api || !body) continue;
    // A recording is a file from outside: a member of the wrong type skips nothing but itself.
    const auto& hops = line.contains("hops") ? line["hops"] : ojson();
    // Serve makes at most --max-page-in-hops (≤ 32) per request: more is not a recording of it.
    const int page_in_hops = hops.is_number_integer() ? int(std::clamp<std::int64_t>(hops.get<std::int64_t>(), 0, 32)) : 0;
    t.requests.push_back(recorded_request::as_sent(api, *body, body_of(line, "forwarded_body").value_or(""), page_in_hops));
    t.requests.back().target = path;
    t.requests.back().read_backs = read_backs_of(line);
    // Kept only as serve writes it (32 lowercase hex): anything else is grouped as other traces are.
    if (is_str(line, "conversation_id") && conversation_from_hex(line["conversation_id"].get<std::string>()))
      t.requests.back().conversation_id = line["conversation_id"].get<std::string>();
  }
}

void read_har(const ojson& har, recorded_trace& t) {
  t.format = "har";
  for (const auto& e : har["log"].value("entries", ojson::array())) {
    if (!is_obj(e, "request")) continue;
    const auto& r = e["request"];
    auto api = endpoint_for_path(path_of_url(r.value("url", "")));
    if (!api || !is_obj(r, "postData") || !is_str(r["postData"], "text")) continue;
    std::string text = r["postData"]["text"];
    std::string decoded;
    if (r["postData"].value("encoding", "") == "base64" && base64_decode(text, decoded)) text = decoded;
    add_body_text(t, text, api);
  }
}

void read_inspect(const ojson& log, recorded_trace& t) {
  t.format = "inspect";
  for (const auto& sample : log["samples"]) {
    if (!sample.is_object()) continue;
    auto attachments = sample.value("attachments", ojson::object());
    for (const auto& ev : sample.value("events", ojson::array())) {
      if (ev.value("event", "") != "model" || !is_obj(ev, "call") || !is_obj(ev["call"], "request")) continue;
      add_body(t, resolve_attachments(ev["call"]["request"], attachments), nullptr);
    }
  }
}

void read_openhands(const std::vector<ojson>& calls, recorded_trace& t) {
  t.format = "openhands";
  for (const auto& c : calls) {
    if (!is_arr(c, "messages")) {
      t.notes.push_back("a call without messages: skipped");
      continue;
    }
    std::string model = "unknown";
    if (is_obj(c, "response") && is_str(c["response"], "model")) model = c["response"]["model"];
    ojson body = {{"model", model}, {"messages", c["messages"]}};
    if (is_obj(c, "kwargs") && is_arr(c["kwargs"], "tools")) body["tools"] = c["kwargs"]["tools"];
    t.requests.push_back(recorded_request::as_sent(endpoint_named("chat"), dump(body)));
  }
}

namespace {

// One OpenHands event as the chat message the agent's LLM saw, or null.
// Agent actions carry the model's whole response (tool_call_metadata.
// model_response): the assistant message is taken from it, once per response
// (several actions can share one). Observations answer a tool call by id.
ojson openhands_event_message(const ojson& e, std::string& last_response_id) {
  if (!e.is_object()) return nullptr;
  const auto source = e.value("source", "");
  const auto action = e.value("action", "");
  const auto& meta = is_obj(e, "tool_call_metadata") ? e["tool_call_metadata"] : ojson();
  const auto& args = is_obj(e, "args") ? e["args"] : ojson();
  auto text = [&](const char* key) {
    if (is_str(args, key)) return args[key].get<std::string>();
    return e.value("message", std::string());
  };
  if (action == "system") return {{"role", "system"}, {"content", text("content")}};
  if (e.contains("observation")) {
    if (!is_str(meta, "tool_call_id")) return nullptr;
    return {{"role", "tool"}, {"tool_call_id", meta["tool_call_id"]}, {"content", e.value("content", std::string())}};
  }
  if (source == "user" && action == "message") return {{"role", "user"}, {"content", text("content")}};
  if (source != "agent" || action.empty()) return nullptr;
  if (is_obj(meta, "model_response") && is_arr(meta["model_response"], "choices") && !meta["model_response"]["choices"].empty()) {
    const auto& response = meta["model_response"];
    const auto id = response.value("id", "");
    if (!id.empty() && id == last_response_id) return nullptr;  // already added for an earlier action
    last_response_id = id;
    const auto& message = response["choices"][0].value("message", ojson::object());
    ojson out = {{"role", "assistant"}, {"content", message.contains("content") ? message["content"] : ojson(nullptr)}};
    if (is_arr(message, "tool_calls")) out["tool_calls"] = message["tool_calls"];
    return out;
  }
  if (action == "message" || action == "finish") return {{"role", "assistant"}, {"content", text("content")}};
  return nullptr;
}

}  // namespace

// OpenHands evaluation output (output.jsonl): one instance per line, its
// event history rebuilt into the chat requests the agent made.
void read_openhands_output(const std::vector<ojson>& lines, recorded_trace& t) {
  t.format = "openhands-output";
  for (const auto& line : lines) {
    if (!is_arr(line, "history")) {
      t.notes.push_back("a line has no history: skipped");
      continue;
    }
    std::string model = "unknown";
    if (is_obj(line, "metadata") && is_obj(line["metadata"], "llm_config") && is_str(line["metadata"]["llm_config"], "model"))
      model = line["metadata"]["llm_config"]["model"];
    ojson messages = ojson::array();
    std::string last_response_id;
    for (const auto& e : line["history"]) {
      auto m = openhands_event_message(e, last_response_id);
      if (!m.is_null()) messages.push_back(std::move(m));
    }
    rebuild_chat(messages, model, ojson(), t);
  }
}

}  // namespace gistproxy::rewrite::trace_readers
