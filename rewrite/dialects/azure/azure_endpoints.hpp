// Azure OpenAI: Chat Completions and Responses under Azure's paths.
//   /openai/deployments/{deployment}/chat/completions?api-version=…
//   /openai/deployments/{deployment}/responses?api-version=…
//   /openai/v1/chat/completions, /openai/v1/responses (the v1 API)
//   /openai/responses?api-version=… (where the openai SDK's AzureOpenAI posts Responses)
// Bodies, answers and streams are OpenAI's. The key is the api-key header or
// an Entra ID token in Authorization: Bearer; either names the tenant. A
// deployment names the model when the body has none (deployment paths
// usually send no model); --model-alias maps a deployment to the model it
// serves, for prices. The query string is forwarded byte for byte.
#pragma once

#include "rewrite/endpoint.hpp"

namespace gistproxy::rewrite {

// Azure OpenAI's family: every path under /openai/ (the resource's host is
// the operator's, so no default host), keyed by api-key.
const upstream_family& azure_family();

// An endpoint over OpenAI's wire formats: Azure's paths, keys and upstream.
class azure_endpoint final : public endpoint {
 public:
  // `operation` is the hosted API's path tail: "chat/completions" or "responses".
  azure_endpoint(const wire_format& wire, std::string_view name, std::string_view operation)
      : endpoint(wire), name_(name), operation_(operation) {}
  std::string_view name() const override { return name_; }
  bool serves_path(std::string_view path) const override;
  std::string request_path(std::string_view model) const override;
  const upstream_family& upstream() const override { return azure_family(); }
  const credential_fields& credentials() const override {
    static const credential_fields fields{{"api-key", "authorization"}, {}};
    return fields;
  }
  std::string_view provider_name() const override { return "azure.ai.openai"; }
  void inspect_target(std::string_view target, request_facts& facts) const override;
  // A bare body cannot be told from one sent to OpenAI.
  int request_affinity(const nlohmann::json&) const override { return 0; }

 private:
  std::string_view name_, operation_;
};

}  // namespace gistproxy::rewrite
