// Every endpoint a gistproxy serves: the built-in ones (endpoint.hpp's free
// functions ask those) and, built at start from the configuration, one chat
// and one Responses endpoint per OpenAI-compatible provider
// (--compatible NAME=PREFIX=URL; dialects/compatible/). Built once before
// serving and handed down (services::endpoints); never changed after.
#pragma once

#include <memory>
#include <optional>
#include <span>
#include <string>
#include <string_view>
#include <vector>

#include "rewrite/dialects/compatible/compatible_endpoint.hpp"
#include "rewrite/endpoint.hpp"

namespace gistproxy::rewrite {

class endpoint_registry {
 public:
  // The built-in endpoints alone.
  static const endpoint_registry& builtin();
  // The built-in endpoints and, asked first, each provider's. Each must pass
  // compatible_problem (the configuration checks it): throws std::invalid_argument otherwise.
  explicit endpoint_registry(std::span<const compatible_provider> compatible);
  ~endpoint_registry();
  endpoint_registry(const endpoint_registry&) = delete;
  endpoint_registry& operator=(const endpoint_registry&) = delete;

  // Every endpoint, in matching order.
  std::span<const endpoint* const> endpoints() const { return endpoints_; }
  // The distinct upstream families, the default one first (its flag is plain
  // --upstream; requests no family claims go to it), the compatible ones last.
  std::span<const upstream_family* const> families() const { return families_; }
  // The same, in the order their path claims are asked: the first family
  // whose claim holds on its own names a path (the built-in families'
  // claims do not overlap; a provider's PREFIX lies inside a built-in
  // folder at most, and is asked before it).
  std::span<const upstream_family* const> claim_order() const { return claim_order_; }
  const endpoint& default_endpoint() const { return *default_; }
  // The endpoint for a request, matched on the path (query ignored); nullptr when none applies.
  const endpoint* endpoint_for(std::string_view method, std::string_view target) const;
  // The same, for any request path (replay's recorded requests).
  const endpoint* endpoint_for_path(std::string_view target) const;
  // By metric label (chat, responses, messages, groq-chat); nullptr when unknown.
  const endpoint* endpoint_named(std::string_view name) const;
  const upstream_family* family_named(std::string_view name) const;

 private:
  struct built_in;
  struct compatible;
  static const built_in& built_ins();
  endpoint_registry();
  std::vector<std::unique_ptr<compatible>> compatible_;
  std::vector<const endpoint*> endpoints_;
  std::vector<const upstream_family*> families_, claim_order_;
  const endpoint* default_ = nullptr;
};

}  // namespace gistproxy::rewrite
