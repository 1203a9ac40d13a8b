#include "proxy/commands/serve_command.hpp"

#include <algorithm>
#include <csignal>
#include <functional>
#include <iostream>
#include <memory>

#include <boost/asio/steady_timer.hpp>
#include <boost/asio/thread_pool.hpp>

#include "proxy/commands/process_services.hpp"
#include "proxy/runtime/config.hpp"
#include "proxy/sessions/server.hpp"

namespace gistproxy::proxy {
namespace {

void log_listening(telemetry::logger& log, const server& srv, const services& svc, unsigned threads) {
  auto ep = srv.listen_endpoint(), admin = srv.admin_endpoint();
  // First, so `make run` shows where to look. The token is never logged.
  if (svc.live) {
    const auto host = admin.address().is_v6() ? "[" + admin.address().to_string() + "]" : admin.address().to_string();
    log.log(telemetry::log_level::warn, "live view",
            "\"url\":\"http://" + host + ":" + std::to_string(admin.port()) + "/\",\"token\":" +
                (svc.cfg.admin_token.empty() ? "false" : "true"));
  }
  // Which upstreams go through an egress proxy (its host:port, never its
  // credentials); before "listening", so whoever waits for that has them.
  for (const auto& u : svc.upstreams)
    if (u.via)
      log.log(telemetry::log_level::warn, "egress proxy",
              "\"family\":\"" + u.family + "\",\"upstream\":\"" + u.url.host_header() + "\",\"proxy\":\"" +
                  u.via->name() + "\"");
  log.log(telemetry::log_level::warn, "listening",
          "\"listen\":\"" + ep.address().to_string() + ":" + std::to_string(ep.port()) + "\",\"admin\":\"" +
              admin.address().to_string() + ":" + std::to_string(admin.port()) + "\",\"upstream\":\"" +
              svc.upstreams.front().url.host_header() + "\",\"threads\":" + std::to_string(threads) +
              ",\"tls\":" + (svc.client_tls ? "true" : "false"));
}

int run(const config& cfg, telemetry::logger& log) {
  process_services process(cfg, log);
  auto& svc = process.svc();
  const unsigned threads = cfg.threads ? cfg.threads : available_cores();
  {
    server srv(svc, threads);
    srv.bind();
    log_listening(log, srv, svc, threads);
    srv.run();
  }
  process.stop();
  log.log(telemetry::log_level::warn, "stopped");
  return 0;
}

}  // namespace

int serve_command(const std::vector<std::string>& args, const char* const* environ) {
  auto parsed = parse_serve_args(args, environ);
  if (!parsed.cfg) {
    (parsed.exit_code == 0 ? std::cout : std::cerr) << parsed.message << (parsed.exit_code ? "\n" : "");
    return parsed.exit_code;
  }
  telemetry::logger log(*telemetry::parse_log_level(parsed.cfg->log_level));
  // SIGHUP's default would end the process while it starts; once serving,
  // the server handles it (reopens the record file).
  std::signal(SIGHUP, SIG_IGN);
  try {
    return run(*parsed.cfg, log);
  } catch (const std::exception& e) {
    std::cerr << "gistproxy: " << e.what() << "\n";
    return 1;
  }
}

}  // namespace gistproxy::proxy
