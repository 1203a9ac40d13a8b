#include "rewrite/dialect.hpp"
#include "rewrite/dialects/azure/azure_dialects.hpp"
#include "rewrite/dialects/bedrock/bedrock_messages_dialect.hpp"
#include "rewrite/dialects/chat/chat_dialect.hpp"
#include "rewrite/dialects/converse/converse_dialect.hpp"
#include "rewrite/dialects/gemini/gemini_dialect.hpp"
#include "rewrite/dialects/messages/messages_dialect.hpp"
#include "rewrite/dialects/responses/responses_dialect.hpp"
#include "rewrite/dialects/vertex/vertex_dialects.hpp"
#include "rewrite/json/scanner.hpp"
#include "rewrite/json/tree.hpp"

#include <nlohmann/json.hpp>

#include "rewrite/json/checked.hpp"
#include "rewrite/request_target.hpp"

namespace gistproxy::rewrite {
std::string dialect::image_replacement(std::string_view text) const {
  std::string out = "\"";
  json::escape_into(out, text);
  out += '"';
  return out;
}

token_usage dialect::usage_from_response(std::string_view body) const {
  // Responses can be large (long completions); find "usage" with the scanner
  // and read only that small object's numbers.
  json::cursor c(body);
  std::optional<json::range> usage;
  if (c.peek() != json::kind::object) return {};
  bool ok = c.object([&](std::string_view key, json::cursor& v) {
                auto r = v.skip_value();
                if (r && key == usage_member()) usage = r;
                return r.has_value();
              }).has_value();
  if (!ok || !usage) return {};
  auto fields = read_usage_fields(body.substr(usage->begin, usage->size()));
  if (!fields) return {};
  return usage_from_fields(*fields);
}

token_usage dialect::usage_from_response(const nlohmann::json& body) const {
  return usage_from_fields(usage_fields_of(checked::member(body, usage_member())));
}

void dialect::inspect_target(std::string_view, request_facts&) const {}

nlohmann::json dialect::echoed_members(std::string_view) const { return nlohmann::json::object(); }

bool restore_echoed(nlohmann::json& response, const nlohmann::json& echoed) {
  if (!response.is_object() || !echoed.is_object()) return false;
  bool changed = false;
  for (const auto& [key, value] : echoed.items()) {
    auto it = response.find(key);
    if (it == response.end() || *it == value) continue;
    *it = value;
    changed = true;
  }
  return changed;
}

dialect::insertion dialect::tools_insertion(std::string_view, const request_scan& scan, std::string_view definition) const {
  return {scan.object_end, ",\"tools\":[" + std::string(definition) + "]"};
}

credential_fields dialect::credentials() const { return {{"authorization", "x-api-key"}, {}}; }

namespace {

struct registry {
  // The APIs, in the order their upstream families are listed: the first
  // one's family is the default upstream (--upstream).
  chat_dialect chat;
  responses_dialect responses;
  messages_dialect messages;
  gemini_dialect gemini;
  // The clouds that host them (one line per endpoint).
  azure_dialect azure_chat{chat, "azure-chat", "chat/completions"};
  azure_dialect azure_responses{responses, "azure-responses", "responses"};
  vertex_dialect vertex_messages{messages, "vertex-messages", "anthropic", "rawPredict", "streamRawPredict"};
  vertex_dialect vertex_gemini{gemini, "vertex-gemini", "google", "generateContent", "streamGenerateContent"};
  bedrock_messages_dialect bedrock_messages{messages};
  converse_dialect converse;  // Bedrock's own API
  const dialect* const apis[4] = {&chat, &responses, &messages, &gemini};
  // Matching order: the clouds' paths are exact, the APIs' match any prefix
  // (…/chat/completions), so the clouds are asked first.
  const dialect* const matching[10] = {&azure_chat, &azure_responses, &vertex_messages, &vertex_gemini, &bedrock_messages,
                                       &converse,   &chat,            &responses,       &messages,      &gemini};
};

const registry& the_registry() {
  static const registry r;
  return r;
}

}  // namespace

std::span<const dialect* const> all_dialects() { return the_registry().matching; }

const dialect& default_dialect() { return *the_registry().apis[0]; }

std::vector<upstream_family> upstream_families() {
  std::vector<upstream_family> out;
  auto add = [&](const dialect* d) {
    auto f = d->upstream();
    bool seen = false;
    for (const auto& o : out) seen |= o.name == f.name;
    if (!seen) out.push_back(f);
  };
  for (const auto* d : the_registry().apis) add(d);
  for (const auto* d : all_dialects()) add(d);
  return out;
}

const dialect* dialect_for_path(std::string_view target) {
  auto path = path_of(target);
  while (path.size() > 1 && path.back() == '/') path.remove_suffix(1);
  for (const auto* d : all_dialects())
    if (d->serves_path(path)) return d;
  return nullptr;
}

const dialect* dialect_for(std::string_view method, std::string_view target) {
  return method == "POST" ? dialect_for_path(target) : nullptr;
}

const dialect* dialect_named(std::string_view name) {
  for (const auto* d : all_dialects())
    if (d->name() == name) return d;
  return nullptr;
}

}  // namespace gistproxy::rewrite
