#include "proxy/commands/wrap_command.hpp"

#include <signal.h>
#include <spawn.h>
#include <sys/wait.h>
#include <unistd.h>

#include <cstdio>
#include <cstring>
#include <filesystem>
#include <iostream>
#include <map>
#include <optional>

#include "proxy/commands/wrap_agents.hpp"
#include "proxy/commands/wrap_proxy.hpp"
#include "proxy/runtime/config.hpp"

namespace gistproxy::proxy {
namespace {

constexpr const char* usage =
    "usage: gistproxy wrap [OPTIONS] AGENT [AGENT ARGS...]\n"
    "       gistproxy wrap [OPTIONS] --base-url-env NAME -- COMMAND [ARGS...]\n"
    "       gistproxy wrap --print-env [--base-url URL] AGENT\n\n"
    "Runs a coding agent behind a private gistproxy on a loopback port, its base URL\n"
    "pointed at it and its own cut of long tool outputs lifted; prints what it saved\n"
    "when the agent exits, and exits with the agent's status. AGENT: claude, codex,\n"
    "gemini, opencode, cline. A base URL the agent already had becomes the proxy's upstream.\n\n"
    "  --print-env            print the settings (shell syntax) instead of running anything\n"
    "  --base-url URL         with --print-env: the proxy's address (default http://127.0.0.1:8080)\n"
    "  --base-url-env NAME    the variable that holds a COMMAND's base URL (after --)\n"
    "  --keep-agent-limits    leave the agent's own tool-output cut as it is\n"
    "  --store DIR            the blob store (default: $XDG_CACHE_HOME/gistproxy/store, or\n"
    "                         ~/.cache/gistproxy/store: shared by later wraps, old references stay pageable)\n"
    "  --record FILE          record the traffic (serve --record)\n"
    "  --drain-timeout D      how long the proxy may finish in-flight requests at the end (default 10s)\n";

struct wrap_options {
  bool print_env = false, keep_limits = false;
  std::string base_url = "http://127.0.0.1:8080", base_url_env, store, record;
  std::chrono::milliseconds drain{10'000};
  std::vector<std::string> command;  // the agent (or COMMAND) and its arguments
};

std::optional<wrap_options> parse(const std::vector<std::string>& args, std::string& error) {
  wrap_options o;
  std::size_t i = 0;
  auto value = [&](const std::string& flag) -> std::optional<std::string> {
    if (i + 1 >= args.size()) return error = flag + " needs a value", std::nullopt;
    return args[++i];
  };
  for (; i < args.size(); ++i) {
    const auto& a = args[i];
    if (a == "--") {
      ++i;
      break;
    }
    if (a.rfind("--", 0) != 0) break;  // the agent's name: the rest is its own
    if (a == "--print-env") o.print_env = true;
    else if (a == "--keep-agent-limits") o.keep_limits = true;
    else if (a == "--base-url" || a == "--base-url-env" || a == "--store" || a == "--record" || a == "--drain-timeout") {
      auto v = value(a);
      if (!v) return std::nullopt;
      if (a == "--base-url") o.base_url = *v;
      else if (a == "--base-url-env") o.base_url_env = *v;
      else if (a == "--store") o.store = *v;
      else if (a == "--record") o.record = *v;
      else if (auto d = parse_duration(*v)) o.drain = *d;
      else return error = "--drain-timeout: not a duration: " + *v, std::nullopt;
    } else {
      return error = "unknown option " + a, std::nullopt;
    }
  }
  o.command.assign(args.begin() + std::ptrdiff_t(std::min(i, args.size())), args.end());
  if (o.command.empty()) return error = "name an agent (claude, codex, gemini, opencode, cline) or -- COMMAND", std::nullopt;
  return o;
}

// The agent to run: a known one by name, or any command with --base-url-env.
std::optional<wrap_agent> agent_of(const wrap_options& o, std::string& error) {
  if (!o.base_url_env.empty()) return wrap_agent{"command", o.command[0], o.base_url_env, "--upstream"};
  if (auto a = find_wrap_agent(o.command[0])) return a;
  error = "unknown agent '" + o.command[0] + "' (claude, codex, gemini, opencode, cline; or --base-url-env NAME -- COMMAND)";
  return std::nullopt;
}

std::string shell_quoted(const std::string& s) {
  std::string out = "'";
  for (char c : s) out += c == '\'' ? std::string("'\\''") : std::string(1, c);
  return out + "'";
}

int print_env(const wrap_options& o, const wrap_agent& agent) {
  const std::vector<std::string> agent_args(o.command.begin() + 1, o.command.end());
  auto l = launch_settings(agent, o.base_url, !o.keep_limits, "", agent_args);  // writes nothing
  for (const auto& [k, v] : l.env) std::cout << "export " << k << "=" << shell_quoted(v) << "\n";
  if (!l.args_before.empty()) {
    std::cout << "# " << agent.program << " needs these arguments first:";
    for (const auto& a : l.args_before) std::cout << " " << shell_quoted(a);
    std::cout << "\n";
  }
  for (const auto& n : l.notes) std::cout << "# " << n << "\n";
  return 0;
}

std::filesystem::path cache_dir(const char* const* environ) {
  std::string xdg, home;
  for (auto e = environ; e && *e; ++e) {
    if (std::strncmp(*e, "XDG_CACHE_HOME=", 15) == 0) xdg = *e + 15;
    if (std::strncmp(*e, "HOME=", 5) == 0) home = *e + 5;
  }
  if (!xdg.empty()) return std::filesystem::path(xdg) / "gistproxy";
  if (!home.empty()) return std::filesystem::path(home) / ".cache" / "gistproxy";
  return std::filesystem::temp_directory_path() / "gistproxy";
}

// The agent's environment: ours, with the launch settings over it.
std::vector<std::string> agent_environment(const char* const* environ, const agent_launch& l, const wrap_proxy& proxy) {
  std::vector<std::string> out;
  auto overridden = [&](const char* e) {
    const char* eq = std::strchr(e, '=');
    const std::string name = eq ? std::string(e, std::size_t(eq - e)) : std::string(e);
    return l.env.count(name) || name == "GISTPROXY_ADMIN_URL";
  };
  for (auto e = environ; e && *e; ++e)
    if (!overridden(*e)) out.emplace_back(*e);
  for (const auto& [k, v] : l.env) out.push_back(k + "=" + v);
  out.push_back("GISTPROXY_ADMIN_URL=" + proxy.admin_url());  // the live view, for scripts the agent runs
  return out;
}

volatile sig_atomic_t agent_pid = 0;

// SIGTERM and SIGHUP sent to wrap go on to the agent. SIGINT and SIGQUIT come
// from the terminal to the whole foreground group, the agent included: wrap
// ignores them while the agent runs (as system(3) does) and outlives it to
// stop the proxy.
void forward_signal(int sig) {
  if (agent_pid > 0) ::kill(pid_t(agent_pid), sig);
}

// Runs the agent in the foreground, its terminal passed through; its exit status.
int run_agent(const std::vector<std::string>& argv, const std::vector<std::string>& env) {
  std::vector<char*> cargv, cenv;
  for (const auto& a : argv) cargv.push_back(const_cast<char*>(a.c_str()));
  cargv.push_back(nullptr);
  for (const auto& e : env) cenv.push_back(const_cast<char*>(e.c_str()));
  cenv.push_back(nullptr);
  struct sigaction ignore {}, forward {}, old_int {}, old_quit {}, old_term {}, old_hup {};
  ignore.sa_handler = SIG_IGN;
  forward.sa_handler = forward_signal;
  ::sigaction(SIGINT, &ignore, &old_int);
  ::sigaction(SIGQUIT, &ignore, &old_quit);
  ::sigaction(SIGTERM, &forward, &old_term);
  ::sigaction(SIGHUP, &forward, &old_hup);
  posix_spawnattr_t attr;
  posix_spawnattr_init(&attr);
  sigset_t defaults;
  sigemptyset(&defaults);
  for (int s : {SIGINT, SIGQUIT, SIGTERM, SIGHUP}) sigaddset(&defaults, s);
  posix_spawnattr_setsigdefault(&attr, &defaults);
  posix_spawnattr_setflags(&attr, POSIX_SPAWN_SETSIGDEF);
  pid_t pid = 0;
  const int rc = ::posix_spawnp(&pid, cargv[0], nullptr, &attr, cargv.data(), cenv.data());
  posix_spawnattr_destroy(&attr);
  int status = 0;
  if (rc == 0) {
    agent_pid = pid;
    while (::waitpid(pid, &status, 0) < 0 && errno == EINTR) {
    }
    agent_pid = 0;
  }
  ::sigaction(SIGINT, &old_int, nullptr);
  ::sigaction(SIGQUIT, &old_quit, nullptr);
  ::sigaction(SIGTERM, &old_term, nullptr);
  ::sigaction(SIGHUP, &old_hup, nullptr);
  if (rc != 0) {
    std::cerr << "gistproxy wrap: cannot run " << argv[0] << ": " << std::strerror(rc) << "\n";
    return 127;
  }
  return WIFEXITED(status) ? WEXITSTATUS(status) : 128 + WTERMSIG(status);
}

std::string thousands(std::uint64_t n) {
  auto s = std::to_string(n);
  for (int i = int(s.size()) - 3; i > 0; i -= 3) s.insert(std::size_t(i), ",");
  return s;
}

// One line: what the proxy saw and saved, from its live view's totals (the
// same numbers as /metrics).
std::string summary_line(const nlohmann::json& s, const std::string& record) {
  auto count = [&](const char* k) -> std::uint64_t {
    return s.contains(k) && s[k].is_number_unsigned() ? s[k].get<std::uint64_t>() : 0;
  };
  auto usd = [&](const char* k) { return s.contains(k) && s[k].is_number() ? s[k].get<double>() : 0.0; };
  const auto sent = count("input_tokens"), saved = count("tokens_saved");
  char money[64];
  std::snprintf(money, sizeof money, "$%.4f", usd("net_saved_usd"));
  std::string out = "gistproxy: " + thousands(count("requests")) + " requests; input tokens " + thousands(sent) +
                    " sent, " + thousands(sent + saved) + " without gistproxy";
  if (sent + saved) {
    char share[32];
    std::snprintf(share, sizeof share, " (%.1f %% saved)", 100.0 * double(saved) / double(sent + saved));
    out += share;
  }
  out += "; " + std::string(money) + " saved at list prices, cache priced; " + thousands(count("page_ins")) +
         " page-ins, " + thousands(count("churn")) + " churn";
  if (!record.empty()) out += "; recorded to " + record;
  return out;
}

int run(const wrap_options& o, const wrap_agent& agent, const char* const* environ) {
  const auto cache = cache_dir(environ);
  std::error_code ec;
  std::filesystem::create_directories(cache, ec);
  const auto store = o.store.empty() ? (cache / "store").string() : o.store;
  const auto log = (cache / ("wrap-" + std::to_string(::getpid()) + ".log")).string();
  std::vector<std::string> serve = {"--store", store, "--drain-timeout", std::to_string(o.drain.count()) + "ms",
                                    "--log-level", "warn"};
  auto chained = chained_upstreams(agent, {o.command.begin() + 1, o.command.end()}, environ);
  for (const auto& [flag, url] : chained.upstreams) serve.insert(serve.end(), {flag, url});
  for (const auto& n : chained.notes) std::cerr << "gistproxy: " << n << "\n";
  if (!o.record.empty()) serve.insert(serve.end(), {"--record", o.record});
  // Settings files of this run's own go beside the store, not under /tmp:
  // Gemini CLI refuses a settings file whose folders others may write.
  std::string overlay = (cache / "overlay-XXXXXX").string();
  if (!::mkdtemp(overlay.data())) overlay.clear();
  int status = 0;
  try {
    wrap_proxy proxy(serve, log);
    std::cerr << "gistproxy: " << agent.program << " behind " << proxy.base_url() << "; live view "
              << proxy.admin_url() << "/ (log " << log << ")\n";
    auto launch = launch_settings(agent, proxy.base_url(), !o.keep_limits, overlay, {o.command.begin() + 1, o.command.end()});
    for (const auto& n : launch.notes) std::cerr << "gistproxy: " << n << "\n";
    std::vector<std::string> argv = {agent.program};
    argv.insert(argv.end(), launch.args_before.begin(), launch.args_before.end());
    argv.insert(argv.end(), o.command.begin() + 1, o.command.end());
    status = run_agent(argv, agent_environment(environ, launch, proxy));
    const auto summary = proxy.admin_get("/api/summary");
    proxy.stop(o.drain);
    auto j = summary ? nlohmann::json::parse(*summary, nullptr, false) : nlohmann::json();
    std::cerr << (j.is_object() ? summary_line(j, o.record) : "gistproxy: the proxy's totals could not be read") << "\n";
  } catch (const std::exception& e) {
    std::cerr << "gistproxy wrap: " << e.what() << "\n";
    status = 1;
  }
  if (!overlay.empty()) std::filesystem::remove_all(overlay, ec);
  return status;
}

}  // namespace

int wrap_command(const std::vector<std::string>& args, const char* const* environ) {
  if (!args.empty() && (args[0] == "--help" || args[0] == "-h")) {
    std::cout << usage;
    return 0;
  }
  std::string error;
  auto o = parse(args, error);
  auto agent = o ? agent_of(*o, error) : std::nullopt;
  if (!agent) {
    std::cerr << "gistproxy wrap: " << error << "\n" << usage;
    return 2;
  }
  return o->print_env ? print_env(*o, *agent) : run(*o, *agent, environ);
}

}  // namespace gistproxy::proxy
