#include "tests/support/scripted_model.hpp"
#include "tests/support/agent_plan.hpp"

#include <algorithm>
#include <cstdlib>
#include <optional>
#include <regex>

namespace gistproxy::testing {
namespace {

struct conversation {
  std::string first_user;
  std::string handle;                      // from a reference in the conversation
  std::vector<std::string> handles;        // every reference's, in order, once each
  std::vector<std::string> blob_results;   // contents of results of our rb_ calls
  bool client_result = false;              // a result for the client's tool came back
  bool agent_read = false;                 // the agent's Read tool answered (the "agent reads" script)
  bool tools_forbidden = false;            // tool_choice none
  bool signature_lost = false;             // Gemini: a read_blob call came back without its thoughtSignature
  std::size_t outputs = 0;                 // the client's own tool results: the turn, in the churn scripts
  std::string first_output_handle;         // the reference the first of them became, if it did
  std::string newest_handle;               // the reference the last of them became, if it did
};

std::string text_of(const nlohmann::json& content) {
  if (content.is_string()) return content.get<std::string>();
  std::string out;
  if (content.is_array())
    for (const auto& part : content)
      if (part.is_object() && part.contains("text") && part["text"].is_string()) out += part["text"].get<std::string>();
  return out;
}

void find_handle(conversation& c, const std::string& text) {
  static const std::regex ref(R"re(read_blob\("([0-9a-f]{16,64})"\))re");
  std::smatch m;
  if (c.handle.empty() && std::regex_search(text, m, ref)) c.handle = m[1];
  for (auto it = std::sregex_iterator(text.begin(), text.end(), ref); it != std::sregex_iterator(); ++it)
    if (std::find(c.handles.begin(), c.handles.end(), (*it)[1].str()) == c.handles.end()) c.handles.push_back((*it)[1]);
}

// Converse: content blocks keyed by shape; tool results are toolResult
// blocks whose content is a list of {"text"} items. Tools are forbidden by
// the last hop's notice: a text block after the results, "Do not call …".
template <class NoteResult>
void read_converse(const nlohmann::json& req, conversation& c, NoteResult& note_result) {
  for (const auto& msg : req.value("messages", nlohmann::json::array())) {
    const auto content = msg.value("content", nlohmann::json::array());
    const bool user = msg.value("role", "") == "user";
    if (user && c.first_user.empty()) c.first_user = text_of(content);
    if (user) find_handle(c, text_of(content));
    for (const auto& b : content)
      if (b.contains("toolResult")) note_result(b["toolResult"].value("toolUseId", ""), text_of(b["toolResult"].value("content", nlohmann::json())));
    c.tools_forbidden = user && !content.empty() && content.back().is_object() &&
                        content.back().value("text", "").rfind("Do not call ", 0) == 0;
  }
}

conversation read_conversation(llm_api api, const nlohmann::json& req) {
  conversation c;
  auto tc = req.value("tool_choice", nlohmann::json());
  c.tools_forbidden = tc == "none" || (tc.is_object() && tc.value("type", "") == "none");
  auto note_result = [&](const std::string& id, const std::string& text) {
    if (id.rfind("rb_", 0) == 0) c.blob_results.push_back(text);
    else if (id.rfind("run_", 0) == 0) c.client_result = true;
    else {
      c.agent_read |= id.rfind("toolu_read_", 0) == 0;
      find_handle(c, text);
      static const std::regex ref(R"re(read_blob\("([0-9a-f]{16,64})"\))re");
      std::smatch m;
      c.newest_handle = std::regex_search(text, m, ref) ? m[1].str() : std::string();
      if (++c.outputs == 1) c.first_output_handle = c.newest_handle;
    }
  };
  if (api == llm_api::gemini) {
    const auto config = req.value("toolConfig", nlohmann::json::object());
    c.tools_forbidden = config.is_object() && config.value("functionCallingConfig", nlohmann::json::object()).value("mode", "") == "NONE";
    for (const auto& content : req.value("contents", nlohmann::json::array())) {
      const auto parts = content.value("parts", nlohmann::json::array());
      if (content.value("role", "user") == "user" && c.first_user.empty()) c.first_user = text_of(parts);
      for (const auto& part : parts) {
        if (part.contains("functionCall")) {
          auto id = part["functionCall"].value("id", "");
          if (id.rfind("rb_", 0) == 0 && part.value("thoughtSignature", "") != gemini_signature_of(id)) c.signature_lost = true;
        }
        if (!part.contains("functionResponse")) continue;
        const auto& r = part["functionResponse"];
        const auto response = r.value("response", nlohmann::json::object());
        std::string text;
        for (const auto& [key, value] : response.items()) text += value.is_string() ? value.get<std::string>() : value.dump();
        note_result(r.value("id", ""), text);
      }
    }
    return c;
  }
  if (api == llm_api::responses) {
    if (req.value("input", nlohmann::json()).is_string()) c.first_user = req["input"];
    for (const auto& item : req.value("input", nlohmann::json::array())) {
      if (!item.is_object()) continue;
      if (item.value("role", "") == "user" && c.first_user.empty()) c.first_user = text_of(item["content"]);
      if (item.value("type", "") == "function_call_output") note_result(item.value("call_id", ""), text_of(item["output"]));
    }
    return c;
  }
  if (api == llm_api::converse) {
    read_converse(req, c, note_result);
    return c;
  }
  for (const auto& msg : req.value("messages", nlohmann::json::array())) {
    auto role = msg.value("role", "");
    if (role == "user" && c.first_user.empty()) c.first_user = text_of(msg.value("content", nlohmann::json()));
    if (role == "user") find_handle(c, text_of(msg.value("content", nlohmann::json())));  // Cline-style text results
    if (api == llm_api::chat && role == "tool") note_result(msg.value("tool_call_id", ""), text_of(msg["content"]));
    if (api == llm_api::messages && msg.value("content", nlohmann::json()).is_array())
      for (const auto& b : msg["content"])
        if (b.value("type", "") == "tool_result") note_result(b.value("tool_use_id", ""), text_of(b["content"]));
  }
  return c;
}

// The churn patterns beyond "reread everything" (churn_inline_test's table):
// what the model reads back whole this turn; nullopt when no such script.
// The turn is the number of the client's tool results; "the newest" is the
// last of them when it came as a reference (a re-reader's stay inline).
std::optional<std::vector<std::string>> churn_pattern_reads(const conversation& c) {
  const auto& u = c.first_user;
  std::vector<std::string> reads;
  auto newest = [&] {
    if (!c.newest_handle.empty()) reads.push_back(c.newest_handle);
  };
  if (u.find("reread every other turn") != std::string::npos) {
    if (c.outputs % 2 == 0) reads = c.handles;  // odd turns read nothing back
  } else if (u.find("reread the first output") != std::string::npos) {
    if (!c.first_output_handle.empty()) reads.push_back(c.first_output_handle);
    if (c.newest_handle != c.first_output_handle) newest();
  } else if (auto third = u.find("reread the third output on turn "); third != std::string::npos) {
    newest();
    const auto on = std::strtoul(u.c_str() + third + 32, nullptr, 10);
    if (c.outputs == on && c.handles.size() >= 3 && c.handles[2] != c.newest_handle) reads.push_back(c.handles[2]);
  } else if (auto at = u.find("reread everything after turn "); at != std::string::npos) {
    const auto after = std::strtoul(u.c_str() + at + 29, nullptr, 10);
    if (c.outputs > after) reads = c.handles;
    else newest();
  } else {
    return std::nullopt;
  }
  return reads;
}

std::string needle_line(const std::vector<std::string>& results) {
  // The first line holding NEEDLE, skipping read_blob's own "[… match "NEEDLE"]" header.
  for (const auto& r : results) {
    std::size_t start = 0;
    while (start < r.size()) {
      auto end = r.find('\n', start);
      auto line = r.substr(start, end == std::string::npos ? std::string::npos : end - start);
      if (line.find("NEEDLE") != std::string::npos && line.rfind("[", 0) != 0) return line;
      if (end == std::string::npos) break;
      start = end + 1;
    }
  }
  return "no needle found";
}

}  // namespace

model_turn script_model(llm_api api, const nlohmann::json& request) {
  if (auto plan = agent_plan_turn(api, request)) return *plan;
  auto c = read_conversation(api, request);
  model_turn t;
  if (c.signature_lost) {
    t.status = 400;
    return t;
  }
  auto rb = [&](std::string id, nlohmann::json args) { t.calls.push_back({std::move(id), "read_blob", std::move(args)}); };
  const auto& u = c.first_user;
  if (auto at = u.find("agent reads "); at != std::string::npos) {
    // A real agent's own tool (Claude Code's Read) first: its output is what
    // gistproxy offloads; then read_blob on the reference; then the line.
    if (!c.agent_read) {
      auto path = u.substr(at + 12);
      path = path.substr(0, path.find_first_of(" \n"));
      t.calls.push_back({"toolu_read_0", "Read", {{"file_path", path}}});
    } else if (c.blob_results.empty() && !c.handle.empty()) {
      rb("rb_0", {{"handle", c.handle}, {"pattern", "NEEDLE"}});
    } else {
      t.text = "found: " + needle_line(c.blob_results);
    }
    return t;
  }
  if (u.find("loop forever") != std::string::npos) {
    if (c.tools_forbidden) t.text = "gave up after " + std::to_string(c.blob_results.size()) + " reads";
    else rb("rb_" + std::to_string(c.blob_results.size()), {{"handle", c.handle}, {"pattern", "NEEDLE"}});
    return t;
  }
  if (u.find("fail second hop") != std::string::npos || u.find("hang second hop") != std::string::npos) {
    if (c.blob_results.empty()) rb("rb_0", {{"handle", c.handle}, {"pattern", "NEEDLE"}});
    else t.status = u.find("hang") != std::string::npos ? 0 : 500;
    return t;
  }
  if (u.find("read it all") != std::string::npos) {  // the whole output back, then it verbatim
    if (c.blob_results.empty() && !c.handle.empty()) rb("rb_0", {{"handle", c.handle}});
    else t.text = "tool said: " + (c.blob_results.empty() ? std::string("nothing") : c.blob_results[0]);
    return t;
  }
  if (auto pattern = churn_pattern_reads(c); pattern) {
    if (c.blob_results.empty() && !c.tools_forbidden)
      for (std::size_t i = 0; i < pattern->size(); ++i) rb("rb_" + std::to_string(i), {{"handle", (*pattern)[i]}});
    if (t.calls.empty()) t.text = "read " + std::to_string(c.blob_results.size()) + " outputs back";
    return t;
  }
  if (u.find("reread everything") != std::string::npos) {  // every reference back, whole, on every turn
    if (c.blob_results.empty() && !c.tools_forbidden)
      for (std::size_t i = 0; i < c.handles.size(); ++i) rb("rb_" + std::to_string(i), {{"handle", c.handles[i]}});
    if (t.calls.empty()) t.text = "read " + std::to_string(c.blob_results.size()) + " outputs back";
    return t;
  }
  if (u.find("read each new output once") != std::string::npos) {  // the newest reference back, whole, once
    if (c.blob_results.empty() && !c.tools_forbidden && !c.handles.empty()) rb("rb_0", {{"handle", c.handles.back()}});
    if (t.calls.empty()) t.text = "read " + std::to_string(c.blob_results.size()) + " outputs back";
    return t;
  }
  if (u.find("unknown handle") != std::string::npos) {
    if (c.blob_results.empty()) rb("rb_0", {{"handle", "0000000000000000"}});
    else t.text = "tool said: " + c.blob_results[0];
    return t;
  }
  if (u.find("slow second hop") != std::string::npos && !c.blob_results.empty()) t.delay_ms = 1500;
  if (u.find("truncate second hop") != std::string::npos && !c.blob_results.empty()) t.truncate = true;
  if (u.find("find the needle") != std::string::npos || u.find("two calls") != std::string::npos ||
      u.find("with client call") != std::string::npos || u.find("slow second hop") != std::string::npos ||
      u.find("truncate second hop") != std::string::npos) {
    if (c.blob_results.empty() && !c.handle.empty()) {
      rb("rb_0", {{"handle", c.handle}, {"pattern", "NEEDLE"}});
      if (u.find("two calls") != std::string::npos) rb("rb_1", {{"handle", c.handle}, {"start_line", 1}, {"end_line", 2}});
      if (u.find("with client call") != std::string::npos) t.calls.push_back({"run_0", "run", {{"cmd", "ls"}}});
      return t;
    }
    if (u.find("with client call") != std::string::npos && !c.client_result) {
      t.calls.push_back({"run_1", "run", {{"cmd", "ls"}}});
      return t;
    }
    t.text = "found: " + needle_line(c.blob_results);
    return t;
  }
  t.text = "Hello from the mock.";
  return t;
}

std::string gemini_signature_of(const std::string& call_id) { return "c2lnbmF0dXJl-" + call_id; }

}  // namespace gistproxy::testing
