#include "proxy/commands/wrap_cline.hpp"

#include <sys/stat.h>

#include <cstdlib>
#include <fstream>
#include <nlohmann/json.hpp>

#include "proxy/commands/wrap_settings_file.hpp"
#include "rewrite/json/checked.hpp"

namespace gistproxy::proxy {
namespace {

constexpr const char* wrapped_provider = "openai-compatible";
constexpr const char* tool_result_chars = "150000";  // as Claude Code's BASH_MAX_OUTPUT_LENGTH

std::string env_or_empty(const char* name) {
  const char* v = std::getenv(name);
  return v ? std::string(v) : std::string();
}

// Where Cline reads its providers, as it resolves it: CLINE_PROVIDER_SETTINGS_PATH,
// else CLINE_DATA_DIR/settings, else (CLINE_DIR or ~/.cline)/data/settings.
std::string providers_path() {
  if (auto p = env_or_empty("CLINE_PROVIDER_SETTINGS_PATH"); !p.empty()) return p;
  auto data = env_or_empty("CLINE_DATA_DIR");
  if (data.empty()) {
    auto dir = env_or_empty("CLINE_DIR");
    if (dir.empty()) dir = env_or_empty("HOME") + "/.cline";
    data = dir + "/data";
  }
  return data + "/settings/providers.json";
}

// The user's providers file: an empty object when there is none; `problem`
// says why one that is there could not be read (a folder, a FIFO, over
// 1 MiB, not JSON): then nothing is known of its provider, which is not
// the same as a provider of another kind.
struct providers_file {
  nlohmann::json json = nlohmann::json::object();
  std::string problem;
};

providers_file read_providers() {
  providers_file out;
  const auto path = providers_path();
  auto file = read_settings_file(path);
  if (file.missing) return out;
  if (file.problem.empty()) {
    auto j = rewrite::checked::parse(file.text);  // depth-bounded: dump() recurses
    if (j.is_object()) out.json = std::move(j);
    else file.problem = "is not a JSON object";
  }
  if (!file.problem.empty()) out.problem = "Cline's providers file " + path + " " + file.problem;
  return out;
}

// The settings object of the provider Cline will use, if it is the wrapped kind.
nlohmann::json* wrapped_settings(nlohmann::json& providers) {
  const auto last = providers.value("lastUsedProvider", nlohmann::json());
  if (!last.is_string() || last.get<std::string>() != wrapped_provider) return nullptr;
  auto list = providers.find("providers");
  if (list == providers.end() || !list->is_object()) return nullptr;
  auto entry = list->find(wrapped_provider);
  if (entry == list->end() || !entry->is_object()) return nullptr;
  auto settings = entry->find("settings");
  if (settings == entry->end() || !settings->is_object()) return nullptr;
  return &*settings;
}

std::string how_to(const std::string& base) {
  return "point Cline at the proxy: cline auth -p openai-compatible -b " + base + "/v1 -k KEY -m MODEL";
}

}  // namespace

agent_launch cline_settings(const std::string& base, bool lift_limits, const std::string& overlay_dir) {
  agent_launch l;
  // A session may otherwise run in Cline's background hub, a process of its
  // own that reads the user's providers and outlives wrap.
  l.env["CLINE_SESSION_BACKEND_MODE"] = "local";
  if (lift_limits) {
    // Cline keeps 8,000 characters of each tool result in the request; its
    // shell tool has already cut the middle of longer output at 48,000.
    l.env["CLINE_MESSAGE_BUILDER_MAX_TOOL_RESULT_CHARS"] = tool_result_chars;
    l.notes.push_back("Cline's shell tool cuts command output to 48,000 characters; that cut cannot be lifted");
  }
  auto file = read_providers();
  if (!file.problem.empty()) {
    l.notes.push_back(file.problem + ": left as it is; " + how_to(base));
    return l;
  }
  auto& providers = file.json;
  auto* settings = wrapped_settings(providers);
  if (!settings) {
    l.notes.push_back(std::string("Cline's last-used provider is not ") + wrapped_provider + ": left as it is; " + how_to(base));
    return l;
  }
  if (overlay_dir.empty()) {  // --print-env writes nothing
    l.notes.push_back(how_to(base));
    return l;
  }
  (*settings)["baseUrl"] = base + "/v1";
  // The copy holds the user's API key: readable by the user alone, in the
  // run's own folder, removed with it.
  const auto path = overlay_dir + "/cline-providers.json";
  {
    std::ofstream out(path, std::ios::trunc);
    ::chmod(path.c_str(), S_IRUSR | S_IWUSR);
    out << providers.dump(2, ' ', false, nlohmann::json::error_handler_t::replace) << "\n";
  }
  l.env["CLINE_PROVIDER_SETTINGS_PATH"] = path;
  return l;
}

std::optional<std::string> cline_chained_upstream() {
  auto file = read_providers();
  const auto* settings = wrapped_settings(file.json);
  if (!settings) return std::nullopt;
  const auto url = settings->value("baseUrl", nlohmann::json());
  if (!url.is_string()) return std::nullopt;
  return upstream_of_base_url(url.get<std::string>(), true);
}

}  // namespace gistproxy::proxy
