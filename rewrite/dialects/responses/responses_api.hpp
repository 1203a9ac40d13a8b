// OpenAI Responses: POST …/responses, tool outputs are function_call_output input items.
// Its wire format, and OpenAI's endpoint for it (Azure's: azure/).
#pragma once

#include "rewrite/dialects/openai_family.hpp"
#include "rewrite/endpoint.hpp"

namespace gistproxy::rewrite {

class responses_wire final : public wire_format {
 public:
  // previous_response_id: the provider holds the conversation.
  prefix_layout cache_prefix() const override {
    return {.head = {"tools", "instructions"},
            .conversation = "input",
            .provider_state = "previous_response_id",
            .cache_marker = {},
            .uncached_text = {}};
  }
  std::string_view operation_name() const override { return "chat"; }
  nlohmann::json echoed_members(std::string_view client_body, top_level_memo& top) const override;
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
  // Responses' WebSocket mode: response.create messages, the SSE events' JSON back.
  bool speaks_over_socket() const override { return true; }
};

class responses_endpoint final : public endpoint {
 public:
  using endpoint::endpoint;
  std::string_view name() const override { return "responses"; }
  bool serves_path(std::string_view path) const override;
  std::string request_path(std::string_view model) const override;
  const upstream_family& upstream() const override { return openai_family(); }
  std::string_view provider_name() const override { return "openai"; }
  int request_affinity(const nlohmann::json& body) const override;
};

}  // namespace gistproxy::rewrite
