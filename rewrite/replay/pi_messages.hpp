// Internal to rewrite/replay (pi_session.cpp): the pi coding agent's LLM
// messages turned into one API's conversation items the way pi's own
// providers send them (@earendil-works/pi-ai 1.6.0, dist/api/*.js and
// transform-messages.js). A pi message is
//   {role: "user", content: string | [text|image]}
//   {role: "assistant", content: [text|thinking|toolCall], api, provider, model, stopReason}
//   {role: "toolResult", toolCallId, toolName, content: [text|image], isError}
// Tool results keep their text byte for byte: they are what replay offloads.
#pragma once

#include <optional>
#include <string>
#include <utility>
#include <vector>

#include "rewrite/replay/trace_readers.hpp"

namespace gistproxy::rewrite::trace_readers {

// The APIs pi's messages are rebuilt into (pi's `api` names more; see pi_api_of).
enum class pi_api { messages, chat, responses, gemini };

// The API an assistant message's `api` (else `provider`) names; nullopt when
// neither is one replay knows.
std::optional<pi_api> pi_api_of(const std::string& api, const std::string& provider);

// One conversation in one API: messages in, requests cut. Holds back what
// the API groups into one message (a run of tool results) until the next
// message or request, and answers tool calls left unanswered as pi does
// ("No result provided") before a new user or assistant message.
class pi_conversation {
 public:
  pi_conversation(recorded_trace& t, pi_api api);
  pi_api api() const { return api_; }
  void add(const ojson& message);
  // A request for the messages so far, as `model` was called.
  void request(const std::string& model);

 private:
  void add_user(const ojson& content);
  void add_assistant(const ojson& message);
  void add_tool_result(const ojson& message);
  void close_open_calls();
  void flush();

  recorded_trace& trace_;
  pi_api api_;
  conversation_builder items_;
  ojson pending_ = ojson::array();  // tool results (or their images) the API sends as one message
  std::vector<std::pair<std::string, std::string>> open_calls_;  // id, name: calls not yet answered
  std::size_t message_count_ = 0;  // pi names Responses message items it has no id for by their index
};

}  // namespace gistproxy::rewrite::trace_readers
