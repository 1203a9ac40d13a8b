// Google Gemini generateContent: POST …/models/{model}:generateContent, or
// …:streamGenerateContent?alt=sse (streaming is chosen by the path), under
// any version prefix (/v1beta/, /v1/). The model is named in the path, the
// key in x-goog-api-key (or ?key=).
//
// Tool outputs are functionResponse parts in contents[]. When `response` is
// an object whose single member is a string (what the SDKs send for a tool
// returning text, e.g. {"result": "…"}), that string is the output offloaded
// and the reference replaces it. Any other shape (several members, nested
// objects, numbers) stays inline: its bytes are structured data the client
// chose, and no single string of it is "the output".
//
// read_blob is offered as one more Tool of tools[] ({"functionDeclarations":
// [read_blob]}), after the client's own, byte-identical every turn. Gemini
// ends a turn that calls functions with finishReason STOP, so calls are found
// from the parts. A continued conversation appends the model's turn (its text
// and read_blob calls, each part as it came, thoughtSignature included) and a
// user turn of functionResponse parts.
//
// Its wire format, and Google AI's endpoint for it (Vertex AI's: vertex/).
#pragma once

#include "rewrite/endpoint.hpp"

namespace gistproxy::rewrite {

class gemini_wire final : public wire_format {
 public:
  double usual_cache_read_ratio() const override { return 0.25; }
  // The REST API takes the system instruction in either spelling.
  prefix_layout cache_prefix() const override {
    return {.head = {"tools", "systemInstruction", "system_instruction"},
            .conversation = "contents",
            .provider_state = {},
            .cache_marker = {},
            .uncached_text = {}};
  }
  std::string_view operation_name() const override { return "generate_content"; }

  std::optional<request_facts> inspect(json::document body) const override;
  bool scan(json::document body, request_scan& out) const override;
  std::string read_blob_tool(std::string_view name) const override;

  response_calls find_blob_calls(const nlohmann::json& response, std::string_view tool_name) const override;
  void remove_blob_calls(nlohmann::json& response, std::string_view tool_name) const override;
  std::optional<std::string> continue_conversation(std::string_view body, const nlohmann::json& response,
                                                   std::string_view tool_name, const std::vector<call_result>& results,
                                                   bool last_hop) const override;
  std::string_view usage_member() const override { return "usageMetadata"; }
  token_usage usage_from_fields(const usage_fields& usage) const override;
  void usage_from_event(std::string_view event, std::string_view data, token_usage& usage) const override;

  std::unique_ptr<stream_filter> make_stream_filter(std::string tool_name) const override;
  std::optional<nlohmann::json> assemble_stream(std::string_view sse_text) const override;
};

// Gemini's family (the Gemini Developer API), keyed by x-goog-api-key or ?key=.
const upstream_family& gemini_family();

class gemini_endpoint final : public endpoint {
 public:
  using endpoint::endpoint;
  std::string_view name() const override { return "gemini"; }
  bool serves_path(std::string_view path) const override;
  std::string request_path(std::string_view model) const override;
  void inspect_target(std::string_view target, request_facts& facts) const override { read_gemini_target(target, facts); }
  const upstream_family& upstream() const override { return gemini_family(); }
  // POST …/models/{model}:countTokens under /v1beta/ or /v1/: a generateContentRequest, wrapped.
  bool counts_tokens_at(std::string_view path) const override;
  bool wraps_counts() const override { return true; }
  std::optional<unwrapped_count> unwrap_count(std::string_view model, std::string_view body) const override;
  const credential_fields& credentials() const override {
    static const credential_fields fields{{"x-goog-api-key", "authorization"}, "key"};
    return fields;
  }
  std::string_view provider_name() const override { return "gcp.gemini"; }
  int request_affinity(const nlohmann::json& body) const override;

  // The model and the streaming mode a …/models/{model}:{verb} target names
  // (Vertex AI's Gemini paths have the same tail).
  static void read_gemini_target(std::string_view target, request_facts& facts);
};

}  // namespace gistproxy::rewrite
