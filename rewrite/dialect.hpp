// One adapter per LLM API dialect (OpenAI Chat Completions, OpenAI Responses,
// Anthropic Messages) behind one interface. The proxy asks the registry which
// dialect a request speaks, then talks only to this interface.
#pragma once

#include <cstdint>
#include <optional>
#include <string>
#include <string_view>

#include <nlohmann/json_fwd.hpp>
#include <vector>

#include "rewrite/json/scanner.hpp"

namespace gistproxy::rewrite {

enum class api_kind { chat, responses, messages };

// What the proxy learns from a request body without changing it.
struct request_facts {
  std::string model;
  bool stream = false;
  // The conversation's opening as the client sent it (API, system prompt,
  // first user message): every turn of one conversation has the same key.
  std::string conversation_key;
};

// Token usage as the provider reported it; -1 where it did not.
struct token_usage {
  std::int64_t input_tokens = -1;
  std::int64_t output_tokens = -1;
  bool known() const { return input_tokens >= 0 || output_tokens >= 0; }
};

// One tool output found in a request body, in conversation order.
struct tool_output {
  std::size_t order = 0;     // 0 = oldest
  std::string tool_name;     // from the matching tool call; empty if not found
  std::string call_id;
  json::range value;         // the JSON value a reference replaces
  std::string_view raw;      // text outputs: the string's escaped contents;
                             // images: the base64 data
  bool image = false;        // value is a whole image block (Anthropic)
  std::string media_type;    // images only
};

struct request_scan {
  std::vector<tool_output> outputs;
  std::optional<json::range> tools;        // the "tools" array, if the client declared one
  std::vector<std::string> declared_tools; // their names
  std::size_t object_end = 0;              // offset of the body's closing '}'
};

// A read_blob call the model made, as found in an upstream response.
struct blob_call {
  std::string id;         // the API's call id (tool_call id, call_id, tool_use id)
  std::string arguments;  // JSON text of the arguments
};

struct response_calls {
  std::vector<blob_call> blob_calls;
  std::size_t client_calls = 0;  // calls of the client's own tools in the same turn
};

struct call_result {
  std::string id;
  std::string text;
  bool is_error = false;
};

class dialect {
 public:
  virtual ~dialect() = default;
  virtual api_kind kind() const = 0;
  // Short name used in metrics labels and logs: chat, responses, messages.
  virtual std::string_view name() const = 0;
  // OpenTelemetry GenAI attributes.
  virtual std::string_view operation_name() const = 0;
  virtual std::string_view provider_name() const = 0;

  // Reads model, stream flag and conversation key; nullopt if the body is not
  // a JSON object this dialect understands (the proxy then forwards untouched).
  virtual std::optional<request_facts> inspect(std::string_view body) const = 0;
  // Finds the client's tool outputs and tools; false if the body does not parse.
  virtual bool scan(std::string_view body, request_scan& out) const = 0;
  // The read_blob tool definition in this API's format (one JSON object).
  virtual std::string read_blob_tool(std::string_view name) const = 0;
  // A JSON value to put where an image block was (Anthropic: a text block).
  virtual std::string image_replacement(std::string_view text) const;

  // read_blob calls in a complete JSON response.
  virtual response_calls find_blob_calls(const nlohmann::json& response, std::string_view tool_name) const = 0;
  // Removes the read_blob calls from a final answer whose model ignored the
  // last hop's tool_choice, so the client never sees a tool it did not define
  // (the turn then ends as if the model had answered: stop / end_turn).
  virtual void remove_blob_calls(nlohmann::json& response, std::string_view tool_name) const = 0;
  // The next hop's request: the forwarded body with the assistant turn (its
  // read_blob calls only; client calls are dropped, the model re-issues them)
  // and the tool results appended. On the last hop, tool_choice forbids more
  // tool calls. The tools array stays byte-identical. nullopt if the body
  // does not have the expected shape.
  virtual std::optional<std::string> continue_conversation(std::string_view body, const nlohmann::json& response,
                                                           std::string_view tool_name,
                                                           const std::vector<call_result>& results,
                                                           bool last_hop) const = 0;

  // Usage from a complete JSON response body (only its "usage" member is parsed).
  token_usage usage_from_response(std::string_view body) const;
  // Usage from a parsed JSON object holding "usage".
  virtual token_usage usage_from_response(const nlohmann::json& body) const = 0;
  // Folds usage from one SSE event of a streamed response into `usage`.
  virtual void usage_from_event(std::string_view event, std::string_view data, token_usage& usage) const = 0;
};

// The dialect for a request, matched on the path (query ignored: Claude Code
// posts to /v1/messages?beta=true); nullptr when none applies.
const dialect* dialect_for(std::string_view method, std::string_view target);

}  // namespace gistproxy::rewrite
