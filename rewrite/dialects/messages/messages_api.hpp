// Anthropic Messages: POST …/messages, tool outputs are tool_result content blocks.
// Its wire format (Bedrock InvokeModel's variant: bedrock/), and Anthropic's
// endpoint for it (Vertex AI's: vertex/, Bedrock's: bedrock/).
#pragma once

#include "rewrite/endpoint.hpp"

namespace gistproxy::rewrite {

// Claude Code's first system block: billing attribution with a checksum
// (cch=…) that differs on every request. Not prompt: Anthropic takes it out
// before caching, and it says nothing of which conversation this is.
inline constexpr std::string_view billing_header = "x-anthropic-billing-header:";

class messages_wire : public wire_format {
 public:
  // Anthropic: reads 0.1x, writes 1.25x the input price.
  double usual_cache_read_ratio() const override { return 0.1 / 1.25; }
  // Anthropic caches tools, then system, then messages.
  prefix_layout cache_prefix() const override {
    return {.head = {"tools", "system"},
            .conversation = "messages",
            .provider_state = {},
            .cache_marker = "cache_control",
            .uncached_text = billing_header};
  }
  std::string_view operation_name() const override { return "chat"; }
  std::string image_replacement(std::string_view text) const override;
  std::optional<request_facts> inspect(json::document body) const override;
  bool scan(json::document body, request_scan& out) const override;
  std::string read_blob_tool(std::string_view name) const override;
  void remove_blob_calls(nlohmann::json& response, std::string_view tool_name) const override;
  response_calls find_blob_calls(const nlohmann::json& response, std::string_view tool_name) const override;
  std::optional<std::string> continue_conversation(std::string_view body, const nlohmann::json& response,
                                                   std::string_view tool_name, const std::vector<call_result>& results,
                                                   bool last_hop) const override;
  token_usage usage_from_fields(const usage_fields& usage) const override;
  void usage_from_event(std::string_view event, std::string_view data, token_usage& usage) const override;
  std::unique_ptr<stream_filter> make_stream_filter(std::string tool_name) const override;
  std::optional<nlohmann::json> assemble_stream(std::string_view sse_text) const override;
};

// Anthropic's family: the Messages API and the rest of Anthropic's, keyed by x-api-key.
const upstream_family& anthropic_family();

class messages_endpoint final : public endpoint {
 public:
  using endpoint::endpoint;
  std::string_view name() const override { return "messages"; }
  bool serves_path(std::string_view path) const override;
  std::string request_path(std::string_view model) const override;
  const upstream_family& upstream() const override { return anthropic_family(); }
  // POST …/messages/count_tokens, over a Messages body.
  bool counts_tokens_at(std::string_view path) const override;
  std::string_view provider_name() const override { return "anthropic"; }
  int request_affinity(const nlohmann::json& body) const override;
};

}  // namespace gistproxy::rewrite
