#include "proxy/sessions/server.hpp"

#include <sched.h>
#include <sys/resource.h>

#include <algorithm>
#include <cerrno>

#include <boost/asio/co_spawn.hpp>
#include <boost/asio/detached.hpp>
#include <boost/asio/executor_work_guard.hpp>
#include <boost/asio/signal_set.hpp>
#include <boost/asio/steady_timer.hpp>
#include <stdexcept>

#include "proxy/sessions/accept_backoff.hpp"
#include "proxy/sessions/admin_server.hpp"
#include "proxy/sessions/client_connection.hpp"
#include "proxy/sessions/session_guard.hpp"
#include "proxy/sessions/tls_reload.hpp"
#include "proxy/runtime/recorder.hpp"

namespace gistproxy::proxy {
namespace {

std::unique_ptr<tcp_acceptor> bind_acceptor(asio::io_context& io, const std::string& host_port, const char* what) {
  std::string host, port;
  if (!split_host_port(host_port, host, port))
    throw std::runtime_error(std::string(what) + " '" + host_port + "' is not HOST:PORT");
  error_code ec;
  auto address = asio::ip::make_address(host, ec);
  if (ec) throw std::runtime_error(std::string(what) + " '" + host_port + "': '" + host + "' is not an IP address");
  tcp::endpoint ep(address, std::uint16_t(std::stoi(port)));
  auto acceptor = std::make_unique<tcp_acceptor>(io);
  acceptor->open(ep.protocol(), ec);
  if (!ec) acceptor->set_option(asio::socket_base::reuse_address(true), ec);
  if (!ec) acceptor->bind(ep, ec);
  if (!ec) acceptor->listen(asio::socket_base::max_listen_connections, ec);
  if (ec) throw std::runtime_error(std::string("cannot listen on ") + what + " " + host_port + ": " + ec.message());
  return acceptor;
}

}  // namespace

unsigned available_cores() {
  cpu_set_t set;
  if (sched_getaffinity(0, sizeof set, &set) == 0) return unsigned(std::max(1, CPU_COUNT(&set)));
  return std::max(1u, std::thread::hardware_concurrency());
}

server::server(services& svc, unsigned threads) : svc_(svc) {
  for (unsigned i = 0; i < std::max(1u, threads); ++i) shards_.push_back(std::make_unique<shard>(svc));
}

server::~server() = default;

void server::bind() {
  acceptor_ = bind_acceptor(shards_[0]->io(), svc_.cfg.listen, "--listen");
  admin_acceptor_ = bind_acceptor(shards_[0]->io(), svc_.cfg.admin_listen, "--admin-listen");
}

tcp::endpoint server::listen_endpoint() const { return acceptor_->local_endpoint(); }
tcp::endpoint server::admin_endpoint() const { return admin_acceptor_->local_endpoint(); }

// Raises the soft descriptor limit to the hard one (a service's default soft
// limit is often 1024) and returns the client connection limit: the flag, or
// min(4096, half the descriptors), so upstream connections, store files and
// the admin listener always have descriptors left.
static unsigned connection_limit(unsigned flag) {
  rlimit lim{};
  if (::getrlimit(RLIMIT_NOFILE, &lim) == 0 && lim.rlim_cur < lim.rlim_max) {
    lim.rlim_cur = lim.rlim_max;
    ::setrlimit(RLIMIT_NOFILE, &lim);
    ::getrlimit(RLIMIT_NOFILE, &lim);
  }
  if (flag) return flag;
  const auto descriptors = lim.rlim_cur == RLIM_INFINITY ? rlim_t(1) << 20 : lim.rlim_cur;
  return unsigned(std::clamp<rlim_t>(descriptors / 2, 16, 4096));
}

awaitable<void> server::accept_loop() {
  const long limit = long(connection_limit(svc_.cfg.max_connections));
  accept_backoff backoff;
  for (;;) {
    // At the limit, stop accepting: new clients wait in the kernel's backlog
    // (a bounded queue) until a connection ends; the admin listener, on its
    // own acceptor, keeps answering.
    if (svc_.live_connections.load() >= limit) {
      svc_.metrics.accept_paused.labels({"limit"}).inc();
      while (svc_.live_connections.load() >= limit && acceptor_->is_open()) {
        asio::steady_timer pause(shards_[0]->io(), std::chrono::milliseconds(10));
        co_await pause.async_wait(use_nothrow);
      }
    }
    auto& target = *shards_[next_shard_++ % shards_.size()];
    auto [ec, socket] = co_await acceptor_->async_accept(target.io(), use_nothrow);
    if (!acceptor_->is_open() || ec == asio::error::operation_aborted) co_return;
    if (ec) {  // out of descriptors or similar: count, answer 503 or back off, keep serving
      co_await backoff.pause(svc_, ec, *acceptor_, "proxy");
      continue;
    }
    backoff.reset();
    svc_.live_connections.fetch_add(1);  // released by the session when it ends
    if (svc_.client_tls)  // the identity current now: a reload later does not touch this connection
      asio::co_spawn(target.io(), serve_tls_client(target, std::move(socket), svc_.client_tls->current()),
                     counted_failure{&svc_, "any", "session"});
    else
      asio::co_spawn(target.io(), serve_client(target, std::move(socket)), counted_failure{&svc_, "any", "session"});
  }
}

void server::begin_drain() {
  if (svc_.draining.exchange(true)) return;
  svc_.log.log(telemetry::log_level::info, "draining",
               "\"in_flight_connections\":" + std::to_string(svc_.live_connections.load()));
  error_code ignored;
  acceptor_->close(ignored);
  for (auto& s : shards_) asio::post(s->io(), [sh = s.get()] { sh->close_idle(); });
}

void server::run() {
  auto& main_io = shards_[0]->io();
  std::vector<asio::executor_work_guard<asio::io_context::executor_type>> guards;
  for (auto& s : shards_) guards.push_back(asio::make_work_guard(s->io()));

  asio::co_spawn(main_io, accept_loop(), asio::detached);
  asio::co_spawn(main_io, run_admin(svc_, *admin_acceptor_), asio::detached);

  // SIGHUP (a closed terminal, logrotate's postrotate, a renewed
  // certificate) never stops the proxy: it reopens the --record file at its
  // path and reloads the listener's certificate. Set before anything else so
  // no request in flight can meet the default (fatal) disposition.
  tls_reload certificates(svc_, main_io);
  asio::signal_set hangups(main_io, SIGHUP);
  std::function<void()> await_hangup = [&] {
    hangups.async_wait([&](error_code ec, int) {
      if (ec) return;
      svc_.log.log(telemetry::log_level::info, "SIGHUP: reopening the record file, reloading the certificate");
      if (svc_.recorder) svc_.recorder->reopen();
      certificates.reload("SIGHUP");
      await_hangup();
    });
  };
  await_hangup();

  asio::signal_set signals(main_io, SIGTERM, SIGINT);
  asio::steady_timer drain_poll(main_io);
  std::chrono::steady_clock::time_point deadline;
  std::function<void()> poll = [&] {
    drain_poll.expires_after(std::chrono::milliseconds(20));
    drain_poll.async_wait([&](error_code) {
      if (svc_.live_connections.load() > 0 && std::chrono::steady_clock::now() < deadline) {
        // Sessions finishing a request close themselves; idle ones were closed.
        for (auto& s : shards_) asio::post(s->io(), [sh = s.get()] { sh->close_idle(); });
        return poll();
      }
      error_code ignored;
      admin_acceptor_->close(ignored);
      certificates.stop();
      for (auto& g : guards) g.reset();
      for (auto& s : shards_) s->io().stop();
    });
  };
  signals.async_wait([&](error_code ec, int) {
    if (ec) return;
    deadline = std::chrono::steady_clock::now() + svc_.cfg.drain_timeout;
    begin_drain();
    poll();
  });

  std::vector<std::thread> threads;
  for (std::size_t i = 1; i < shards_.size(); ++i)
    threads.emplace_back([this, s = shards_[i].get()] { run_guarded(svc_, s->io()); });
  run_guarded(svc_, main_io);
  for (auto& t : threads) t.join();
}

}  // namespace gistproxy::proxy
