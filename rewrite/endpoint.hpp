// Where a request goes and as whom: the paths an endpoint serves, the model a
// path names, its token counts, the credentials that name a tenant, the
// upstream family (upstream_family.hpp: the paths and credential kinds that
// name the provider, and the signer), the metric label. Each endpoint speaks
// one wire format (wire_format.hpp) for its bodies, answers and streams: a
// native API's endpoint speaks its own, a cloud's (Azure OpenAI, Vertex AI,
// Bedrock) the one of the API it hosts. The proxy asks the registry which
// endpoint a request reached, then reads its body through endpoint->wire().
// Adding a cloud over an existing wire format is an endpoint and its family
// in its folder plus one line in endpoint_registry.cpp.
#pragma once

#include <span>
#include <string>
#include <string_view>
#include <vector>

#include <nlohmann/json_fwd.hpp>

#include "rewrite/count_envelope.hpp"
#include "rewrite/upstream_family.hpp"
#include "rewrite/wire_format.hpp"

namespace gistproxy::rewrite {

// Which request fields carry the API key that names a request's tenant, in
// order of preference. "authorization" holds a scheme-prefixed credential.
struct credential_fields {
  std::vector<std::string_view> headers;
  std::string_view query_parameter;  // e.g. Gemini's ?key=; empty: none
};

class endpoint {
 public:
  explicit endpoint(const wire_format& wire) : wire_(wire) {}
  virtual ~endpoint() = default;
  endpoint(const endpoint&) = delete;
  endpoint& operator=(const endpoint&) = delete;

  // What this endpoint's bodies, answers and streams speak.
  const wire_format& wire() const { return wire_; }
  // Short name used in metrics labels and logs: chat, azure-chat, bedrock-messages.
  virtual std::string_view name() const = 0;
  // Whether a request path (query removed, trailing '/' trimmed) is this endpoint's.
  virtual bool serves_path(std::string_view path) const = 0;
  // The path a replayed request is sent to (the model, for endpoints that
  // name it in the path).
  virtual std::string request_path(std::string_view model) const = 0;
  // What the request target adds to the facts the wire format read from the
  // body (endpoints that name the model or the streaming mode in the path);
  // nothing by default.
  virtual void inspect_target(std::string_view target, request_facts& facts) const;
  // The provider its requests go to. Endpoints of one family return the same object.
  virtual const upstream_family& upstream() const = 0;
  // A constant of the endpoint's kind (asked on every request: no copy).
  virtual const credential_fields& credentials() const;
  // Token counts: an agent asks how large its next turn is, and gistproxy
  // counts the turn it will really send. Whether a POST to `path` (query
  // removed, on this endpoint's family) is a count this endpoint reads: its
  // body is this endpoint's request, or wraps one (wraps_counts).
  virtual bool counts_tokens_at(std::string_view path) const;
  // Whether this endpoint's counts wrap the request they count (Gemini's
  // :countTokens, Bedrock's CountTokens): such a count is read only once
  // unwrap_count has taken its request out, else forwarded unread.
  virtual bool wraps_counts() const { return false; }
  // The request a count's body wraps and the endpoint that reads it
  // (count_envelope.hpp); nullopt when the body is not such a wrapping.
  // `model` is the one the path names.
  virtual std::optional<unwrapped_count> unwrap_count(std::string_view model, std::string_view body) const;
  // OpenTelemetry GenAI provider (openai, azure.ai.openai, aws.bedrock).
  virtual std::string_view provider_name() const = 0;
  // How strongly a bare request body (a trace that does not say where it was
  // sent) looks like one sent here: 0 not at all; the highest-scoring
  // endpoint wins, the registry's order breaking ties. Endpoints of one wire
  // format tell apart by their marks (anthropic_version "bedrock-…"), so a
  // cloud scores 0 unless it has its own.
  virtual int request_affinity(const nlohmann::json& body) const = 0;

 private:
  const wire_format& wire_;
};

// Every endpoint, in matching order: the one list serve and replay use.
std::span<const endpoint* const> all_endpoints();
// The endpoint a body that names none is taken for (the first API: Chat Completions).
const endpoint& default_endpoint();
// The distinct upstream families, the default one first: requests that no
// endpoint serves go to it, and its flag is plain --upstream.
std::span<const upstream_family* const> families();
std::vector<upstream_family> upstream_families();  // the same, as values
// The endpoint for a request, matched on the path (query ignored: Claude Code
// posts to /v1/messages?beta=true); nullptr when none applies.
const endpoint* endpoint_for(std::string_view method, std::string_view target);
// The same, for any request path (replay's recorded requests).
const endpoint* endpoint_for_path(std::string_view target);
// By metric label (chat, responses, messages); nullptr when unknown.
const endpoint* endpoint_named(std::string_view name);

}  // namespace gistproxy::rewrite
