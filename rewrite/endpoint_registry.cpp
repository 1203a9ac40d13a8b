#include "rewrite/endpoint.hpp"
#include "rewrite/dialects/azure/azure_endpoints.hpp"
#include "rewrite/dialects/bedrock/bedrock_messages.hpp"
#include "rewrite/dialects/bedrock/converse_api.hpp"
#include "rewrite/dialects/chat/chat_api.hpp"
#include "rewrite/dialects/gemini/gemini_api.hpp"
#include "rewrite/dialects/messages/messages_api.hpp"
#include "rewrite/dialects/responses/responses_api.hpp"
#include "rewrite/dialects/vertex/vertex_endpoints.hpp"
#include "rewrite/request_target.hpp"
#include "rewrite/upstream_route.hpp"

namespace gistproxy::rewrite {

void endpoint::inspect_target(std::string_view, request_facts&) const {}

credential_fields endpoint::credentials() const { return {{"authorization", "x-api-key"}, {}}; }

namespace {

struct registry {
  // What is spoken: one wire format per API (Claude on InvokeModel has its own).
  chat_wire chat;
  responses_wire responses;
  messages_wire messages;
  gemini_wire gemini;
  bedrock_messages_wire bedrock_messages;
  converse_wire converse;
  // The APIs' own endpoints, in the order their upstream families are
  // listed: the first one's family is the default upstream (--upstream).
  chat_endpoint openai_chat{chat};
  responses_endpoint openai_responses{responses};
  messages_endpoint anthropic_messages{messages};
  gemini_endpoint google_gemini{gemini};
  // The clouds' endpoints over those wire formats (one line per endpoint).
  azure_endpoint azure_chat{chat, "azure-chat", "chat/completions"};
  azure_endpoint azure_responses{responses, "azure-responses", "responses"};
  vertex_endpoint vertex_messages{messages, "vertex-messages", "anthropic", "rawPredict", "streamRawPredict"};
  vertex_endpoint vertex_gemini{gemini,  "vertex-gemini", "google", "generateContent", "streamGenerateContent",
                                &gemini_endpoint::read_gemini_target};
  bedrock_invoke_endpoint bedrock_invoke{bedrock_messages};
  converse_endpoint bedrock_converse{converse};  // Bedrock's own API
  const endpoint* const apis[4] = {&openai_chat, &openai_responses, &anthropic_messages, &google_gemini};
  // Matching order: the clouds' paths are exact, the APIs' match any prefix
  // (…/chat/completions), so the clouds are asked first.
  const endpoint* const matching[10] = {&azure_chat,       &azure_responses, &vertex_messages,    &vertex_gemini,
                                        &bedrock_invoke,   &bedrock_converse, &openai_chat,       &openai_responses,
                                        &anthropic_messages, &google_gemini};
};
const registry& the_registry() {
  static const registry r;
  return r;
}

}  // namespace

std::span<const endpoint* const> all_endpoints() { return the_registry().matching; }

const endpoint& default_endpoint() { return *the_registry().apis[0]; }

std::vector<upstream_family> upstream_families() {
  std::vector<upstream_family> out;
  auto add = [&](const endpoint* e) {
    auto f = e->upstream();
    bool seen = false;
    for (const auto& o : out) seen |= o.name == f.name;
    if (!seen) out.push_back(f);
  };
  for (const auto* e : the_registry().apis) add(e);
  for (const auto* e : all_endpoints()) add(e);
  return out;
}

const endpoint* endpoint_for_path(std::string_view target) {
  auto path = path_of(gateway_mount_of(target).target);
  while (path.size() > 1 && path.back() == '/') path.remove_suffix(1);
  for (const auto* e : all_endpoints())
    if (e->serves_path(path)) return e;
  return nullptr;
}

const endpoint* endpoint_for(std::string_view method, std::string_view target) {
  return method == "POST" ? endpoint_for_path(target) : nullptr;
}

const endpoint* endpoint_named(std::string_view name) {
  for (const auto* e : all_endpoints())
    if (e->name() == name) return e;
  return nullptr;
}

}  // namespace gistproxy::rewrite
