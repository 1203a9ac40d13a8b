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
// alone (README, "AWS Bedrock"; proxy/exchange/aws_signing.cpp).
#pragma once

#include "rewrite/dialects/hosted/hosted_dialect.hpp"

namespace gistproxy::rewrite {

class bedrock_messages_dialect final : public hosted_dialect {
 public:
  using hosted_dialect::hosted_dialect;
  std::string_view name() const override { return "bedrock-messages"; }
  bool serves_path(std::string_view path) const override;
  std::string request_path(std::string_view model) const override;
  upstream_family upstream() const override { return bedrock_family(); }
  credential_fields credentials() const override { return {{"authorization"}, {}}; }
  std::string_view provider_name() const override { return "aws.bedrock"; }
  int request_affinity(const nlohmann::json& body) const override;
  std::optional<request_facts> inspect(json::document body) const override;
  void inspect_target(std::string_view target, request_facts& facts) const override;
  stream_transport answer_stream_transport() const override { return stream_transport::eventstream_wrapped; }

  // Bedrock Runtime: one upstream for InvokeModel and Converse, SigV4 service "bedrock".
  static upstream_family bedrock_family() { return {"bedrock", {}, "bedrock"}; }
};

// The model id of a /model/{modelId}/… path, decoded; empty when not one.
std::string bedrock_model_of(std::string_view path);

}  // namespace gistproxy::rewrite
