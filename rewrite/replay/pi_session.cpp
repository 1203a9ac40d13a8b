// The pi coding agent (earendil-works/pi, formerly badlogic/pi-mono): its
// session files and documents that embed its messages, rebuilt into one
// request per assistant message.
//
//   session   ~/.pi/agent/sessions/--<cwd>--/<time>_<id>.jsonl: a header
//             {"type":"session","version":3,"id","timestamp","cwd"}, then
//             entries {type, id, parentId, timestamp, ...}: message,
//             model_change, compaction, branch_summary, custom_message,
//             context_edit, label, ... (unknown types are skipped).
//   document  {"schema", "model", "provider", "usage", "messages": [pi messages]}:
//             one conversation, in order (not a pi artifact: a wrapper some
//             tools write around pi's messages).
//
// A session is a tree: going back with /tree appends a new branch to an
// earlier entry in the same file, so file order mixes branches. The
// conversation is the path from the last entry back to the root, as pi
// itself rebuilds it; entries on other branches are not replayed.
//
// Each assistant message records the API, provider and model it was sent to,
// so each turn is rebuilt in that API (pi switches models mid-session); the
// recorded usage is not used (pi's usage.input excludes cache reads and
// writes, and replay counts the rebuilt body itself).
#include <algorithm>
#include <deque>
#include <map>
#include <optional>
#include <unordered_map>

#include "rewrite/json/checked.hpp"
#include "rewrite/replay/pi_messages.hpp"
#include "rewrite/replay/trace_readers.hpp"

namespace gistproxy::rewrite::trace_readers {

namespace {

using checked::string_at;

// pi's own wrappers (coding-agent dist/core/messages.js).
constexpr const char* compaction_prefix = "The conversation history before this point was compacted into the following summary:\n\n<summary>\n";
constexpr const char* compaction_suffix = "\n</summary>";
constexpr const char* branch_prefix = "The following is a summary of a branch that this conversation came back from:\n\n<summary>\n";
constexpr const char* branch_suffix = "</summary>";

ojson user_text(const std::string& text) {
  return {{"role", "user"}, {"content", ojson::array({{{"type", "text"}, {"text", text}}})}};
}

bool is_true(const ojson& j, const char* key) { return checked::member(j, key).is_boolean() && j[key].get<bool>(); }

// pi's bashExecutionToText: a `!command` the user ran, as the model sees it.
std::string bash_execution_text(const ojson& m) {
  auto text = "Ran `" + string_at(m, "command") + "`\n";
  const auto output = string_at(m, "output");
  text += output.empty() ? "(no output)" : "```\n" + output + "\n```";
  const auto exit = checked::integer_at(m, "exitCode");
  if (is_true(m, "cancelled")) text += "\n\n(command cancelled)";
  else if (exit && *exit != 0) text += "\n\nCommand exited with code " + std::to_string(*exit);
  if (is_true(m, "truncated") && is_str(m, "fullOutputPath"))
    text += "\n\n[Output truncated. Full output: " + string_at(m, "fullOutputPath") + "]";
  return text;
}

ojson custom_content(const ojson& content) {
  if (content.is_array()) return {{"role", "user"}, {"content", content}};
  return user_text(content.is_string() ? content.get<std::string>() : std::string());
}

// One conversation being replayed: what pi would send now (`context`, the
// LLM messages of the path so far) and the builder turning it into requests.
// A compaction or context edit changes earlier messages, and a turn in
// another API needs them in its shape: both start a new builder from the
// context, which is then a new conversation for replay.
class session_replay {
 public:
  session_replay(recorded_trace& t, std::string model, std::string provider, std::string api)
      : trace_(t), model_(std::move(model)), provider_(std::move(provider)), api_(std::move(api)) {}

  // An LLM message (user, assistant, toolResult; other roles are turned into
  // user text first) of entry `id`.
  void message(const ojson& m, const std::string& id);
  void compaction(const ojson& entry);
  void context_edit(const ojson& entry);
  void user(ojson m, const std::string& id) { append(own(std::move(m)), id); }
  // Notes what was left out or guessed.
  void finish();

 private:
  struct context_message {
    std::string entry_id;
    const ojson* message;
  };
  const ojson* own(ojson m) { return &made_.emplace_back(std::move(m)); }
  void append(const ojson* m, const std::string& id);
  void assistant(const ojson& m, const std::string& id);
  std::optional<pi_api> api_for(const ojson& m);

  recorded_trace& trace_;
  std::string model_, provider_, api_;  // the document's, for messages that do not say
  std::vector<context_message> context_;
  std::deque<ojson> made_;  // messages made here (summaries, edits), which context_ points into
  std::optional<pi_conversation> conversation_;
  bool stale_ = false;  // context_ changed under the builder
  std::size_t system_messages_ = 0, skipped_turns_ = 0, unknown_roles_ = 0;
  std::map<std::string, std::size_t> guessed_apis_;
};

void session_replay::message(const ojson& m, const std::string& id) {
  const auto role = string_at(m, "role");
  if (role == "assistant") return assistant(m, id);
  if (role == "user" || role == "toolResult") return append(&m, id);
  if (role == "bashExecution") {
    if (!is_true(m, "excludeFromContext")) user(user_text(bash_execution_text(m)), id);
  } else if (role == "custom" || role == "hookMessage") {  // hookMessage: v2's name for custom
    user(custom_content(checked::member(m, "content")), id);
  } else if (role == "branchSummary") {
    user(user_text(branch_prefix + string_at(m, "summary") + branch_suffix), id);
  } else if (role == "compactionSummary") {
    user(user_text(compaction_prefix + string_at(m, "summary") + compaction_suffix), id);
  } else if (role == "system") {
    ++system_messages_;
  } else {
    ++unknown_roles_;
  }
}

void session_replay::append(const ojson* m, const std::string& id) {
  context_.push_back({id, m});
  if (conversation_ && !stale_) conversation_->add(*m);
}

std::optional<pi_api> session_replay::api_for(const ojson& m) {
  const auto api = string_at(m, "api", api_), provider = string_at(m, "provider", provider_);
  if (auto known = pi_api_of(api, provider)) return known;
  ++guessed_apis_[api.empty() ? provider.empty() ? "(none)" : "provider " + provider : api];
  return std::nullopt;
}

// A turn: the context so far is what was sent. An errored or aborted answer
// was still a request, but pi leaves it out of the context after.
void session_replay::assistant(const ojson& m, const std::string& id) {
  // Most APIs pi does not name here are OpenAI-compatible (Mistral, local servers).
  const auto api = api_for(m).value_or(pi_api::chat);
  if (!context_.empty()) {
    if (!conversation_ || stale_ || conversation_->api() != api) {
      conversation_.emplace(trace_, api);
      for (const auto& c : context_) conversation_->add(*c.message);
      stale_ = false;
    }
    conversation_->request(string_at(m, "model", model_));
  }
  const auto stop = string_at(m, "stopReason");
  if (stop == "error" || stop == "aborted") return void(++skipped_turns_);
  append(&m, id);
}

// pi's context after a compaction: its summary, then the entries from
// firstKeptEntryId on (none when it names the compaction itself).
void session_replay::compaction(const ojson& entry) {
  const auto first_kept = string_at(entry, "firstKeptEntryId");
  auto kept = std::find_if(context_.begin(), context_.end(), [&](const auto& c) { return c.entry_id == first_kept; });
  std::vector<context_message> next = {{string_at(entry, "id"),
                                        own(user_text(compaction_prefix + string_at(entry, "summary") + compaction_suffix))}};
  next.insert(next.end(), kept, context_.end());
  context_ = std::move(next);
  stale_ = true;
}

// A context edit drops an earlier entry's message (replacement null) or
// swaps its content.
void session_replay::context_edit(const ojson& entry) {
  const auto target = string_at(entry, "targetId");
  const auto& replacement = checked::member(entry, "replacement");
  for (auto it = context_.begin(); it != context_.end(); ++it) {
    if (it->entry_id != target) continue;
    if (!replacement.is_object()) {
      context_.erase(it);
    } else {
      ojson edited = *it->message;
      edited["content"] = checked::member(replacement, "content");
      it->message = own(std::move(edited));
    }
    stale_ = true;
    return;
  }
}

void session_replay::finish() {
  if (skipped_turns_)
    trace_.notes.push_back(std::to_string(skipped_turns_) +
                           " errored or aborted answer(s): replayed as requests, left out of the context after, as pi does");
  if (system_messages_)
    trace_.notes.push_back(std::to_string(system_messages_) +
                           " system message(s) (pi's system prompt and tools) not rebuilt: the agent's head estimate stands in");
  if (unknown_roles_)
    trace_.notes.push_back(std::to_string(unknown_roles_) + " message(s) of a role replay does not know: skipped");
  for (const auto& [api, n] : guessed_apis_)
    trace_.notes.push_back(std::to_string(n) + " turn(s) sent with " + api +
                           ", which replay does not rebuild: rebuilt as Chat Completions");
}

// --- the session file's tree ------------------------------------------------------

bool has_id(const ojson& e) { return is_str(e, "id"); }

// The entries of the conversation as it stands: the path from the last
// entry back to the root. v1 files (no ids) are linear: every entry.
std::vector<const ojson*> leaf_path(const std::vector<ojson>& lines, recorded_trace& t) {
  std::vector<const ojson*> path;
  std::unordered_map<std::string, const ojson*> by_id;
  const ojson* leaf = nullptr;
  for (std::size_t i = 1; i < lines.size(); ++i)
    if (has_id(lines[i])) by_id[lines[i]["id"].get<std::string>()] = leaf = &lines[i];
  if (!leaf) {
    for (std::size_t i = 1; i < lines.size(); ++i) path.push_back(&lines[i]);
    return path;
  }
  // Bounded by the entries: a parentId cycle (a hand-edited file) ends the walk.
  for (const ojson* e = leaf; e && path.size() < by_id.size();) {
    path.push_back(e);
    const auto parent = string_at(*e, "parentId");
    if (parent.empty()) break;
    auto it = by_id.find(parent);
    if (it == by_id.end()) {
      t.notes.push_back("entry " + string_at(*e, "id") + "'s parent " + parent +
                        " is not in the file (a line lost?): the turns before it are not replayed");
      break;
    }
    e = it->second;
  }
  std::reverse(path.begin(), path.end());
  if (const auto off = by_id.size() - path.size(); off > 0)
    t.notes.push_back(std::to_string(off) + " entries on other branches (left with /tree) not replayed: only the path to the last entry is");
  return path;
}

void replay_entry(session_replay& r, const ojson& e) {
  const auto type = string_at(e, "type"), id = string_at(e, "id");
  if (type == "message" && is_obj(e, "message")) r.message(e["message"], id);
  else if (type == "custom_message") r.user(custom_content(checked::member(e, "content")), id);
  else if (type == "branch_summary") r.user(user_text(branch_prefix + string_at(e, "summary") + branch_suffix), id);
  else if (type == "compaction") r.compaction(e);
  else if (type == "context_edit") r.context_edit(e);
  // model_change, thinking_level_change, usage, custom, label, session_info
  // and types added later do not reach the model.
}

// --- the document -----------------------------------------------------------------

bool is_pi_message(const ojson& m) {
  const auto role = string_at(m, "role");
  if (role == "toolResult" || role == "bashExecution" || role == "compactionSummary" || role == "branchSummary") return true;
  if (role != "assistant") return false;
  if (is_str(m, "api") && is_str(m, "stopReason")) return true;
  for (const auto& b : checked::array_at(m, "content"))
    if (checked::string_is(b, "type", "toolCall") || checked::string_is(b, "type", "thinking")) return true;
  return false;
}

// The document's model is a string or a pi Model object {id, provider, api, ...}.
std::string document_model(const ojson& doc) {
  const auto& model = checked::member(doc, "model");
  return model.is_string() ? model.get<std::string>() : string_at(model, "id", "unknown");
}

std::string document_provider(const ojson& doc) {
  return is_str(doc, "provider") ? doc["provider"].get<std::string>() : string_at(checked::member(doc, "model"), "provider");
}

}  // namespace

bool is_pi_session(const std::vector<ojson>& lines) {
  return !lines.empty() && checked::string_is(lines.front(), "type", "session") && has_id(lines.front());
}

bool is_pi_document(const ojson& j) {
  if (!is_arr(j, "messages")) return false;
  for (const auto& m : j["messages"])
    if (is_pi_message(m)) return true;
  return false;
}

void read_pi_session(const std::vector<ojson>& lines, recorded_trace& t) {
  t.format = "pi";
  t.rebuilt = true;  // even with no turn: pi's files never hold a request as sent
  session_replay r(t, "unknown", "", "");
  for (const ojson* e : leaf_path(lines, t)) replay_entry(r, *e);
  r.finish();
}

void read_pi_document(const ojson& doc, recorded_trace& t) {
  t.format = "pi";
  t.rebuilt = true;
  session_replay r(t, document_model(doc), document_provider(doc), string_at(checked::member(doc, "model"), "api"));
  const auto& messages = checked::array_at(doc, "messages");
  for (std::size_t i = 0; i < messages.size(); ++i)
    if (messages[i].is_object()) r.message(messages[i], "m" + std::to_string(i));
  r.finish();
}

}  // namespace gistproxy::rewrite::trace_readers
