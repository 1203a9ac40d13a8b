// What an LLM API speaks: its request bodies, answers, streams and usage.
// One wire format per API (OpenAI Chat Completions, OpenAI Responses,
// Anthropic Messages, Gemini generateContent, Bedrock Converse, and Claude on
// Bedrock's InvokeModel, whose bodies and streams differ from Anthropic's).
// Where a request goes and as whom (paths, the model named in a path,
// credentials, the upstream, the signer) is the endpoint's (endpoint.hpp): a
// cloud hosting an API is an endpoint over that API's wire format.
#pragma once

#include <algorithm>
#include <cstdint>
#include <forward_list>
#include <memory>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include <nlohmann/json_fwd.hpp>

#include "rewrite/json/scanner.hpp"
#include "rewrite/prompt_cache/prefix_fingerprint.hpp"
#include "rewrite/turn_memory/remembered_items.hpp"
#include "rewrite/usage/usage_fields.hpp"

namespace gistproxy::rewrite {

class stream_filter;
class top_level_memo;  // json/splice.hpp

// How a streamed answer's events travel.
enum class stream_transport : std::uint8_t {
  sse,  // text/event-stream
  // AWS event-stream (application/vnd.amazon.eventstream) binary messages:
  eventstream_wrapped,  // each payload {"bytes": base64 of one event's JSON, named by its "type"} (InvokeModel)
  eventstream_typed,    // each payload is the event's JSON, named by the :event-type header (Converse)
};

// What the proxy learns from a request body without changing it.
struct request_facts {
  std::string model;
  bool stream = false;
  // Whether gistproxy can read the answer to intercept read_blob calls. Not
  // for answers delivered where it cannot follow them (a Gemini stream as a
  // JSON array, a Responses background request polled later): such requests
  // are forwarded untouched, never offered read_blob.
  bool answer_interceptable = true;
  // The conversation's opening as the client sent it (API, system prompt,
  // first user message): every turn of one conversation has the same key.
  std::string conversation_key;
};

// Token usage as the provider reported it; -1 where it did not. Input tokens
// include the prompt-cache reads and writes (the OpenTelemetry GenAI
// conventions' reading, and what OpenAI and Gemini report). Cache reads are 0,
// not -1, when an API that reports them had none; only Anthropic reports
// cache writes (OpenAI and Gemini bill no write premium).
struct token_usage {
  std::int64_t input_tokens = -1;
  std::int64_t output_tokens = -1;
  std::int64_t cache_read_tokens = -1;
  std::int64_t cache_write_tokens = -1;
  bool known() const { return input_tokens >= 0 || output_tokens >= 0; }
  // Input tokens that were neither read from nor written to the cache.
  std::int64_t uncached_input_tokens() const {
    if (input_tokens < 0) return -1;
    auto rest = input_tokens - std::max<std::int64_t>(cache_read_tokens, 0) - std::max<std::int64_t>(cache_write_tokens, 0);
    return std::max<std::int64_t>(rest, 0);
  }
};

// One tool output found in a request body, in conversation order.
struct tool_output {
  std::size_t order = 0;     // 0 = oldest
  // Views: into the scan's own copies (request_scan::keep) or into the
  // previous turn's record the output was replayed from, which the turn's
  // reuse holds for as long as the scan is used.
  std::string_view tool_name;  // from the matching tool call; empty if not found
  std::string_view call_id;
  json::range value;         // the JSON value a reference replaces
  std::string_view raw;      // text outputs: the string's escaped contents;
                             // images: the base64 data
  bool image = false;        // value is a whole image block (Anthropic)
  std::string_view media_type;  // images only
  bool inner = false;        // value is raw only, inside a string that keeps a header (Cline text results)
};

struct request_scan {
  request_scan() = default;
  // Not copyable: its outputs view strings it keeps (a copy's would still
  // point into the original).
  request_scan(const request_scan&) = delete;
  request_scan& operator=(const request_scan&) = delete;
  request_scan(request_scan&&) = default;  // a forward_list's nodes stay where they are
  request_scan& operator=(request_scan&&) = default;
  // A copy of `s` that lives as long as this scan (outputs view it).
  std::string_view keep(std::string_view s) { return s.empty() ? s : kept_.emplace_front(s); }

  text_results text_results_from = text_results::none;  // input: which text-carried results to find
  // Input: the previous turn's items, reused within its first `same_bytes`
  // bytes; and where this scan's items are recorded (both may be null).
  const conversation_items* previous_items = nullptr;
  std::size_t same_bytes = 0;
  conversation_items* learn_items = nullptr;
  std::vector<tool_output> outputs;
  std::optional<json::range> tools;        // the "tools" array, if the client declared one
  std::vector<std::string> declared_tools; // their names
  std::vector<json::range> tool_ranges;     // each element of the tools array, in order
  // The object that holds the tools array, for an API that nests it (Converse's
  // toolConfig) when the body has that object: where a missing array goes.
  std::optional<json::range> tools_holder;
  std::size_t object_end = 0;              // offset of the body's closing '}'
  // The conversation list (messages, input, contents), when an array, and
  // where its second item starts (0 with fewer than two items).
  std::optional<json::range> conversation;
  std::size_t second_item_begin = 0;

 private:
  std::forward_list<std::string> kept_;
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

class wire_format {
 public:
  virtual ~wire_format() = default;
  // The request members a provider's prompt cache keys on, in its order:
  // what the live prefix check and replay's simulated cache both read.
  virtual prefix_layout cache_prefix() const = 0;
  // The top-level request member that carries the conversation (messages,
  // input, ...): how replay tells a bare request body's API.
  std::string_view conversation_member() const { return cache_prefix().conversation; }
  // The cache-read price over the cache-write price (or the input price where
  // the API bills no writes) of this API's usual models: the cost model's
  // ratio for a model without a price.
  virtual double usual_cache_read_ratio() const { return 0.1; }
  // OpenTelemetry GenAI operation (chat, generate_content).
  virtual std::string_view operation_name() const = 0;

  // Reads model, stream flag and conversation key; nullopt if the body is not
  // a JSON object this wire format understands (the proxy then forwards untouched).
  virtual std::optional<request_facts> inspect(json::document body) const = 0;
  // Finds the client's tool outputs and tools; false if the body does not parse.
  virtual bool scan(json::document body, request_scan& out) const = 0;
  // The read_blob tool definition in this API's format (one JSON object).
  virtual std::string read_blob_tool(std::string_view name) const = 0;
  // A JSON value to put where an image block was (Anthropic: a text block).
  virtual std::string image_replacement(std::string_view text) const;
  // How a body whose scan found no tools array gets one holding `definition`
  // (read_blob's, from read_blob_tool): the text to insert and where. By
  // default a top-level "tools" member before the body's closing '}'; an API
  // that nests its tools (Converse's toolConfig.tools) says where they go.
  struct insertion {
    std::size_t at = 0;
    std::string text;
  };
  virtual insertion tools_insertion(std::string_view body, const request_scan& scan, std::string_view definition) const;

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

  // Request members this API echoes back in its answers (Responses: tools,
  // tool_choice), as the client sent them: the client is given back its own,
  // never read_blob's definition or a last hop's tool_choice. An object of
  // member name to value; empty for APIs that echo nothing. `top` reads the
  // body's top level (only an API that echoes walks the body); a duplicated
  // member's last value counts.
  virtual nlohmann::json echoed_members(std::string_view client_body, top_level_memo& top) const;

  // The response member holding usage ("usage"): summed over page-in hops.
  virtual std::string_view usage_member() const { return "usage"; }
  // Usage from a complete JSON response body (only its usage member is parsed).
  token_usage usage_from_response(std::string_view body) const;
  // Usage from a parsed JSON object holding "usage".
  token_usage usage_from_response(const nlohmann::json& body) const;
  // Usage from the integer members of this API's usage object.
  virtual token_usage usage_from_fields(const usage_fields& usage) const = 0;
  // Folds usage from one SSE event of a streamed response into `usage`.
  virtual void usage_from_event(std::string_view event, std::string_view data, token_usage& usage) const = 0;

  // Whether this API also speaks over a WebSocket the client opens on its
  // path (the Responses API's WebSocket mode: rewrite/dialects/responses/
  // responses_socket), whose messages the transport maps onto this wire
  // format's requests and SSE events.
  virtual bool speaks_over_socket() const { return false; }
  // How this API's streamed answers frame their events (SSE unless said).
  virtual stream_transport answer_stream_transport() const { return stream_transport::sse; }
  // Streams: the filter that splices page-in hops into one client stream
  // (nullptr: streamed answers pass through untouched).
  virtual std::unique_ptr<stream_filter> make_stream_filter(std::string tool_name) const = 0;
  // A streamed answer assembled into the JSON the API returns unstreamed
  // (recordings keep one response per exchange); nullopt when it holds no
  // event of this API.
  virtual std::optional<nlohmann::json> assemble_stream(std::string_view sse_text) const = 0;
};

// Sets each member of `echoed` that `response` (an answer object) carries;
// true when that changed it.
bool restore_echoed(nlohmann::json& response, const nlohmann::json& echoed);

}  // namespace gistproxy::rewrite
