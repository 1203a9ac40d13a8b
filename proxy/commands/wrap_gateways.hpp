// Gateways set in an agent's own configuration file rather than in the
// environment: Codex's config.toml (openai_base_url, or the base_url of the
// model provider it selects, directly or through a profile) and opencode's
// opencode.json (provider.anthropic / provider.openai options.baseURL).
// `gistproxy wrap` chains them as it chains a base URL in the environment
// (the proxy's upstream for that API family), or says why it does not.
#pragma once

#include <optional>
#include <string>
#include <utility>
#include <vector>

namespace gistproxy::proxy {

struct config_gateways {
  std::vector<std::pair<std::string, std::string>> upstreams;  // serve flag, URL (normalised)
  std::vector<std::string> notes;                              // what was not chained, and why
};

// Codex: where its requests would go without wrap. `codex_args`: the
// user's arguments (--profile). `env_url`: OPENAI_BASE_URL, chained when
// the config names no gateway of its own.
struct codex_route {
  config_gateways gateways;
  // A provider of the user's own that Codex will use, pointed at the proxy
  // (its key, headers and query stay the user's); empty: wrap's own provider.
  std::string own_provider;
  // The active profile that selects a provider: wrap's provider must be set
  // there too (a profile's provider outranks -c model_provider).
  std::string profile;
};
codex_route find_codex_route(const std::vector<std::string>& codex_args, const std::optional<std::string>& env_url);

// opencode: the Anthropic and OpenAI providers' baseURL, as its config
// files set them (global, OPENCODE_CONFIG, the project's, up to the git
// root: the last one wins), over ANTHROPIC_BASE_URL (`env_url`), which the
// provider reads only when no file sets it.
config_gateways find_opencode_gateways(const std::optional<std::string>& env_url);

}  // namespace gistproxy::proxy
