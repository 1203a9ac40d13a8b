// Recorded agent traffic in, the LLM requests it holds out: the input side of
// `gistproxy replay`. Pure logic (text in, requests out; the command reads the
// files). Formats are detected from the content:
//
//   gistproxy recording   serve --record JSONL ("gistproxy_record" lines)
//   HAR 1.2               log.entries[].request (mitmproxy, browsers)
//   claude-trace          JSONL request/response pairs recorded from Claude Code
//   vcr                   vcrpy cassettes (YAML): interactions[].request.body|parsed_body
//   claude-code           Claude Code session transcripts (JSONL, one content block per line)
//   openhands             OpenHands llm_completions (one JSON per call: messages + kwargs.tools)
//   openhands-output      OpenHands evaluation output.jsonl (one instance per line: its event history)
//   inspect               Inspect AI eval logs (samples[].events[model].call.request, attachments resolved)
//   swe-agent             SWE-agent .traj (history: the messages sent to the model)
//   mini-swe-agent        mini-swe-agent .traj.json (messages of the run, info.config.model.model_name)
//   tau-bench             tau-bench results: a list of runs, each a conversation (traj: chat messages)
//   cline                 Cline / Roo Code / Kilo Code api_conversation_history.json (Anthropic messages)
//   gemini-cli            Gemini CLI saved chats (checkpoint [{role, parts}] and session {messages})
//   codex                 Codex CLI rollouts (JSONL of Responses items; envelope and direct generations)
//   pi                    pi coding agent sessions (JSONL tree: the path to the last entry) and
//                         documents of pi messages ({schema, model, provider, usage, messages})
//   messages              any JSON array / JSONL of chat messages
//   request-bodies        any JSON array / JSONL of request bodies (chat, responses or messages)
//
// Where a format holds a message list rather than the bodies sent, each turn's
// request is rebuilt from the messages before the assistant message it produced.
#pragma once

#include <cstddef>
#include <memory>
#include <string>
#include <string_view>
#include <vector>

#include "rewrite/endpoint.hpp"

namespace gistproxy::rewrite {

// A conversation rebuilt from a message list is kept once for all its turns:
// its items (each message serialized) shared by every turn, and per turn the
// members around the list (model, tools, ... — shared while unchanged). A
// turn's body, `opening` + "[" + its first N items joined by "," + "]" +
// `closing`, is made only when the turn is replayed. Keeping every turn's body
// instead costs the square of the conversation (a 5,000-turn history is
// gigabytes); this costs its size.
struct rebuilt_frame {
  std::string opening;  // e.g. {"model":"m","messages":
  std::string closing;  // e.g. ,"tools":[...]}  or  }
};

struct recorded_request {
  const endpoint* api = nullptr;  // set for every request of a trace read
  std::string recorded_body;     // the request body as sent (empty when rebuilt)
  std::string forwarded;         // gistproxy recordings: what serve forwarded (else empty)
  int page_in_hops = 0;          // gistproxy recordings: read_blob hops the model needed
  // gistproxy recordings: handles the model read back whole (or most), which
  // replay tells its churn tracker as serve told its own.
  std::vector<std::string> read_backs;
  // gistproxy recordings: the conversation serve put the request in (32 hex:
  // its opening, the credential a trace does not keep, its chain of turns).
  std::string conversation_id;
  std::string target;            // the request path, where the trace kept it (a cloud names the model there)
  // Set when rebuilt from messages: the conversation's items, of which this
  // turn sends the first `rebuilt_count`, inside `frame`.
  std::shared_ptr<const std::vector<std::string>> rebuilt_items;
  std::shared_ptr<const rebuilt_frame> frame;
  std::size_t rebuilt_count = 0;

  // A request recorded as sent.
  static recorded_request as_sent(const endpoint* api, std::string body, std::string forwarded = {}, int hops = 0) {
    recorded_request r;
    r.api = api;
    r.recorded_body = std::move(body);
    r.forwarded = std::move(forwarded);
    r.page_in_hops = hops;
    return r;
  }
  // The request body as sent or rebuilt (a rebuilt one is made on each call).
  std::string body() const;
};

struct recorded_trace {
  std::string format;
  bool rebuilt = false;  // requests rebuilt from a message list (no system prompt/tools unless recorded)
  std::vector<recorded_request> requests;
  std::vector<std::string> notes;  // entries skipped and why
};

// The formats above, in the order detection tries them (the generic
// `messages` and `request-bodies` last): a name for --format and what
// identifies the format, for messages.
struct trace_format_info {
  std::string_view name;
  std::string_view looks_for;
};
const std::vector<trace_format_info>& trace_formats();

// Reads one file's content. With `format` empty the format is detected (the
// first whose marks the content has); otherwise that reader is used whatever
// an earlier format would have claimed, if the content has the shape it reads.
// Throws std::runtime_error naming what was looked for when neither holds.
recorded_trace read_trace(std::string_view text, std::string_view format = {});

// Every format whose detection marks the content has, in detection order:
// for tests that no two formats claim the same file.
std::vector<std::string> formats_claiming(std::string_view text);


}  // namespace gistproxy::rewrite
