// A scripted "model" for the mock upstream: given a request body of any of
// the APIs, decides what the model would answer, so tests can drive
// read_blob interception. The script is chosen by words in the first user
// message:
//   "agent reads PATH"  call the agent's own tool Read(file_path=PATH), then
//                       read_blob(handle, pattern="NEEDLE") on the reference its
//                       offloaded result became, then answer with the line
//   "find the needle"   call read_blob(handle, pattern="NEEDLE"), then answer
//                       with the matching line from the tool result
//   "two calls"         two read_blob calls in one turn (pattern and a range)
//   "with client call"  a read_blob call and a call of the client's tool "run"
//                       in one turn; after the result, only the "run" call
//   "loop forever"      read_blob again and again until tool_choice is none
//   "reread everything" read_blob(handle) on every reference in the request,
//                       whole, in one hop; then answer (a model that pages
//                       every offloaded output back on every turn)
//   "reread every other turn"  every reference on even turns, nothing on odd ones
//   "reread the first output"  output 1's reference on every turn, and the newest
//   "reread everything after turn N"  the newest while turn <= N, then every one
//   "reread the third output on turn N"  the newest, and on turn N the third
//                       reference again too (a stray re-read)
//                       (turn: the number of the client's tool results; "the
//                       newest": the last of them, when it is a reference)
//   "unknown handle"    read_blob("0000000000000000"), then echo the result
//   "fail second hop"   read_blob, then an HTTP 500 error answer
//   "hang second hop"   read_blob, then no answer until the proxy gives up
//   "slow second hop"   read_blob, then the answer after 1.5 s
//   "truncate second hop" read_blob, then a stream cut before its end-of-turn events
// A prompt holding "agent runs: [STEPS]" drives the agent's own tools, one
// step a turn (agent_plan.hpp; Messages, Chat and Responses), before all these.
// Gemini: a model turn whose read_blob call lost its thoughtSignature is
// answered with HTTP 400. Bedrock Converse has no tool choice that forbids
// tools: there "until tool_choice is none" means until the last user message
// ends with a text block after its results that begins "Do not call ".
// Anything else: a plain text answer.
#pragma once

#include <nlohmann/json.hpp>
#include <string>
#include <vector>

namespace gistproxy::testing {

enum class llm_api { chat, responses, messages, gemini, converse };

struct model_turn {
  std::string text;  // final text, if no calls
  struct call {
    std::string id, name;
    nlohmann::json arguments;
  };
  std::vector<call> calls;
  int status = 200;  // an error answer when not 200; 0: never answer
  int delay_ms = 0;  // wait before answering
  bool truncate = false;  // streams: stop before the end-of-turn events
};

// What the scripted model answers to this request.
model_turn script_model(llm_api api, const nlohmann::json& request);

// The API's JSON response for that turn (usage: 100 in / 10 out per hop).
// `request`: what was asked, for what the API echoes (Responses: its tools
// and tool_choice, as the real API puts them in every response object).
nlohmann::json render_response(llm_api api, const model_turn& turn, const std::string& model,
                               const nlohmann::json& request = nullptr);
// The same turn as an Anthropic Messages SSE stream (text and tool input split
// into several deltas, a ping first).
std::string render_messages_stream(const model_turn& turn, const std::string& model);
// As Chat Completions `data:` chunks ending in [DONE] (a usage chunk if asked).
std::string render_chat_stream(const model_turn& turn, const std::string& model, bool include_usage);
// As Responses events with sequence numbers (no [DONE]).
std::string render_responses_stream(const model_turn& turn, const std::string& model, const nlohmann::json& request = nullptr);
// The events of a whole Responses response object (a stored one replayed: GET ?stream=true).
std::string render_responses_events(const nlohmann::json& full);
// As Gemini streamGenerateContent?alt=sse events (CRLF-separated partial
// responses; calls in one event, the end of the turn with usage in the last).
std::string render_gemini_stream(const model_turn& turn, const std::string& model);

// As ConverseStream events in SSE form, the way the proxy's event-stream bridge
// hands them to a stream filter: each event named by its :event-type, its data
// the JSON payload (text without a contentBlockStart, tool input split into
// several toolUse.input deltas, usage in the last event, metadata).
std::string render_converse_stream(const model_turn& turn, const std::string& model);

// Which API an LLM request path speaks, as the real endpoints route it: the
// four APIs under any prefix, Claude on Vertex (:rawPredict,
// :streamRawPredict) and on Bedrock (/model/ID/invoke,
// /invoke-with-response-stream), Bedrock Converse (/model/ID/converse,
// /converse-stream). nullopt: not an LLM path.
struct llm_route {
  llm_api api = llm_api::chat;
  std::optional<bool> stream;  // when the path decides it (else the body's "stream")
  std::string model;           // when the path names it (decoded)
  bool eventstream = false;    // a streamed answer is AWS event-stream (Bedrock)
};
std::optional<llm_route> route_of(const std::string& path);

// Gemini: which API a path speaks, and the model it names.
bool is_gemini_path(const std::string& path);
std::string gemini_model_of(const std::string& path);
// Every read_blob call the mock's Gemini model makes carries this thoughtSignature;
// a continued conversation that does not pass it back on the same part is
// refused with HTTP 400, as Gemini 3 does.
std::string gemini_signature_of(const std::string& call_id);

// Bedrock Converse: whether a path is /model/{modelId}/converse (the JSON
// route; the streaming one, /converse-stream, is framed as event-stream).
bool is_converse_path(const std::string& path);

}  // namespace gistproxy::testing
