// Google Vertex AI: Claude and Gemini under a project's publisher paths.
//   /v1/projects/{p}/locations/{l}/publishers/anthropic/models/{m}:rawPredict
//   …/publishers/anthropic/models/{m}:streamRawPredict   (Anthropic Messages
//     bodies with anthropic_version "vertex-2023-10-16" and no model; answers
//     and SSE streams are Anthropic's)
//   …/publishers/google/models/{m}:generateContent, :streamGenerateContent
//     (Gemini's bodies and answers)
// under /v1/ or /v1beta1/, or in express mode (an API key, no project)
// /v1beta1/publishers/google/models/{m}:generateContent. The model is the path's. OAuth bearer tokens pass
// through unchanged (Google does not sign bodies) and name the tenant.
#pragma once

#include "rewrite/endpoint.hpp"

namespace gistproxy::rewrite {

// Vertex AI's family: a project's region is the operator's, so no default host.
const upstream_family& vertex_family();

// What a hosted API's paths say after …/publishers/.
struct vertex_paths {
  std::string_view publisher;              // anthropic, google
  std::string_view unstreamed, streamed;   // the verbs after the model
  // Its token counts: a verb of their own after the model (Gemini's
  // countTokens, over a generateContent body), or a model the generate
  // verbs count at (Claude's count-tokens, over a Messages body).
  std::string_view count_verb = {}, count_model = {};
};

// An endpoint over Anthropic's or Gemini's wire format: Vertex's paths, keys and upstream.
class vertex_endpoint final : public endpoint {
 public:
  // What the hosted API reads from a target ending in its own path tail
  // (Gemini's …/models/{model}:{verb}?alt=sse), or nullptr.
  using target_reader = void (*)(std::string_view target, request_facts& facts);
  vertex_endpoint(const wire_format& wire, std::string_view name, vertex_paths paths, target_reader hosted_target = nullptr)
      : endpoint(wire), name_(name), paths_(paths), hosted_target_(hosted_target) {}
  std::string_view name() const override { return name_; }
  bool serves_path(std::string_view path) const override;
  std::string request_path(std::string_view model) const override;
  const upstream_family& upstream() const override { return vertex_family(); }
  bool counts_tokens_at(std::string_view path) const override;
  const credential_fields& credentials() const override {
    static const credential_fields fields{{"authorization", "x-goog-api-key"}, "key"};
    return fields;
  }
  std::string_view provider_name() const override { return "gcp.vertex_ai"; }
  int request_affinity(const nlohmann::json& body) const override;
  void inspect_target(std::string_view target, request_facts& facts) const override;

 private:
  // The model and the verb after it, when `path` is one of this endpoint's.
  bool split(std::string_view path, std::string_view& model, std::string_view& verb) const;
  std::string_view name_;
  vertex_paths paths_;
  target_reader hosted_target_;
};

}  // namespace gistproxy::rewrite
