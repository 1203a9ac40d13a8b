#include "rewrite/replay/trace_readers.hpp"

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
    auto api = dialect_for_path(path_of_url(r.value("url", "")));
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
    auto api = dialect_for_path(line.value("path", ""));
    auto body = body_of(line, "request_body");
    if (!api || !body) continue;
    t.requests.push_back({api, *body, body_of(line, "forwarded_body").value_or(""), line.value("hops", 0)});
  }
}

void read_har(const ojson& har, recorded_trace& t) {
  t.format = "har";
  for (const auto& e : har["log"].value("entries", ojson::array())) {
    if (!is_obj(e, "request")) continue;
    const auto& r = e["request"];
    auto api = dialect_for_path(path_of_url(r.value("url", "")));
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
    std::string model = "unknown";
    if (is_obj(c, "response") && is_str(c["response"], "model")) model = c["response"]["model"];
    ojson body = {{"model", model}, {"messages", c["messages"]}};
    if (is_obj(c, "kwargs") && is_arr(c["kwargs"], "tools")) body["tools"] = c["kwargs"]["tools"];
    t.requests.push_back({dialect_named("chat"), dump(body), {}});
  }
}

}  // namespace gistproxy::rewrite::trace_readers
