#include "rewrite/dialects/azure/azure_endpoints.hpp"
#include "rewrite/dialects/cloud_path.hpp"
#include "rewrite/request_target.hpp"

namespace gistproxy::rewrite {
namespace {

constexpr std::string_view deployments = "/openai/deployments/";
constexpr std::string_view v1 = "/openai/v1/";
constexpr std::string_view openai = "/openai/";

std::string_view deployment_of(std::string_view path) { return cloud_path::segment_after(path, deployments); }

constexpr path_claim azure_paths[] = {{openai}};
constexpr credential_kind azure_credentials[] = {credential_kind::azure_key};
constexpr upstream_family azure{
    .name = "azure", .default_url = {}, .paths = azure_paths, .credentials = azure_credentials, .gateway_mount = "/azure"};

}  // namespace

const upstream_family& azure_family() { return azure; }

bool azure_endpoint::serves_path(std::string_view path) const {
  if (path.starts_with(v1)) return path.substr(v1.size()) == operation_;
  // The openai SDK's AzureOpenAI posts Responses to /openai/responses?api-version=….
  if (path.size() == openai.size() + operation_.size() && path.starts_with(openai) && path.ends_with(operation_))
    return true;
  const auto deployment = deployment_of(path);
  if (deployment.empty()) return false;
  const auto tail = path.substr(deployments.size() + deployment.size());
  return tail.size() == operation_.size() + 1 && tail[0] == '/' && tail.substr(1) == operation_;
}

std::string azure_endpoint::request_path(std::string_view model) const {
  if (model.empty()) return std::string(v1) + std::string(operation_);
  return std::string(deployments) + cloud_path::percent_encoded(model) + "/" + std::string(operation_);
}

void azure_endpoint::inspect_target(std::string_view target, request_facts& facts) const {
  if (!facts.model.empty()) return;  // the body names its model: that is what is billed
  const auto path = path_of(target);
  facts.model = cloud_path::model_id(deployment_of(path));
}

}  // namespace gistproxy::rewrite
