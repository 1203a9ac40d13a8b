// Where a request goes and as whom: the paths an endpoint serves, the model a
// path names, the credentials that name a tenant, the upstream family (and
// with it the signer), the metric label. Each endpoint speaks one wire format
// (wire_format.hpp) for its bodies, answers and streams: a native API's
// endpoint speaks its own, a cloud's (Azure OpenAI, Vertex AI, Bedrock) the
// one of the API it hosts. The proxy asks the registry which endpoint a
// request reached, then reads its body through endpoint->wire(). Adding a
// cloud over an existing wire format is an endpoint in its folder plus one
// line in endpoint_registry.cpp.
#pragma once

#include <span>
#include <string>
#include <string_view>
#include <vector>

#include <nlohmann/json_fwd.hpp>

#include "rewrite/wire_format.hpp"

namespace gistproxy::rewrite {

// Where an endpoint's requests go: endpoints of one family share an upstream
// (and its keep-alive pool), configured by --NAME-upstream.
struct upstream_family {
  std::string_view name;         // openai, anthropic
  std::string_view default_url;  // when neither --NAME-upstream nor --upstream is given; empty: none (a
                                 // request of the family is refused with a 502 naming the flag)
  // The signer: AWS services check a SigV4 signature over the body, so a body
  // gistproxy changes must be signed again, with gistproxy's own credentials
  // (empty: the family does not sign).
  std::string_view sigv4_service;
};

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
  virtual upstream_family upstream() const = 0;
  virtual credential_fields credentials() const;
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
std::vector<upstream_family> upstream_families();
// The endpoint for a request, matched on the path (query ignored: Claude Code
// posts to /v1/messages?beta=true); nullptr when none applies.
const endpoint* endpoint_for(std::string_view method, std::string_view target);
// The same, for any request path (replay's recorded requests).
const endpoint* endpoint_for_path(std::string_view target);
// By metric label (chat, responses, messages); nullptr when unknown.
const endpoint* endpoint_named(std::string_view name);

}  // namespace gistproxy::rewrite
