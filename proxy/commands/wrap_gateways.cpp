#include "proxy/commands/wrap_gateways.hpp"

#include <unistd.h>

#include <cstdlib>
#include <filesystem>
#include <nlohmann/json.hpp>

#include "proxy/commands/wrap_agents.hpp"
#include "proxy/commands/wrap_settings_file.hpp"
#include "proxy/commands/wrap_toml.hpp"
#include "rewrite/json/checked.hpp"

namespace gistproxy::proxy {
namespace fs = std::filesystem;
namespace {

constexpr std::size_t max_project_levels = 64;  // folders walked up from the working folder

std::string env_or_empty(const char* name) {
  const char* v = std::getenv(name);
  return v ? std::string(v) : std::string();
}

// A name Codex's `-c a.b.c=...` takes as one key: it splits on dots.
bool is_bare_key(const std::string& k) {
  if (k.empty()) return false;
  for (char c : k)
    if (!((c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || (c >= '0' && c <= '9') || c == '_' || c == '-')) return false;
  return true;
}

// Adds `url` as the upstream behind `flag`, or says why not.
void chain(config_gateways& g, const std::string& flag, const std::string& url, const std::string& where) {
  if (auto u = upstream_of_base_url(url, true)) g.upstreams.emplace_back(flag, *u);
  else g.notes.push_back("the base URL " + where + " sets is empty: not chained");
}

std::optional<std::string> profile_in_args(const std::vector<std::string>& args) {
  for (std::size_t i = 0; i < args.size(); ++i) {
    if ((args[i] == "--profile" || args[i] == "-p") && i + 1 < args.size()) return args[i + 1];
    if (args[i].rfind("--profile=", 0) == 0) return args[i].substr(10);
  }
  return std::nullopt;
}

// Which provider the user's config selects, and what it says of it.
void resolve_codex_provider(codex_route& r, const std::map<toml_path, std::string>& toml, const std::string& file,
                            const std::vector<std::string>& args, const std::optional<std::string>& env_url) {
  auto get = [&](const toml_path& p) -> std::optional<std::string> {
    auto it = toml.find(p);
    return it == toml.end() ? std::nullopt : std::optional<std::string>(it->second);
  };
  const auto profile = profile_in_args(args).value_or(get({"profile"}).value_or(""));
  auto provider = profile.empty() ? std::nullopt : get({"profiles", profile, "model_provider"});
  if (provider) r.profile = profile;  // it outranks a top-level model_provider
  if (!provider) provider = get({"model_provider"});
  const std::string id = provider.value_or("openai");
  auto chain_env = [&] {
    if (env_url) chain(r.gateways, "--upstream", *env_url, "OPENAI_BASE_URL");
  };
  if (!r.profile.empty() && !is_bare_key(r.profile)) {
    r.gateways.notes.push_back("Codex's profile '" + r.profile + "' (" + file +
                               ") cannot be named on its command line: its provider may bypass the proxy");
    r.profile.clear();
  }
  if (id == "openai") {
    if (auto url = get({"openai_base_url"}); url && !url->empty()) chain(r.gateways, "--upstream", *url, file);
    else chain_env();
    return;
  }
  const auto base = get({"model_providers", id, "base_url"});
  if (base && is_bare_key(id)) {
    chain(r.gateways, "--upstream", *base, file);
    r.own_provider = id;
    r.profile.clear();  // the profile's provider is the one pointed at the proxy
    return;
  }
  r.gateways.notes.push_back("Codex's model provider '" + id + "' (" + file + ") " +
                             (base ? "cannot be named on its command line" : "has no base_url wrap can read") +
                             ": not chained; Codex runs with wrap's own provider, to " +
                             (env_url ? "OPENAI_BASE_URL" : std::string("the OpenAI API")));
  chain_env();
}

// JSONC as opencode writes it: comments (nlohmann skips them) and trailing
// commas (dropped here, outside strings and comments).
std::string without_trailing_commas(const std::string& text) {
  std::string out;
  out.reserve(text.size());
  for (std::size_t i = 0; i < text.size(); ++i) {
    const char c = text[i];
    if (c == '"') {  // a string, copied whole
      const auto start = i;
      for (++i; i < text.size() && text[i] != '"'; ++i)
        if (text[i] == '\\') ++i;
      out.append(text, start, std::min(i + 1, text.size()) - start);
      continue;
    }
    if (c == '/' && i + 1 < text.size() && (text[i + 1] == '/' || text[i + 1] == '*')) {  // a comment, copied whole
      const auto end = text[i + 1] == '/' ? text.find('\n', i) : text.find("*/", i + 2);
      const auto stop = end == std::string::npos ? text.size() : end + (text[i + 1] == '/' ? 0 : 2);
      out.append(text, i, stop - i);
      i = stop - 1;
      continue;
    }
    if (c == ',') {
      auto j = text.find_first_not_of(" \t\r\n", i + 1);
      if (j != std::string::npos && (text[j] == '}' || text[j] == ']')) continue;
    }
    out += c;
  }
  return out;
}

// opencode's config files, lowest precedence first.
std::vector<std::string> opencode_config_files() {
  std::vector<std::string> files;
  auto config_home = env_or_empty("XDG_CONFIG_HOME");
  if (config_home.empty() && !env_or_empty("HOME").empty()) config_home = env_or_empty("HOME") + "/.config";
  if (!config_home.empty())
    for (const char* name : {"config.json", "opencode.json", "opencode.jsonc"})
      files.push_back(config_home + "/opencode/" + name);
  if (auto custom = env_or_empty("OPENCODE_CONFIG"); !custom.empty()) files.push_back(custom);
  // The project's: from the working folder up to the git root, the nearest last.
  std::error_code ec;
  std::vector<fs::path> project;
  for (auto dir = fs::current_path(ec); !ec && project.size() < max_project_levels; dir = dir.parent_path()) {
    project.push_back(dir);
    if (fs::exists(dir / ".git", ec) || dir == dir.parent_path()) break;
  }
  for (auto it = project.rbegin(); it != project.rend(); ++it)
    for (const char* name : {"opencode.jsonc", "opencode.json"}) files.push_back((*it / name).string());
  return files;
}

// A baseURL as opencode reads it: "{env:NAME}" is that variable's value;
// another substitution cannot be followed here.
std::optional<std::string> opencode_value(const std::string& v) {
  if (v.rfind("{env:", 0) == 0 && v.back() == '}' && v.find('}') == v.size() - 1) {
    auto value = env_or_empty(v.substr(5, v.size() - 6).c_str());
    return value.empty() ? std::nullopt : std::optional<std::string>(value);
  }
  if (v.find('{') != std::string::npos) return std::nullopt;
  return v;
}

}  // namespace

codex_route find_codex_route(const std::vector<std::string>& codex_args, const std::optional<std::string>& env_url) {
  codex_route r;
  auto home = env_or_empty("CODEX_HOME");
  if (home.empty() && !env_or_empty("HOME").empty()) home = env_or_empty("HOME") + "/.codex";
  const auto file = home.empty() ? std::string() : home + "/config.toml";
  auto settings = file.empty() ? settings_file{true, {}, {}} : read_settings_file(file);
  std::optional<std::map<toml_path, std::string>> toml;
  if (!settings.missing && settings.problem.empty() && !(toml = toml_strings(settings.text)))
    settings.problem = "is not TOML this version of wrap reads";
  if (!settings.problem.empty())
    r.gateways.notes.push_back("Codex's config " + file + " " + settings.problem + ": a gateway set there is not chained");
  if (toml) {
    resolve_codex_provider(r, *toml, file, codex_args, env_url);
    return r;
  }
  if (env_url) chain(r.gateways, "--upstream", *env_url, "OPENAI_BASE_URL");
  return r;
}

config_gateways find_opencode_gateways(const std::optional<std::string>& env_url) {
  config_gateways g;
  struct family {
    const char* name;
    const char* flag;
    std::optional<std::pair<std::string, std::string>> set;  // file, baseURL
  };
  family families[] = {{"anthropic", "--anthropic-upstream", std::nullopt}, {"openai", "--upstream", std::nullopt}};
  for (const auto& file : opencode_config_files()) {
    auto settings = read_settings_file(file);
    if (settings.missing) continue;
    auto j = settings.problem.empty()
                 ? (rewrite::checked::within_depth(settings.text)
                        ? nlohmann::json::parse(without_trailing_commas(settings.text), nullptr, false, true)
                        : nlohmann::json(nlohmann::json::value_t::discarded))
                 : nlohmann::json(nlohmann::json::value_t::discarded);
    if (!j.is_object()) {
      g.notes.push_back("opencode's config " + file + " " + (settings.problem.empty() ? "is not JSON" : settings.problem) +
                        ": a gateway set there is not chained");
      continue;
    }
    for (auto& f : families) {
      const auto& url = rewrite::checked::member(rewrite::checked::member(
          rewrite::checked::member(rewrite::checked::member(j, "provider"), f.name), "options"), "baseURL");
      if (url.is_string()) f.set = std::make_pair(file, url.get<std::string>());
    }
  }
  if (!families[0].set && env_url) chain(g, families[0].flag, *env_url, "ANTHROPIC_BASE_URL");
  for (const auto& f : families) {
    if (!f.set) continue;
    if (auto url = opencode_value(f.set->second)) chain(g, f.flag, *url, f.set->first);
    else
      g.notes.push_back("opencode's " + std::string(f.name) + " baseURL in " + f.set->first +
                        " is a substitution wrap cannot follow: not chained");
  }
  return g;
}

}  // namespace gistproxy::proxy
