// An OpenAI-compatible provider beside OpenAI (--compatible NAME=PREFIX=URL:
// Groq, Mistral, OpenRouter, DeepSeek, Together, a vLLM or Ollama server):
//   PREFIX/chat/completions   over Chat Completions' wire format
//   PREFIX/responses          over Responses' wire format
// Every path under PREFIX is the provider's (its model list, its files),
// forwarded with PREFIX replaced by the path of its URL; no other provider
// sees them. Its family is named NAME, and so is the provider in spans, the
// metric labels (NAME-chat, NAME-responses) and the live view. Credentials
// are Bearer tokens (Authorization); any credential that names another
// provider (x-api-key, api-key, x-goog-api-key, an AWS signature) is foreign
// on its paths and refused.
#pragma once

#include <optional>
#include <span>
#include <string>

#include "rewrite/endpoint.hpp"

namespace gistproxy::rewrite {

// --compatible NAME=PREFIX=URL. A request to PREFIX/REST goes to URL/REST:
// URL is the provider's base URL as an OpenAI SDK takes it
// (https://api.groq.com/openai/v1), PREFIX the base URL path its clients
// use at gistproxy (/groq/v1).
struct compatible_provider {
  std::string name;    // its family and provider name: lowercase letters, digits, '-', '_'
  std::string prefix;  // where gistproxy serves it: '/' and segments, no trailing '/'
  std::string url;     // its base URL (the proxy checks it is http or https)
};

// NAME=PREFIX=URL read and checked alone, or nullopt with `error` saying why.
std::optional<compatible_provider> parse_compatible(std::string_view spec, std::string& error);
// Why `p` cannot be served beside the built-in APIs and the providers
// `before` it: a built-in family's name, a name or prefix already taken, a
// prefix under a gateway's mount or one that would take a built-in API's
// paths (/v1, /v1/chat). A prefix inside a built-in family's folder is
// allowed and wins there (/openai/v1, otherwise Azure's). nullopt when it can.
std::optional<std::string> compatible_problem(const compatible_provider& p, std::span<const compatible_provider> before);

// One provider's family and the claim of its PREFIX, owned together.
class compatible_family {
 public:
  // `name`, `prefix` (no trailing '/') and `url` are kept here: the family's views point into them.
  compatible_family(std::string name, std::string prefix, std::string url);
  compatible_family(const compatible_family&) = delete;
  compatible_family& operator=(const compatible_family&) = delete;
  const upstream_family& family() const { return family_; }
  std::string_view prefix() const { return prefix_; }

 private:
  std::string name_, prefix_, folder_, url_;
  path_claim claim_;
  upstream_family family_;
};

class compatible_endpoint final : public endpoint {
 public:
  // `operation` is the API's path tail after PREFIX: "chat/completions" or "responses".
  compatible_endpoint(const wire_format& wire, const compatible_family& family, std::string_view operation);
  std::string_view name() const override { return name_; }
  bool serves_path(std::string_view path) const override { return path == path_; }
  std::string request_path(std::string_view) const override { return path_; }
  const upstream_family& upstream() const override { return family_.family(); }
  const credential_fields& credentials() const override {
    static const credential_fields fields{{"authorization"}, {}};
    return fields;
  }
  std::string_view provider_name() const override { return family_.family().name; }
  // A bare body cannot be told from one sent to OpenAI.
  int request_affinity(const nlohmann::json&) const override { return 0; }

 private:
  const compatible_family& family_;
  std::string name_, path_;
};

}  // namespace gistproxy::rewrite
