// AWS Bedrock Converse: POST /model/{modelId}/converse, or
// /model/{modelId}/converse-stream (streaming is chosen by the path). The
// model is named in the path, percent-encoded (ARNs and inference-profile ids
// carry ':' and '/'); the credential is the Authorization header (a Bedrock
// API key as "Bearer …", or a SigV4 signature: proxy/aws/aws_signing).
// Streams are AWS event-stream messages, one per event, named by :event-type;
// rewrite/eventstream/eventstream_framing hands them to the stream filter as
// SSE events and encodes its output back.
//
// Content blocks are keyed by shape, not by a type member: {"text":…},
// {"toolUse":{toolUseId, name, input}}, {"toolResult":{toolUseId, content,
// status}}, {"cachePoint":{…}}. A toolResult's content is a list of items;
// each {"text": "…"} item's string is a tool output (the reference replaces
// that string). {"json": …}, image and document items are structured data
// the client chose and stay inline.
//
// The tools live in toolConfig.tools as {"toolSpec":{name, description,
// inputSchema:{json}}}; read_blob is one more toolSpec after the client's
// own, and a body without toolConfig (or without its tools) gets one
// (tools_insertion). Prompt caching keys on the tools, the system blocks and
// the messages in that order; cachePoint blocks mark breakpoints that clients
// move every turn, so they are the cache marker.
//
// A continued conversation appends the model's turn (its text, reasoning and
// read_blob toolUse blocks, as they came) and a user turn of toolResult
// blocks. Converse has no tool choice that forbids tools, and Bedrock refuses
// toolUse/toolResult blocks without a toolConfig, so the last hop keeps the
// tools byte-identical (the prompt cache keys on them) and only asks, in a
// text block after the results, for an answer without more reads; a model
// that calls read_blob anyway has the call removed (remove_blob_calls).
//
// Its wire format, and Bedrock Runtime's endpoint for it.
#pragma once

#include "rewrite/dialects/bedrock/bedrock_messages.hpp"
#include "rewrite/endpoint.hpp"

namespace gistproxy::rewrite {

class converse_wire final : public wire_format {
 public:
  // ConverseStream answers are AWS event-stream messages named by :event-type.
  stream_transport answer_stream_transport() const override { return stream_transport::eventstream_typed; }
  // Bedrock's Claude models: reads 0.1x, writes 1.25x the input price.
  double usual_cache_read_ratio() const override { return 0.1 / 1.25; }
  prefix_layout cache_prefix() const override {
    return {.head = {"toolConfig", "system"},
            .conversation = "messages",
            .provider_state = {},
            .cache_marker = "cachePoint",
            .uncached_text = {}};
  }
  std::string_view operation_name() const override { return "chat"; }

  std::optional<request_facts> inspect(json::document body) const override;
  bool scan(json::document body, request_scan& out) const override;
  std::string read_blob_tool(std::string_view name) const override;
  insertion tools_insertion(std::string_view body, const request_scan& scan, std::string_view definition) const override;

  response_calls find_blob_calls(const nlohmann::json& response, std::string_view tool_name) const override;
  void remove_blob_calls(nlohmann::json& response, std::string_view tool_name) const override;
  std::optional<std::string> continue_conversation(std::string_view body, const nlohmann::json& response,
                                                   std::string_view tool_name, const std::vector<call_result>& results,
                                                   bool last_hop) const override;
  token_usage usage_from_fields(const usage_fields& usage) const override;
  void usage_from_event(std::string_view event, std::string_view data, token_usage& usage) const override;

  std::unique_ptr<stream_filter> make_stream_filter(std::string tool_name) const override;
  std::optional<nlohmann::json> assemble_stream(std::string_view sse_text) const override;
};

class converse_endpoint final : public endpoint {
 public:
  // `invoke` reads the InvokeModel bodies Bedrock's CountTokens may wrap.
  converse_endpoint(const wire_format& wire, const endpoint& invoke) : endpoint(wire), invoke_(invoke) {}
  std::string_view name() const override { return "bedrock-converse"; }
  bool serves_path(std::string_view path) const override;
  std::string request_path(std::string_view model) const override;
  void inspect_target(std::string_view target, request_facts& facts) const override;
  const upstream_family& upstream() const override { return bedrock_family(); }
  // POST /model/{modelId}/count-tokens: a Converse or InvokeModel request, wrapped.
  bool counts_tokens_at(std::string_view path) const override;
  bool wraps_counts() const override { return true; }
  std::optional<unwrapped_count> unwrap_count(std::string_view model, std::string_view body) const override;
  const credential_fields& credentials() const override {
    static const credential_fields fields{{"authorization"}, {}};
    return fields;
  }
  std::string_view provider_name() const override { return "aws.bedrock"; }
  int request_affinity(const nlohmann::json& body) const override;

 private:
  const endpoint& invoke_;
};
// The text block the last hop adds after the read_blob results (Converse
// cannot forbid tool calls; this asks for an answer instead).
std::string converse_last_hop_notice(std::string_view tool_name);

// The model id in a Converse path (/model/{modelId}/converse…), percent-decoded;
// empty when the path names none, when it does not decode, or when it is not
// a plausible model id (longer than Bedrock's 2048 bytes, or bytes outside
// printable ASCII).
std::string converse_model_of(std::string_view path);

}  // namespace gistproxy::rewrite
