#include "proxy/commands/wrap_command.hpp"

#include <unistd.h>

#include <cstdio>
#include <cstring>
#include <filesystem>
#include <iostream>
#include <map>
#include <optional>

#include "proxy/commands/wrap_agents.hpp"
#include "proxy/commands/wrap_folders.hpp"
#include "proxy/commands/wrap_proxy.hpp"
#include "proxy/commands/wrap_signals.hpp"
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
    "                         ~/.cache/gistproxy/store, or $TMPDIR/gistproxy-UID/store without HOME:\n"
    "                         shared by later wraps, old references stay pageable)\n"
    "  --record FILE          record the traffic (serve --record)\n"
    "  --drain-timeout D      how long the proxy may finish in-flight requests at the end (default 10s)\n";

// POSIX's portable names: what a shell can export.
bool is_variable_name(const std::string& name) {
  if (name.empty() || (name[0] >= '0' && name[0] <= '9')) return false;
  for (char c : name)
    if (!((c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || (c >= '0' && c <= '9') || c == '_')) return false;
  return true;
}

// `s` with its control characters written as \xHH: safe in a shell comment
// (a newline would end it and run the rest) and on a terminal.
std::string printable(const std::string& s) {
  std::string out;
  for (unsigned char c : s) {
    if (c >= 0x20 && c != 0x7f) {
      out += char(c);
      continue;
    }
    char hex[8];
    std::snprintf(hex, sizeof hex, "\\x%02x", c);
    out += hex;
  }
  return out;
}

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
  // The name becomes `export NAME=...` (--print-env) and an environment
  // entry: anything but a variable's name would run as shell code or name
  // a variable the command never reads.
  if (!o.base_url_env.empty() && !is_variable_name(o.base_url_env))
    return error = "--base-url-env: not an environment variable's name (letters, digits, _; not a digit first): " +
                   printable(o.base_url_env),
           std::nullopt;
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

// Shell syntax that is safe under eval whatever the base URL holds: values
// single-quoted, names checked (parse), comments kept to one line each.
int print_env(const wrap_options& o, const wrap_agent& agent) {
  const std::vector<std::string> agent_args(o.command.begin() + 1, o.command.end());
  auto l = launch_settings(agent, o.base_url, !o.keep_limits, "", agent_args);  // writes nothing
  for (const auto& [k, v] : l.env) std::cout << "export " << k << "=" << shell_quoted(v) << "\n";
  if (!l.args_before.empty()) {
    std::string line = agent.program + " needs these arguments first:";
    for (const auto& a : l.args_before) line += " " + shell_quoted(a);
    std::cout << "# " << printable(line) << "\n";
  }
  for (const auto& n : l.notes) std::cout << "# " << printable(n) << "\n";
  return 0;
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
  // The ledger's figures: the client's requests as sent beside every request
  // gistproxy made for them (page-ins included), as the provider billed them.
  const auto without = count("input_tokens_without"), with = count("input_tokens_with");
  char money[64];
  std::snprintf(money, sizeof money, "$%.4f", usd("net_saved_usd"));
  std::string out = "gistproxy: " + thousands(count("requests")) + " requests; input tokens " + thousands(with) +
                    " sent, " + thousands(without) + " without gistproxy";
  if (without) {
    char share[32];
    std::snprintf(share, sizeof share, " (%.1f %% saved)", 100.0 * (1.0 - double(with) / double(without)));
    out += share;
  }
  out += "; " + std::string(money) + " saved at list prices, cache priced";
  // Answers without usage are in no figure: said, so the figures are not read as the whole run.
  if (const auto unmeasured = count("unmeasured_requests")) out += " (" + thousands(unmeasured) + " requests without usage)";
  // Requests of models with no price are in no dollar figure: said, so $0 is not read as nothing saved.
  if (const auto unpriced = count("unpriced_requests")) out += " (" + thousands(unpriced) + " requests unpriced)";
  out += "; " + thousands(count("page_ins")) +
         " page-ins, " + thousands(count("churn")) + " churn";
  if (!record.empty()) out += "; recorded to " + record;
  return out;
}

// The serve arguments for the run's proxy. A store that cannot take a blob
// (a read-only disk, a file in its place) is said, and the proxy runs
// without offloading: read_blob offered with nothing to page would only
// cost the model tokens and turns.
std::vector<std::string> serve_arguments(const wrap_options& o, const wrap_agent& agent, const std::string& store,
                                         const char* const* environ) {
  std::vector<std::string> serve = {"--drain-timeout", std::to_string(o.drain.count()) + "ms", "--log-level", "warn"};
  if (auto problem = store_write_problem(store)) {
    std::cerr << "gistproxy: the store " << printable(store) << " cannot be written (" << *problem
              << "): tool outputs go to the model as they are, and read_blob is not offered\n";
    serve.insert(serve.end(), {"--offload", "off"});
  } else {
    serve.insert(serve.end(), {"--store", store});
  }
  auto chained = chained_upstreams(agent, {o.command.begin() + 1, o.command.end()}, environ);
  for (const auto& [flag, url] : chained.upstreams) serve.insert(serve.end(), {flag, url});
  for (const auto& n : chained.notes) std::cerr << "gistproxy: " << printable(n) << "\n";
  if (!o.record.empty()) serve.insert(serve.end(), {"--record", o.record});
  return serve;
}

// The agent behind the proxy; the run's overlay removed whatever happens
// meanwhile (a Ctrl-C while the proxy drains included). The agent's status.
int run_behind_proxy(const wrap_options& o, const wrap_agent& agent, const std::vector<std::string>& serve,
                     const std::string& log, const std::string& overlay, const char* const* environ) {
  wrap_proxy proxy(serve, log, wrap_give_up_flag());
  std::cerr << "gistproxy: " << agent.program << " behind " << proxy.base_url() << "; live view " << proxy.admin_url()
            << "/ (log " << log << ")\n";
  auto launch = launch_settings(agent, proxy.base_url(), !o.keep_limits, overlay, {o.command.begin() + 1, o.command.end()});
  for (const auto& n : launch.notes) std::cerr << "gistproxy: " << printable(n) << "\n";
  std::vector<std::string> argv = {agent.program};
  argv.insert(argv.end(), launch.args_before.begin(), launch.args_before.end());
  argv.insert(argv.end(), o.command.begin() + 1, o.command.end());
  // A signal before the agent started: the user no longer wants it run.
  const int status = wrap_give_up_signal() ? 128 + wrap_give_up_signal() : run_agent(argv, agent_environment(environ, launch, proxy));
  const auto summary = proxy.admin_get("/api/summary");
  proxy.stop(o.drain, [&] {
    std::cerr << "gistproxy: finishing the requests in flight (up to " << o.drain.count() / 1000.0
              << " s; Ctrl-C stops waiting)\n";
  });
  if (wrap_give_up_signal()) std::cerr << "gistproxy: stopped waiting for the proxy\n";
  auto j = summary ? nlohmann::json::parse(*summary, nullptr, false) : nlohmann::json();
  std::cerr << (j.is_object() ? summary_line(j, o.record) : "gistproxy: the proxy's totals could not be read") << "\n";
  return status;
}

int run(const wrap_options& o, const wrap_agent& agent, const char* const* environ) {
  wrap_signals_install();
  std::string error;
  const auto cache = wrap_cache_folder(environ, error);
  if (!cache) {
    std::cerr << "gistproxy wrap: " << printable(error) << "\n";
    return 1;
  }
  const auto store = o.store.empty() ? (*cache / "store").string() : o.store;
  const auto log = (*cache / ("wrap-" + std::to_string(::getpid()) + ".log")).string();
  const auto serve = serve_arguments(o, agent, store, environ);
  // Settings files of this run's own go beside the store, not under /tmp:
  // Gemini CLI refuses a settings file whose folders others may write.
  wrap_overlay overlay(*cache);
  int status = 0;
  try {
    status = run_behind_proxy(o, agent, serve, log, overlay.path(), environ);
  } catch (const std::exception& e) {
    std::cerr << "gistproxy wrap: " << e.what() << "\n";
    status = wrap_give_up_signal() ? 128 + wrap_give_up_signal() : 1;
  }
  overlay.remove();
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
