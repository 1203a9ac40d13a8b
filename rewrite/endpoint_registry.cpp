#include "rewrite/endpoint_registry.hpp"

#include <algorithm>
#include <array>
#include <stdexcept>

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

const credential_fields& endpoint::credentials() const {
  static const credential_fields fields{{"authorization", "x-api-key"}, {}};
  return fields;
}

bool endpoint::counts_tokens_at(std::string_view) const { return false; }

std::optional<unwrapped_count> endpoint::unwrap_count(std::string_view, std::string_view) const { return std::nullopt; }

struct endpoint_registry::built_in {
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


// One provider's family and its two endpoints, over the built-in wire formats.
struct endpoint_registry::compatible {
  compatible(const compatible_provider& p, const built_in& b)
      : family(p.name, p.prefix, p.url), chat(b.chat, family, "chat/completions"), responses(b.responses, family, "responses") {}
  compatible_family family;
  compatible_endpoint chat, responses;
};

const endpoint_registry::built_in& endpoint_registry::built_ins() {
  static const built_in b;
  return b;
}

endpoint_registry::endpoint_registry() {
  const auto& b = built_ins();
  // The APIs' own endpoints, in the order their upstream families are
  // listed: the first one's family is the default upstream (--upstream).
  const auto apis = std::to_array<const endpoint*>({&b.openai_chat, &b.openai_responses, &b.anthropic_messages, &b.google_gemini});
  // Matching order: the clouds' paths are exact, the APIs' match any prefix
  // (…/chat/completions), so the clouds are asked first.
  const auto matching = std::to_array<const endpoint*>(
      {&b.azure_chat, &b.azure_responses, &b.vertex_messages, &b.vertex_gemini, &b.bedrock_invoke, &b.bedrock_converse,
       &b.openai_chat, &b.openai_responses, &b.anthropic_messages, &b.google_gemini});
  endpoints_.assign(matching.begin(), matching.end());
  default_ = apis.front();
  auto add = [&](const endpoint* e) {
    const auto* f = &e->upstream();
    if (std::find(families_.begin(), families_.end(), f) == families_.end()) families_.push_back(f);
  };
  for (const auto* e : apis) add(e);
  for (const auto* e : matching) add(e);
  claim_order_ = families_;
}

endpoint_registry::endpoint_registry(std::span<const compatible_provider> providers) : endpoint_registry() {
  std::vector<const endpoint*> first;
  std::vector<const upstream_family*> claimed_first;
  for (std::size_t i = 0; i < providers.size(); ++i) {
    // Checked when the configuration was read; a caller that did not is told here, before anything is served.
    if (auto problem = compatible_problem(providers[i], providers.first(i))) throw std::invalid_argument(*problem);
    auto& c = *compatible_.emplace_back(std::make_unique<compatible>(providers[i], built_ins()));
    families_.push_back(&c.family.family());
    claimed_first.push_back(&c.family.family());
    // Their paths are exact and may lie inside a built-in family's (/openai/v1): asked first.
    first.insert(first.end(), {&c.chat, &c.responses});
  }
  endpoints_.insert(endpoints_.begin(), first.begin(), first.end());
  // A prefix may lie inside a built-in folder (/openai/v1 in Azure's
  // /openai/), never above one (compatible_problem), or inside another
  // provider's: the providers' claims are asked first, the longer first.
  std::stable_sort(claimed_first.begin(), claimed_first.end(),
                   [](const auto* a, const auto* b) { return a->local_prefix.size() > b->local_prefix.size(); });
  claim_order_.insert(claim_order_.begin(), claimed_first.begin(), claimed_first.end());
}

endpoint_registry::~endpoint_registry() = default;

const endpoint_registry& endpoint_registry::builtin() {
  static const endpoint_registry r;
  return r;
}

const endpoint* endpoint_registry::endpoint_for_path(std::string_view target) const {
  auto path = path_of(gateway_mount_of(target).target);
  while (path.size() > 1 && path.back() == '/') path.remove_suffix(1);
  for (const auto* e : endpoints_)
    if (e->serves_path(path)) return e;
  return nullptr;
}

const endpoint* endpoint_registry::endpoint_for(std::string_view method, std::string_view target) const {
  return method == "POST" ? endpoint_for_path(target) : nullptr;
}

const endpoint* endpoint_registry::endpoint_named(std::string_view name) const {
  for (const auto* e : endpoints_)
    if (e->name() == name) return e;
  return nullptr;
}

const upstream_family* endpoint_registry::family_named(std::string_view name) const {
  for (const auto* f : families_)
    if (f->name == name) return f;
  return nullptr;
}

// The built-in registry, for callers that serve no compatible provider (replay, tests).
std::span<const endpoint* const> all_endpoints() { return endpoint_registry::builtin().endpoints(); }
const endpoint& default_endpoint() { return endpoint_registry::builtin().default_endpoint(); }
std::span<const upstream_family* const> families() { return endpoint_registry::builtin().families(); }

std::vector<upstream_family> upstream_families() {
  std::vector<upstream_family> out;
  for (const auto* f : families()) out.push_back(*f);
  return out;
}

const endpoint* endpoint_for_path(std::string_view target) { return endpoint_registry::builtin().endpoint_for_path(target); }
const endpoint* endpoint_for(std::string_view method, std::string_view target) {
  return endpoint_registry::builtin().endpoint_for(method, target);
}
const endpoint* endpoint_named(std::string_view name) { return endpoint_registry::builtin().endpoint_named(name); }

}  // namespace gistproxy::rewrite
