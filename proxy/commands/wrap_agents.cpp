#include "proxy/commands/wrap_agents.hpp"

#include <cstdlib>
#include <cstring>
#include <fstream>
#include <nlohmann/json.hpp>

#include "proxy/commands/wrap_cline.hpp"

namespace gistproxy::proxy {
namespace {

// The values the README's agents table gives for lifting each agent's cut.
constexpr const char* claude_bash_output = "150000";  // BASH_MAX_OUTPUT_LENGTH's ceiling
constexpr const char* claude_mcp_tokens = "100000";
constexpr const char* codex_output_tokens = "100000";  // tool_output_token_limit

const std::vector<wrap_agent>& agents() {
  static const std::vector<wrap_agent> all = {
      {"claude", "claude", "ANTHROPIC_BASE_URL", "--anthropic-upstream"},
      {"codex", "codex", "OPENAI_BASE_URL", "--upstream"},
      {"gemini", "gemini", "GOOGLE_GEMINI_BASE_URL", "--gemini-upstream"},
      {"opencode", "opencode", "ANTHROPIC_BASE_URL", "--anthropic-upstream"},
      {"cline", "cline", "", "--upstream"},  // its base URL is in its settings: wrap_cline.hpp
  };
  return all;
}

std::string toml_string(const std::string& s) { return nlohmann::json(s).dump(); }  // JSON's escapes are TOML's

std::optional<std::string> env_value(const std::string& name) {
  const char* v = std::getenv(name.c_str());
  return v ? std::optional<std::string>(v) : std::nullopt;
}

agent_launch codex_settings(const std::string& base, bool lift, const std::vector<std::string>& args) {
  agent_launch l;
  const auto route = find_codex_route(args, env_value("OPENAI_BASE_URL"));
  if (!route.own_provider.empty()) {
    // The user's own provider (a gateway): only its base URL is the
    // proxy's; its key, headers and query stay as the user set them.
    l.args_before = {"-c", "model_providers." + route.own_provider + ".base_url=" + toml_string(base + "/v1")};
  } else {
    // A provider of its own, named on the command line (-c overrides the
    // user's config.toml for this run only): the user's files stay untouched.
    l.args_before = {"-c", "model_providers.gistproxy.name=\"gistproxy\"",
                     "-c", "model_providers.gistproxy.base_url=" + toml_string(base + "/v1"),
                     "-c", "model_providers.gistproxy.wire_api=\"responses\"",
                     "-c", "model_providers.gistproxy.env_key=\"OPENAI_API_KEY\"",
                     // Codex's own default transport (its built-in provider's):
                     // the Responses WebSocket, which gistproxy serves; Codex
                     // itself falls back to HTTP if the upgrade is refused.
                     "-c", "model_providers.gistproxy.supports_websockets=true",
                     "-c", "model_provider=\"gistproxy\""};
    if (!route.profile.empty())
      l.args_before.insert(l.args_before.end(), {"-c", "profiles." + route.profile + ".model_provider=\"gistproxy\""});
  }
  if (lift) l.args_before.insert(l.args_before.end(), {"-c", std::string("tool_output_token_limit=") + codex_output_tokens});
  return l;
}

// GOOGLE_GEMINI_BASE_URL makes Gemini CLI 0.61 take the "gateway" auth type,
// which its non-interactive mode refuses, where a GEMINI_API_KEY alone chose
// the API key: a system-defaults file of the run's own chooses that again.
// Defaults rank below the user's settings, so an auth type chosen there wins.
void gemini_auth_default(agent_launch& l, const std::string& overlay_dir) {
  auto set = [](const char* name) { const char* v = std::getenv(name); return v && *v; };
  if (!set("GEMINI_API_KEY") || set("GEMINI_CLI_SYSTEM_DEFAULTS_PATH") || set("GOOGLE_GENAI_USE_VERTEXAI") || set("GOOGLE_GENAI_USE_GCA")) return;
  if (overlay_dir.empty()) {
    l.notes.push_back(R"(Gemini CLI with GEMINI_API_KEY: "security": {"auth": {"selectedType": "gemini-api-key"}} in ~/.gemini/settings.json)");
    return;
  }
  const auto path = overlay_dir + "/gemini-system-defaults.json";
  std::ofstream(path) << R"({"security": {"auth": {"selectedType": "gemini-api-key"}}})" << "\n";
  l.env["GEMINI_CLI_SYSTEM_DEFAULTS_PATH"] = path;
}

agent_launch gemini_settings(const std::string& base, bool lift, const std::string& overlay_dir) {
  agent_launch l;
  l.env["GOOGLE_GEMINI_BASE_URL"] = base;
  gemini_auth_default(l, overlay_dir);
  if (!lift) return l;
  if (const char* own = std::getenv("GEMINI_CLI_SYSTEM_SETTINGS_PATH"); own && *own) {
    l.notes.push_back("GEMINI_CLI_SYSTEM_SETTINGS_PATH is set: Gemini CLI's output cut left as that file says");
    return l;
  }
  if (overlay_dir.empty()) {  // --print-env writes nothing
    l.notes.push_back(R"(lift Gemini CLI's cut: "tools": {"truncateToolOutputThreshold": 0} in ~/.gemini/settings.json)");
    return l;
  }
  // System settings override the user's and the project's; a file of our own
  // for this run holds only the lifted cut. Gemini CLI skips one in a folder
  // under a world-writable one (such as /tmp): the cache folder is not.
  const auto path = overlay_dir + "/gemini-system-settings.json";
  std::ofstream(path) << R"({"tools": {"truncateToolOutputThreshold": 0}})" << "\n";
  l.env["GEMINI_CLI_SYSTEM_SETTINGS_PATH"] = path;
  return l;
}

agent_launch opencode_settings(const std::string& base, bool lift) {
  agent_launch l;
  nlohmann::json config = {{"provider",
                            {{"anthropic", {{"options", {{"baseURL", base + "/v1"}}}}},
                             {"openai", {{"options", {{"baseURL", base + "/v1"}}}}}}}};
  if (lift) config["tool_output"] = {{"max_lines", 100000}, {"max_bytes", 16777216}};
  // Merged over the user's opencode.json for this run only. A pre-set
  // ANTHROPIC_BASE_URL (the Anthropic provider's variable) is chained.
  l.env["OPENCODE_CONFIG_CONTENT"] = config.dump();
  return l;
}

}  // namespace

std::optional<wrap_agent> find_wrap_agent(const std::string& name) {
  for (const auto& a : agents())
    if (a.name == name) return a;
  return std::nullopt;
}

std::vector<std::string> wrap_agent_names() {
  std::vector<std::string> out;
  for (const auto& a : agents()) out.push_back(a.name);
  return out;
}

agent_launch launch_settings(const wrap_agent& agent, const std::string& base, bool lift_limits,
                             const std::string& overlay_dir, const std::vector<std::string>& agent_args) {
  if (agent.name == "codex") return codex_settings(base, lift_limits, agent_args);
  if (agent.name == "gemini") return gemini_settings(base, lift_limits, overlay_dir);
  if (agent.name == "opencode") return opencode_settings(base, lift_limits);
  if (agent.name == "cline") return cline_settings(base, lift_limits, overlay_dir);
  agent_launch l;  // claude, and a command after -- (base_url_env named by the user)
  if (!agent.base_url_env.empty()) l.env[agent.base_url_env] = base;
  if (agent.name == "claude" && lift_limits) {
    l.env["BASH_MAX_OUTPUT_LENGTH"] = claude_bash_output;
    l.env["MAX_MCP_OUTPUT_TOKENS"] = claude_mcp_tokens;
  }
  return l;
}

config_gateways chained_upstreams(const wrap_agent& agent, const std::vector<std::string>& agent_args,
                                  const char* const* environ) {
  std::optional<std::string> env_url;
  const auto prefix = agent.base_url_env + "=";
  for (auto e = environ; !agent.base_url_env.empty() && !env_url && e && *e; ++e)
    if (std::strncmp(*e, prefix.c_str(), prefix.size()) == 0) env_url = std::string(*e + prefix.size());
  config_gateways found;
  if (agent.name == "cline") {
    if (auto url = cline_chained_upstream()) found.upstreams.emplace_back(agent.upstream_flag, *url);
  } else if (agent.name == "codex") {
    found = find_codex_route(agent_args, env_url).gateways;
  } else if (agent.name == "opencode") {
    found = find_opencode_gateways(env_url);  // its Anthropic provider's URL has the "/v1", as the AI SDK's
  } else if (env_url) {
    if (auto url = upstream_of_base_url(*env_url, false)) found.upstreams.emplace_back(agent.upstream_flag, *url);
  }
  return found;
}

std::optional<std::string> upstream_of_base_url(std::string url, bool openai_style) {
  while (!url.empty() && url.back() == '/') url.pop_back();
  if (openai_style && url.ends_with("/v1")) url.resize(url.size() - 3);
  if (url.empty()) return std::nullopt;
  return url;
}

}  // namespace gistproxy::proxy
