#include "rewrite/endpoint.hpp"

#include <algorithm>
#include <array>

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

bool endpoint::counts_tokens_at(std::string_view) const { return false; }

std::optional<unwrapped_count> endpoint::unwrap_count(std::string_view, std::string_view) const { return std::nullopt; }

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
  vertex_endpoint vertex_messages{messages, "vertex-messages", {"anthropic", "rawPredict", "streamRawPredict", {}, "count-tokens"}};
  vertex_endpoint vertex_gemini{gemini, "vertex-gemini", {"google", "generateContent", "streamGenerateContent", "countTokens"},
                                &gemini_endpoint::read_gemini_target};
  bedrock_invoke_endpoint bedrock_invoke{bedrock_messages};
  converse_endpoint bedrock_converse{converse, bedrock_invoke};  // Bedrock's own API
};

const registry& the_registry() {
  static const registry r;
  return r;
}

// The APIs' own endpoints, in the order their upstream families are listed:
// the first one's family is the default upstream (--upstream).
std::span<const endpoint* const> apis() {
  const auto& r = the_registry();
  static const auto list = std::to_array<const endpoint*>(
      {&r.openai_chat, &r.openai_responses, &r.anthropic_messages, &r.google_gemini});
  return list;
}

}  // namespace

// Matching order: the clouds' paths are exact, the APIs' match any prefix
// (…/chat/completions), so the clouds are asked first.
std::span<const endpoint* const> all_endpoints() {
  const auto& r = the_registry();
  static const auto matching = std::to_array<const endpoint*>(
      {&r.azure_chat, &r.azure_responses, &r.vertex_messages, &r.vertex_gemini, &r.bedrock_invoke, &r.bedrock_converse,
       &r.openai_chat, &r.openai_responses, &r.anthropic_messages, &r.google_gemini});
  return matching;
}

const endpoint& default_endpoint() { return *apis().front(); }

std::span<const upstream_family* const> families() {
  static const auto list = [] {
    std::vector<const upstream_family*> out;
    auto add = [&](const endpoint* e) {
      const auto* f = &e->upstream();
      if (std::find(out.begin(), out.end(), f) == out.end()) out.push_back(f);
    };
    for (const auto* e : apis()) add(e);
    for (const auto* e : all_endpoints()) add(e);
    return out;
  }();
  return list;
}

std::vector<upstream_family> upstream_families() {
  std::vector<upstream_family> out;
  for (const auto* f : families()) out.push_back(*f);
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
