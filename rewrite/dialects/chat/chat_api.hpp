// OpenAI Chat Completions: POST …/chat/completions, tool outputs are role:"tool" messages.
// Its wire format, and OpenAI's endpoint for it (Azure's: azure/).
#pragma once

#include "rewrite/dialects/openai_family.hpp"
#include "rewrite/endpoint.hpp"

namespace gistproxy::rewrite {

class chat_wire final : public wire_format {
 public:
  // The system prompt is a message: tools, then the messages. Gateways that
  // serve Claude behind this API take Anthropic's cache_control markers.
  prefix_layout cache_prefix() const override {
    return {.head = {"tools"}, .conversation = "messages", .provider_state = {}, .cache_marker = "cache_control", .uncached_text = {}};
  }
  std::string_view operation_name() const override { return "chat"; }
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

class chat_endpoint final : public endpoint {
 public:
  using endpoint::endpoint;
  std::string_view name() const override { return "chat"; }
  bool serves_path(std::string_view path) const override;
  std::string request_path(std::string_view model) const override;
  const upstream_family& upstream() const override { return openai_family(); }
  std::string_view provider_name() const override { return "openai"; }
  int request_affinity(const nlohmann::json& body) const override;
};

}  // namespace gistproxy::rewrite
