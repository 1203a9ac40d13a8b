#include "rewrite/replay/trace_formats.hpp"

#include <yaml-cpp/yaml.h>

#include <nlohmann/json.hpp>
#include <regex>
#include <stdexcept>

#include "rewrite/offload/base64.hpp"

namespace gistproxy::rewrite {

using ojson = nlohmann::ordered_json;

namespace {

std::string dump(const ojson& j) { return j.dump(-1, ' ', false, ojson::error_handler_t::replace); }

bool is_obj(const ojson& j, const char* key) { return j.is_object() && j.contains(key) && j[key].is_object(); }
bool is_arr(const ojson& j, const char* key) { return j.is_object() && j.contains(key) && j[key].is_array(); }
bool is_str(const ojson& j, const char* key) { return j.is_object() && j.contains(key) && j[key].is_string(); }

// The API of a request body from its shape alone (formats that do not record the URL).
api_kind guess_api(const ojson& body) {
  if (body.contains("input") && !body.contains("messages")) return api_kind::responses;
  if (body.contains("system") || body.contains("anthropic_version") || body.contains("stop_sequences"))
    return api_kind::messages;
  for (const auto& m : body.value("messages", ojson::array())) {
    if (!m.is_object()) continue;
    if (m.value("role", "") == "system" || m.value("role", "") == "tool" || m.contains("tool_calls")) return api_kind::chat;
    if (m.contains("content") && m["content"].is_array())
      for (const auto& b : m["content"])
        if (b.is_object() && (b.value("type", "") == "tool_use" || b.value("type", "") == "tool_result"))
          return api_kind::messages;
  }
  return api_kind::chat;
}

bool looks_like_request_body(const ojson& j) {
  return j.is_object() && (is_arr(j, "messages") || j.contains("input")) && !j.contains("role");
}

// ---- message lists → per-turn requests ---------------------------------------

// A chat message as a provider receives it (frameworks' bookkeeping fields dropped).
ojson chat_message(const ojson& m) {
  ojson out = ojson::object();
  out["role"] = m["role"];
  out["content"] = m.contains("content") ? m["content"] : ojson(nullptr);
  for (const char* k : {"name", "tool_calls", "tool_call_id"})
    if (m.contains(k) && !m[k].is_null()) out[k] = m[k];
  // SWE-agent keeps the ids of the calls a tool message answers in a list.
  if (!out.contains("tool_call_id") && is_arr(m, "tool_call_ids") && !m["tool_call_ids"].empty())
    out["tool_call_id"] = m["tool_call_ids"][0];
  return out;
}

// One request per assistant message: the messages before it.
void rebuild_chat(const ojson& messages, const std::string& model, const ojson& tools, recorded_trace& t) {
  t.rebuilt = true;
  ojson so_far = ojson::array();
  for (const auto& m : messages) {
    if (!m.is_object() || !is_str(m, "role")) continue;
    if (m["role"] == "assistant" && !so_far.empty()) {
      ojson body = {{"model", model}, {"messages", so_far}};
      if (tools.is_array() && !tools.empty()) body["tools"] = tools;
      t.requests.push_back({api_kind::chat, dump(body), {}});
    }
    so_far.push_back(chat_message(m));
  }
}

ojson as_blocks(const ojson& content) {
  if (content.is_array()) return content;
  return ojson::array({{{"type", "text"}, {"text", content.is_string() ? content.get<std::string>() : dump(content)}}});
}

// Claude Code keeps one content block per line; lines of one assistant message
// share message.id, and consecutive user lines reach the API as one message.
void read_claude_code(const std::vector<ojson>& lines, recorded_trace& t) {
  t.format = "claude-code";
  t.rebuilt = true;
  struct msg {
    std::string role, id, model;
    ojson content;
  };
  std::vector<msg> messages;
  for (const auto& line : lines) {
    auto type = line.value("type", "");
    if ((type != "user" && type != "assistant") || !is_obj(line, "message")) continue;
    const auto& m = line["message"];
    auto role = m.value("role", type);
    auto id = m.value("id", "");
    if (!messages.empty() && messages.back().role == role && (role == "user" || messages.back().id == id)) {
      auto& last = messages.back();
      last.content = as_blocks(last.content);
      for (const auto& b : as_blocks(m.value("content", ojson(""))))
        last.content.push_back(b);
      continue;
    }
    messages.push_back({role, id, m.value("model", ""), m.value("content", ojson(""))});
  }
  for (std::size_t k = 1; k < messages.size(); ++k) {
    if (messages[k].role != "assistant") continue;
    ojson list = ojson::array();
    for (std::size_t i = 0; i < k; ++i) list.push_back({{"role", messages[i].role}, {"content", messages[i].content}});
    ojson body = {{"model", messages[k].model.empty() ? "unknown" : messages[k].model}, {"max_tokens", 32000},
                  {"messages", std::move(list)}};
    t.requests.push_back({api_kind::messages, dump(body), {}});
  }
}

// ---- formats holding the bodies sent -------------------------------------------

void add_body(recorded_trace& t, const ojson& body, std::optional<api_kind> api) {
  if (!body.is_object()) return t.notes.push_back("an entry's body is not a JSON object");
  t.requests.push_back({api.value_or(guess_api(body)), dump(body), {}});
}

void add_body_text(recorded_trace& t, const std::string& text, std::optional<api_kind> api) {
  auto j = ojson::parse(text, nullptr, false);
  if (j.is_discarded() || !j.is_object()) return t.notes.push_back("an LLM request body is not JSON: skipped");
  t.requests.push_back({api.value_or(guess_api(j)), text, {}});
}

std::string path_of_url(const std::string& url) {
  auto scheme = url.find("://");
  auto start = url.find('/', scheme == std::string::npos ? 0 : scheme + 3);
  return start == std::string::npos ? "/" : url.substr(start);
}

void read_claude_trace(const std::vector<ojson>& entries, recorded_trace& t) {
  t.format = "claude-trace";
  for (const auto& e : entries) {
    if (!is_obj(e, "request")) continue;
    const auto& r = e["request"];
    auto api = api_of_path(path_of_url(r.value("url", "")));
    if (!api) {
      t.notes.push_back("not an LLM request: " + path_of_url(r.value("url", "")).substr(0, 80));
      continue;
    }
    if (r.contains("body") && r["body"].is_string()) add_body_text(t, r["body"], api);
    else if (r.contains("body")) add_body(t, r["body"], api);
  }
}

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
    auto api = api_of_path(line.value("path", ""));
    auto body = body_of(line, "request_body");
    if (!api || !body) continue;
    t.requests.push_back({*api, *body, body_of(line, "forwarded_body").value_or(""), line.value("hops", 0)});
  }
}

void read_har(const ojson& har, recorded_trace& t) {
  t.format = "har";
  for (const auto& e : har["log"].value("entries", ojson::array())) {
    if (!is_obj(e, "request")) continue;
    const auto& r = e["request"];
    auto api = api_of_path(path_of_url(r.value("url", "")));
    if (!api || !is_obj(r, "postData") || !is_str(r["postData"], "text")) continue;
    std::string text = r["postData"]["text"];
    std::string decoded;
    if (r["postData"].value("encoding", "") == "base64" && base64_decode(text, decoded)) text = decoded;
    add_body_text(t, text, api);
  }
}

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

void read_inspect(const ojson& log, recorded_trace& t) {
  t.format = "inspect";
  for (const auto& sample : log["samples"]) {
    auto attachments = sample.value("attachments", ojson::object());
    for (const auto& ev : sample.value("events", ojson::array())) {
      if (ev.value("event", "") != "model" || !is_obj(ev, "call") || !is_obj(ev["call"], "request")) continue;
      add_body(t, resolve_attachments(ev["call"]["request"], attachments), std::nullopt);
    }
  }
}

void read_openhands(const std::vector<ojson>& calls, recorded_trace& t) {
  t.format = "openhands";
  for (const auto& c : calls) {
    std::string model = "unknown";
    if (is_obj(c, "response") && is_str(c["response"], "model")) model = c["response"]["model"];
    ojson body = {{"model", model}, {"messages", c["messages"]}};
    if (is_obj(c, "kwargs") && is_arr(c["kwargs"], "tools")) body["tools"] = c["kwargs"]["tools"];
    t.requests.push_back({api_kind::chat, dump(body), {}});
  }
}

// ---- vcrpy cassettes (YAML) -------------------------------------------------------

ojson yaml_to_json(const YAML::Node& n) {
  switch (n.Type()) {
    case YAML::NodeType::Map: {
      ojson o = ojson::object();
      for (const auto& kv : n) o[kv.first.as<std::string>()] = yaml_to_json(kv.second);
      return o;
    }
    case YAML::NodeType::Sequence: {
      ojson a = ojson::array();
      for (const auto& v : n) a.push_back(yaml_to_json(v));
      return a;
    }
    case YAML::NodeType::Scalar: {
      const auto& s = n.Scalar();
      if (n.Tag() == "!") return s;  // quoted: always a string
      static const std::regex integer(R"(^[-+]?[0-9]+$)"), real(R"(^[-+]?([0-9]*\.[0-9]+|[0-9]+\.?[0-9]*)([eE][-+]?[0-9]+)?$)");
      if (s == "true" || s == "True" || s == "TRUE") return true;
      if (s == "false" || s == "False" || s == "FALSE") return false;
      if (s == "null" || s == "Null" || s == "NULL" || s == "~") return nullptr;
      if (std::regex_match(s, integer)) {
        try {
          return std::stoll(s);
        } catch (const std::exception&) {
        }
      }
      if (std::regex_match(s, real)) return std::stod(s);
      return s;
    }
    default:
      return nullptr;
  }
}

void read_vcr(std::string_view text, recorded_trace& t) {
  t.format = "vcr";
  YAML::Node root;
  try {
    root = YAML::Load(std::string(text));
  } catch (const YAML::Exception& e) {
    throw std::runtime_error(std::string("vcr cassette: YAML error: ") + e.what());
  }
  if (!root["interactions"] || !root["interactions"].IsSequence())
    throw std::runtime_error("vcr cassette: no interactions list");
  for (const auto& it : root["interactions"]) {
    auto req = it["request"];
    if (!req) continue;
    auto uri = req["uri"] ? req["uri"].as<std::string>() : std::string();
    auto api = api_of_path(path_of_url(uri));
    if (!api) {
      t.notes.push_back("not an LLM request: " + uri.substr(0, 80));
      continue;
    }
    if (req["parsed_body"]) {
      add_body(t, yaml_to_json(req["parsed_body"]), api);
    } else if (req["body"] && req["body"].IsScalar()) {
      add_body_text(t, req["body"].Scalar(), api);
    } else if (req["body"] && req["body"]["string"]) {
      add_body_text(t, req["body"]["string"].Scalar(), api);
    } else {
      t.notes.push_back("an LLM request without a body: " + uri.substr(0, 80));
    }
  }
}

// ---- detection ------------------------------------------------------------------

recorded_trace from_lines(const std::vector<ojson>& lines);

recorded_trace from_document(const ojson& j) {
  // A JSONL file of one line is also one JSON document.
  if (j.is_object() && (j.contains("gistproxy_record") || is_obj(j, "request") || (is_str(j, "type") && is_obj(j, "message"))))
    return from_lines({j});
  recorded_trace t;
  if (is_obj(j, "log") && is_arr(j["log"], "entries")) return read_har(j, t), t;
  if (is_arr(j, "samples") && j.contains("eval")) return read_inspect(j, t), t;
  if (is_arr(j, "history")) {
    t.format = "swe-agent";
    std::string model = "unknown";
    if (is_obj(j, "replay_config")) {
      auto cfg = j["replay_config"].is_string() ? ojson::parse(j["replay_config"].get<std::string>(), nullptr, false)
                                                : j["replay_config"];
      if (cfg.is_object() && is_obj(cfg, "agent") && is_obj(cfg["agent"], "model") && is_str(cfg["agent"]["model"], "name"))
        model = cfg["agent"]["model"]["name"];
    }
    rebuild_chat(j["history"], model, ojson(), t);
    return t;
  }
  if (is_arr(j, "messages") && (j.contains("kwargs") || (j.contains("response") && j.contains("timestamp"))))
    return read_openhands({j}, t), t;
  if (is_arr(j, "interactions")) {
    t.format = "vcr";
    for (const auto& it : j["interactions"]) {
      if (!is_obj(it, "request")) continue;
      auto api = api_of_path(path_of_url(it["request"].value("uri", "")));
      if (api && is_str(it["request"], "body")) add_body_text(t, it["request"]["body"], api);
    }
    return t;
  }
  if (looks_like_request_body(j)) {
    t.format = "request-bodies";
    add_body(t, j, std::nullopt);
    return t;
  }
  if (j.is_array() && !j.empty()) {
    std::vector<ojson> items(j.begin(), j.end());
    if (items.front().is_object() && items.front().contains("role")) {
      t.format = "messages";
      rebuild_chat(j, "unknown", ojson(), t);
      return t;
    }
    if (looks_like_request_body(items.front())) {
      t.format = "request-bodies";
      for (const auto& b : items) add_body(t, b, std::nullopt);
      return t;
    }
    if (is_obj(items.front(), "request")) return read_claude_trace(items, t), t;
  }
  throw std::runtime_error("unrecognised JSON trace (expected HAR, an Inspect log, a SWE-agent .traj, an OpenHands "
                           "completion, a vcr cassette, request bodies or a message list)");
}

recorded_trace from_lines(const std::vector<ojson>& lines) {
  recorded_trace t;
  const auto& first = lines.front();
  if (first.contains("gistproxy_record")) return read_recording(lines, t), t;
  if (is_obj(first, "request")) return read_claude_trace(lines, t), t;
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
    for (const auto& b : lines) add_body(t, b, std::nullopt);
    return t;
  }
  throw std::runtime_error("unrecognised JSONL trace (expected a gistproxy recording, claude-trace, a Claude Code "
                           "transcript, request bodies or messages)");
}

}  // namespace

std::optional<api_kind> api_of_path(std::string_view path) {
  path = path.substr(0, path.find('?'));
  while (!path.empty() && path.back() == '/') path.remove_suffix(1);
  if (path.ends_with("/chat/completions")) return api_kind::chat;
  if (path.ends_with("/responses")) return api_kind::responses;
  if (path.ends_with("/messages")) return api_kind::messages;
  return std::nullopt;
}

std::string_view path_of_api(api_kind api) {
  switch (api) {
    case api_kind::chat: return "/v1/chat/completions";
    case api_kind::responses: return "/v1/responses";
    case api_kind::messages: return "/v1/messages";
  }
  return "/v1/chat/completions";
}

recorded_trace read_trace(std::string_view text) {
  auto start = text.find_first_not_of(" \t\r\n\xEF\xBB\xBF");
  if (start == std::string_view::npos) throw std::runtime_error("empty file");
  text.remove_prefix(start);
  if (text.front() == '{' || text.front() == '[') {
    auto whole = ojson::parse(text, nullptr, false);
    if (!whole.is_discarded()) return from_document(whole);
    std::vector<ojson> lines;
    std::size_t pos = 0, n = 0;
    while (pos < text.size()) {
      auto end = text.find('\n', pos);
      if (end == std::string_view::npos) end = text.size();
      auto line = text.substr(pos, end - pos);
      pos = end + 1;
      ++n;
      if (line.find_first_not_of(" \t\r") == std::string_view::npos) continue;
      auto j = ojson::parse(line, nullptr, false);
      if (j.is_discarded() || !j.is_object())
        throw std::runtime_error("line " + std::to_string(n) + " is not a JSON object (not JSON, and not JSONL)");
      lines.push_back(std::move(j));
    }
    return from_lines(lines);
  }
  if (text.find("interactions:") != std::string_view::npos) {
    recorded_trace t;
    read_vcr(text, t);
    return t;
  }
  throw std::runtime_error("unrecognised trace format (expected JSON, JSONL or a vcrpy YAML cassette)");
}

}  // namespace gistproxy::rewrite
