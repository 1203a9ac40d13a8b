// Claude on AWS Bedrock's InvokeModel:
//   POST /model/{modelId}/invoke                      (a JSON answer)
//   POST /model/{modelId}/invoke-with-response-stream (an AWS event-stream)
// Bodies are Anthropic Messages with anthropic_version "bedrock-2023-05-31"
// and no model: the model is the path's, URL-encoded (ARNs and inference
// profile ids carry ':' and '/'). A body without anthropic_version is another
// vendor's model on InvokeModel and is forwarded untouched. Answers are
// Anthropic's; a streamed answer is event-stream messages, each carrying one
// Anthropic stream event as base64 in {"bytes": …}.
//
// Credentials are a Bedrock API key (Authorization: Bearer), or a SigV4
// signature over the body: the proxy signs again or leaves such a request
// alone (README, "AWS Bedrock"; proxy/aws/aws_signing.cpp).
//
// A wire format of its own, over Anthropic's: a body must say
// anthropic_version (what tells Claude from the other vendors' models), and
// streamed answers travel as event-stream, not SSE; everything else is
// Anthropic's, inherited.
#pragma once

#include "rewrite/dialects/messages/messages_api.hpp"
#include "rewrite/endpoint.hpp"

namespace gistproxy::rewrite {

// Bedrock Runtime: one upstream for InvokeModel, Converse and the rest of
// Bedrock's API (guardrails, async invocations), SigV4 service "bedrock"; no
// default host (it is per region).
const upstream_family& bedrock_family();

class bedrock_messages_wire final : public messages_wire {
 public:
  std::optional<request_facts> inspect(json::document body) const override;
  stream_transport answer_stream_transport() const override { return stream_transport::eventstream_wrapped; }
};

// InvokeModel's endpoint for Claude.
class bedrock_invoke_endpoint final : public endpoint {
 public:
  using endpoint::endpoint;
  std::string_view name() const override { return "bedrock-messages"; }
  bool serves_path(std::string_view path) const override;
  std::string request_path(std::string_view model) const override;
  void inspect_target(std::string_view target, request_facts& facts) const override;
  const upstream_family& upstream() const override { return bedrock_family(); }
  const credential_fields& credentials() const override {
    static const credential_fields fields{{"authorization"}, {}};
    return fields;
  }
  std::string_view provider_name() const override { return "aws.bedrock"; }
  int request_affinity(const nlohmann::json& body) const override;
};

// The model id of a /model/{modelId}/… path, decoded; empty when not one.
std::string bedrock_model_of(std::string_view path);

}  // namespace gistproxy::rewrite
