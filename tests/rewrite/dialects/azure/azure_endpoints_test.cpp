// Azure OpenAI's endpoints (rewrite/dialects/azure/azure_endpoints.cpp): the
// paths they serve, the deployment a path names, and the family, keys and
// label their requests carry.
#include <catch2/catch.hpp>
#include <nlohmann/json.hpp>

#include "rewrite/dialects/azure/azure_endpoints.hpp"
#include "rewrite/dialects/chat/chat_api.hpp"
#include "rewrite/dialects/responses/responses_api.hpp"
#include "rewrite/upstream_route.hpp"

using namespace gistproxy::rewrite;

namespace {

const chat_wire chat;
const responses_wire responses;
const azure_endpoint azure_chat{chat, "azure-chat", "chat/completions"};
const azure_endpoint azure_responses{responses, "azure-responses", "responses"};

// The facts after the target has had its say over a body that named `body_model`.
request_facts inspected(const azure_endpoint& e, std::string_view target, std::string body_model = {}) {
  request_facts facts;
  facts.model = std::move(body_model);
  e.inspect_target(target, facts);
  return facts;
}

}  // namespace

TEST_CASE("an Azure endpoint serves its operation under a deployment and the v1 API and the bare openai folder") {
  CHECK(azure_chat.serves_path("/openai/deployments/prod-gpt/chat/completions"));
  CHECK(azure_chat.serves_path("/openai/v1/chat/completions"));
  CHECK(azure_responses.serves_path("/openai/deployments/prod-gpt/responses"));
  CHECK(azure_responses.serves_path("/openai/v1/responses"));
  CHECK(azure_responses.serves_path("/openai/responses"));  // where the openai SDK's AzureOpenAI posts Responses
}

TEST_CASE("an Azure endpoint serves no other operation and no path that merely starts or ends alike") {
  const auto path = GENERATE(as<std::string>{}, "/openai/deployments/prod-gpt/chat/completions/extra",
                             "/openai/deployments//chat/completions", "/openai/deployments/team/d/chat/completions",
                             "/openai/deployments/prod-gpt/chat/completionsx", "/openai/deployments/prod-gpt",
                             "/openai/deployments/prod-gpt/responses", "/openai/deployments/prod-gptchat/completions",
                             "/openai/v1/responses", "/openai/v1/chat/completions/x", "/openai/v1/", "/openai/responses",
                             "/openai/xchat/completions", "/v1/chat/completions", "/azure/openai/v1/chat/completions");
  CAPTURE(path);
  CHECK_FALSE(azure_chat.serves_path(path));
}

TEST_CASE("an Azure request goes to the deployment that names its model percent-encoded or else to the v1 API") {
  CHECK(azure_chat.request_path("gpt-4o") == "/openai/deployments/gpt-4o/chat/completions");
  CHECK(azure_responses.request_path("team dep/1") == "/openai/deployments/team%20dep%2F1/responses");
  CHECK(azure_chat.request_path("") == "/openai/v1/chat/completions");
  CHECK(azure_responses.request_path("") == "/openai/v1/responses");
  for (std::string_view model : {"gpt-4o", "a/b", ""}) {
    CAPTURE(model);
    CHECK(azure_chat.serves_path(azure_chat.request_path(model)));
  }
}

TEST_CASE("an Azure deployment names the model only when the body names none") {
  CHECK(inspected(azure_chat, "/openai/deployments/prod-gpt/chat/completions?api-version=2024-10-21").model == "prod-gpt");
  CHECK(inspected(azure_chat, "/openai/deployments/team%2Fgpt/chat/completions").model == "team/gpt");
  CHECK(inspected(azure_chat, "/openai/deployments/prod-gpt/chat/completions", "gpt-4o").model == "gpt-4o");
  // No deployment: nothing to name. A control byte or a broken escape is no model name either.
  CHECK(inspected(azure_chat, "/openai/v1/chat/completions").model.empty());
  CHECK(inspected(azure_responses, "/openai/responses?api-version=1").model.empty());
  CHECK(inspected(azure_chat, "/openai/deployments/bad%0Aname/chat/completions").model.empty());
  CHECK(inspected(azure_chat, "/openai/deployments/bad%4/chat/completions").model.empty());
}

TEST_CASE("Azure requests go to the azure family named by api-key before a Bearer token") {
  for (const auto* e : {&azure_chat, &azure_responses}) {
    CAPTURE(e->name());
    const auto& f = e->upstream();
    CHECK(&f == &azure_family());
    CHECK(f.name == "azure");
    CHECK(f.default_url.empty());  // the resource's host is the operator's
    CHECK(f.gateway_mount == "/azure");
    CHECK(e->credentials().headers == std::vector<std::string_view>{"api-key", "authorization"});
    CHECK(e->credentials().query_parameter.empty());
    CHECK(e->provider_name() == "azure.ai.openai");
    // A bare body cannot be told from one sent to OpenAI: replay never takes it for Azure's.
    CHECK(e->request_affinity(nlohmann::json::parse(R"({"model":"gpt-4o","input":"hi"})")) == 0);
  }
  CHECK(azure_chat.name() == "azure-chat");
  CHECK(azure_responses.name() == "azure-responses");
  // The family owns every path under /openai/, read or not, and the api-key credential.
  const auto& f = azure_family();
  auto claimed = [&](std::string_view path) {
    for (const auto& c : f.paths)
      if (claims(c, path)) return true;
    return false;
  };
  CHECK(claimed("/openai/deployments/d/embeddings"));
  CHECK(claimed("/openai/v1/models"));
  CHECK_FALSE(claimed("/v1/chat/completions"));
  CHECK_FALSE(claimed("/openaix/v1/models"));
  CHECK(std::vector<credential_kind>(f.credentials.begin(), f.credentials.end()) ==
        std::vector<credential_kind>{credential_kind::azure_key});
}
