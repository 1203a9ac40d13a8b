#include "rewrite/dialects/vertex/vertex_endpoints.hpp"

#include <nlohmann/json.hpp>

#include "rewrite/dialects/cloud_path.hpp"
#include "rewrite/json/checked.hpp"
#include "rewrite/request_target.hpp"

namespace gistproxy::rewrite {

namespace {

// Splits `rest` into exactly N '/'-separated, non-empty segments.
template <std::size_t N>
bool segments(std::string_view rest, std::string_view (&parts)[N]) {
  for (auto& part : parts) {
    auto slash = rest.find('/');
    part = rest.substr(0, slash);
    if (part.empty()) return false;
    rest = slash == std::string_view::npos ? std::string_view{} : rest.substr(slash + 1);
  }
  return rest.empty();
}

}  // namespace

// /{v1|v1beta1}/projects/{p}/locations/{l}/publishers/{publisher}/models/{model}:{verb},
// or Vertex's express mode (an API key, no project): /{v1|v1beta1}/publishers/{publisher}/models/{model}:{verb}
bool vertex_endpoint::split(std::string_view path, std::string_view& model, std::string_view& verb) const {
  // Every request is asked this (clouds are matched first): most paths fail here, cheaply.
  if (!path.starts_with("/v1/p") && !path.starts_with("/v1beta1/p")) return false;
  std::string_view rest;
  for (std::string_view version : {"/v1/", "/v1beta1/"})
    if (path.starts_with(version)) rest = path.substr(version.size());
  std::string_view last;
  if (std::string_view p[8]; rest.starts_with("projects/") && segments(rest, p)) {
    if (p[2] != "locations" || p[4] != "publishers" || p[5] != paths_.publisher || p[6] != "models") return false;
    last = p[7];
  } else if (std::string_view e[4]; rest.starts_with("publishers/") && segments(rest, e)) {
    if (e[1] != paths_.publisher || e[2] != "models") return false;
    last = e[3];
  } else {
    return false;
  }
  const auto colon = last.rfind(':');
  if (colon == std::string_view::npos || colon == 0) return false;
  model = last.substr(0, colon);
  verb = last.substr(colon + 1);
  return verb == paths_.unstreamed || verb == paths_.streamed;
}

bool vertex_endpoint::serves_path(std::string_view path) const {
  std::string_view model, verb;
  return split(path, model, verb);
}

bool vertex_endpoint::counts_tokens_at(std::string_view path) const {
  if (!paths_.count_model.empty()) {
    std::string_view model, verb;
    return split(path, model, verb) && model == paths_.count_model;
  }
  if (paths_.count_verb.empty()) return false;
  return path.ends_with(":" + std::string(paths_.count_verb)) &&
         path.find("/publishers/" + std::string(paths_.publisher) + "/models/") != std::string_view::npos;
}

namespace {

constexpr path_claim vertex_claims[] = {{"/v1beta1/"}, {"/v1/projects/"}, {"/v1/publishers/"}};
// Express mode takes Google's API keys (OAuth tokens travel as Bearer).
constexpr credential_kind vertex_credentials[] = {credential_kind::google_key};
constexpr upstream_family vertex{
    .name = "vertex", .default_url = {}, .paths = vertex_claims, .credentials = vertex_credentials, .gateway_mount = "/vertex_ai"};

}  // namespace

const upstream_family& vertex_family() { return vertex; }

std::string vertex_endpoint::request_path(std::string_view model) const {
  return "/v1/projects/project/locations/us-east5/publishers/" + std::string(paths_.publisher) + "/models/" +
         cloud_path::percent_encoded(model.empty() ? std::string_view("model") : model) + ":" + std::string(paths_.unstreamed);
}

void vertex_endpoint::inspect_target(std::string_view target, request_facts& facts) const {
  if (hosted_target_) hosted_target_(target, facts);  // Gemini reads alt=sse there
  std::string_view model, verb;
  if (!split(path_of(target), model, verb)) return;
  facts.model = std::string(model);
  facts.stream = facts.stream || verb == paths_.streamed;
}

// Claude on Vertex says so in its body: anthropic_version "vertex-…".
int vertex_endpoint::request_affinity(const nlohmann::json& body) const {
  return checked::string_at(body, "anthropic_version").starts_with("vertex-") && paths_.publisher == "anthropic" ? 4 : 0;
}

}  // namespace gistproxy::rewrite
