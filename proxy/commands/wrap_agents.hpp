// What `gistproxy wrap` changes for each coding agent it knows: the README's
// agents table as data. How the agent is pointed at the proxy (an environment
// variable, or configuration overrides on its command line: never the user's
// files), which API family its requests go to (so a base URL it was already
// pointed at becomes the proxy's upstream for that family: chaining), and how
// its own cut of long tool outputs is lifted.
#pragma once

#include <map>
#include <optional>
#include <string>
#include <vector>

#include "proxy/commands/wrap_gateways.hpp"

namespace gistproxy::proxy {

struct agent_launch {
  std::map<std::string, std::string> env;  // set for the agent (overrides the inherited value)
  std::vector<std::string> args_before;    // inserted after the program name, before the user's arguments
  std::vector<std::string> notes;          // what was not done, said on stderr
};

struct wrap_agent {
  std::string name;     // as typed: claude, codex, gemini, opencode, cline
  std::string program;  // the command run
  // The variable the agent reads its base URL from; chaining reads it too.
  std::string base_url_env;
  // The serve flag that sets the upstream of the agent's API family.
  std::string upstream_flag;
};

// The known agents; nullopt for another name.
std::optional<wrap_agent> find_wrap_agent(const std::string& name);
std::vector<std::string> wrap_agent_names();

// The settings for an agent whose proxy listens at `base` (http://HOST:PORT).
// `lift_limits`: raise the agent's own tool-output cut (the README's values).
// `overlay_dir`: where a settings file the agent must read may be written
// (removed by the caller afterwards); empty: write nothing, say it in notes.
// `agent_args`: the user's arguments to the agent (a Codex --profile).
agent_launch launch_settings(const wrap_agent& agent, const std::string& base, bool lift_limits,
                             const std::string& overlay_dir, const std::vector<std::string>& agent_args = {});

// The upstreams pre-set base URLs name, for the proxy (serve flag, URL):
// the URL the agent was pointed at, in its environment or its own config
// file (Codex's config.toml, opencode's opencode.json, Cline's providers),
// without the path suffix the agent adds itself (Codex's "/v1"); and what
// was not chained, and why.
config_gateways chained_upstreams(const wrap_agent& agent, const std::vector<std::string>& agent_args,
                                  const char* const* environ);

// A base URL an agent was pointed at, as the proxy's upstream: without
// trailing slashes and, for `openai_style` ones, without the "/v1" the
// client's own paths repeat; nullopt when nothing is left.
std::optional<std::string> upstream_of_base_url(std::string url, bool openai_style);

}  // namespace gistproxy::proxy
