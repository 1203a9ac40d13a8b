#include "rewrite/dialects/bedrock/bedrock_messages.hpp"

#include <nlohmann/json.hpp>

#include "rewrite/dialects/cloud_path.hpp"
#include "rewrite/json/checked.hpp"
#include "rewrite/json/scanner.hpp"
#include "rewrite/request_target.hpp"

namespace gistproxy::rewrite {
namespace {

constexpr std::string_view model_prefix = "/model/";
constexpr std::string_view invoke = "/invoke";
constexpr std::string_view invoke_stream = "/invoke-with-response-stream";
// No model id is longer (an ARN is at most 2048 characters).
constexpr std::size_t max_model_id = 2048;

// The verb after /model/{modelId}: "/invoke", "/converse", ...; empty when not such a path.
std::string_view verb_of(std::string_view path) {
  const auto id = cloud_path::segment_after(path, model_prefix);
  if (id.empty() || id.size() > max_model_id) return {};
  return path.substr(model_prefix.size() + id.size());
}

// Whether the body is an object with a string anthropic_version member.
bool has_anthropic_version(json::document body) {
  json::cursor c(body);
  bool found = false;
  if (c.peek() != json::kind::object) return false;
  auto ok = c.object([&](std::string_view key, json::cursor& v) {
    found |= key == "anthropic_version" && v.peek() == json::kind::string;
    return v.skip_value().has_value();
  });
  return ok.has_value() && found;
}

constexpr path_claim bedrock_paths[] = {{model_prefix}, {"/guardrail/"}, {"/async-invoke/"}};
constexpr credential_kind bedrock_credentials[] = {credential_kind::aws_signature};
constexpr upstream_family bedrock{.name = "bedrock",
                                  .default_url = {},
                                  .sigv4_service = "bedrock",
                                  .paths = bedrock_paths,
                                  .credentials = bedrock_credentials,
                                  .gateway_mount = "/bedrock"};

}  // namespace

const upstream_family& bedrock_family() { return bedrock; }

std::string bedrock_model_of(std::string_view path) {
  return cloud_path::model_id(cloud_path::segment_after(path, model_prefix));
}

bool bedrock_invoke_endpoint::serves_path(std::string_view path) const {
  const auto verb = verb_of(path);
  return verb == invoke || verb == invoke_stream;
}

std::string bedrock_invoke_endpoint::request_path(std::string_view model) const {
  return std::string(model_prefix) + cloud_path::percent_encoded(model.empty() ? std::string_view("model") : model) +
         std::string(invoke);
}

std::optional<request_facts> bedrock_messages_wire::inspect(json::document body) const {
  // InvokeModel serves every vendor's models, each with its own body: only
  // Anthropic's say anthropic_version.
  if (!has_anthropic_version(body)) return std::nullopt;
  return messages_wire::inspect(body);
}

void bedrock_invoke_endpoint::inspect_target(std::string_view target, request_facts& facts) const {
  const auto path = path_of(target);
  facts.model = bedrock_model_of(path);
  facts.stream = verb_of(path) == invoke_stream;
}

// Claude on Bedrock says so in its body: anthropic_version "bedrock-…".
int bedrock_invoke_endpoint::request_affinity(const nlohmann::json& body) const {
  return checked::string_at(body, "anthropic_version").starts_with("bedrock-") ? 4 : 0;
}

}  // namespace gistproxy::rewrite
