#include "proxy/sessions/admin_server.hpp"

#include <boost/asio/co_spawn.hpp>
#include <boost/asio/detached.hpp>
#include <boost/asio/steady_timer.hpp>

#include "proxy/live/live_page.hpp"
#include "proxy/sessions/accept_backoff.hpp"
#include "proxy/net/admin_auth.hpp"
#include "proxy/net/checked_parser.hpp"
#include "proxy/sessions/admin_connections.hpp"
#include "proxy/sessions/session_guard.hpp"
#include "rewrite/request_target.hpp"

namespace gistproxy::proxy {
namespace {

using response = http::response<http::string_body>;

void json_body(response& res, http::status status, std::string body) {
  res.result(status);
  res.set(http::field::content_type, "application/json");
  res.body() = std::move(body);
}

// The live view: the page and the JSON behind it (live_feed). The page's own
// scripts and styles are inline and it fetches nothing but /api/* here; the
// policy says so to the browser too.
bool route_live(services& svc, const http::request<http::string_body>& req, std::string_view path, response& res) {
  const bool page = path == "/" || path == "/index.html";
  if (!page && path.substr(0, 5) != "/api/") return false;
  if (!svc.live) {
    json_body(res, http::status::not_found, R"({"error":"the live view is off"})");
    return true;
  }
  // Another site's page whose name now resolves here (DNS rebinding) must not
  // read the view: its Host is its own name. 421: not a name this server answers for.
  if (!admin_host_allowed(req[http::field::host], svc.cfg.admin_listen, svc.cfg.admin_allowed_hosts)) {
    json_body(res, http::status::misdirected_request,
              R"({"error":"the live view answers only for loopback names, the --admin-listen address and --admin-allowed-hosts"})");
    return true;
  }
  if (!admin_authorized(svc.cfg.admin_token, req[http::field::authorization], req.target())) {
    json_body(res, http::status::unauthorized, R"({"error":"the live view needs --admin-token: Authorization: Bearer TOKEN or ?token=TOKEN"})");
    res.set(http::field::www_authenticate, "Bearer");
    return true;
  }
  res.set(http::field::cache_control, "no-store");
  if (page) {
    res.set(http::field::content_type, "text/html; charset=utf-8");
    res.set("Content-Security-Policy",
            "default-src 'none'; script-src 'unsafe-inline'; style-src 'unsafe-inline'; connect-src 'self'; img-src data:");
    res.body() = std::string(live_page_html());
    return true;
  }
  svc.live->tick();  // what finished before this request is in its answer
  constexpr std::string_view one = "/api/conversations/";
  if (path == "/api/summary") json_body(res, http::status::ok, svc.live->summary_json());
  else if (path == "/api/conversations") json_body(res, http::status::ok, svc.live->conversations_json());
  else if (path == "/api/tenants") json_body(res, http::status::ok, svc.live->tenants_json());
  else if (path.substr(0, one.size()) == one && telemetry::live::valid_trace_id(path.substr(one.size()))) {
    auto j = svc.live->conversation_json(std::string(path.substr(one.size())));
    if (j) json_body(res, http::status::ok, std::move(*j));
    else json_body(res, http::status::not_found, R"j({"error":"no such conversation (not seen, or no longer kept)"})j");
  } else {
    json_body(res, http::status::not_found, R"({"error":"not found; try /api/summary, /api/tenants, /api/conversations or /api/conversations/{32 hex trace id}"})");
  }
  return true;
}

response route(services& svc, const http::request<http::string_body>& req) {
  response res{http::status::ok, req.version()};
  auto path = std::string_view(req.target());
  path = rewrite::path_of(path);
  if (req.method() != http::verb::get && req.method() != http::verb::head) {
    json_body(res, http::status::method_not_allowed, R"({"error":"only GET"})");
  } else if (route_live(svc, req, path, res)) {
  } else if (path == "/metrics") {
    res.set(http::field::content_type, "text/plain; version=0.0.4; charset=utf-8");
    res.body() = svc.registry.render();
  } else if (path == "/healthz") {
    json_body(res, http::status::ok, R"({"status":"ok"})");
  } else if (path == "/readyz") {
    if (svc.draining) json_body(res, http::status::service_unavailable, R"({"status":"draining"})");
    else json_body(res, http::status::ok, R"({"status":"ready"})");
  } else {
    json_body(res, http::status::not_found, R"({"error":"not found; try /, /api/summary, /metrics, /healthz or /readyz"})");
  }
  res.keep_alive(req.keep_alive());
  res.prepare_payload();
  return res;
}

// A HEAD answer is the GET answer's header, Content-Length included, without
// its body (RFC 9110 §9.3.2).
awaitable<error_code> write_answer(tcp_stream& stream, http::verb method, response& res) {
  if (method == http::verb::head) {
    http::response<http::empty_body> head(std::move(res.base()));
    auto [ec, n] = co_await http::async_write(stream, head, use_nothrow);
    co_return ec;
  }
  auto [ec, n] = co_await http::async_write(stream, res, use_nothrow);
  co_return ec;
}

awaitable<void> admin_session(services& svc, std::shared_ptr<admin_connections> open, tcp_socket socket) {
  tcp_stream stream(std::move(socket));
  admin_connection self(stream);
  if (open->open(self)) svc.metrics.accept_paused.labels({"admin_limit"}).inc();
  beast::flat_buffer buffer;
  for (;;) {
    checked_request_parser<http::string_body> parser;
    parser.body_limit(64 * 1024);
    stream.expires_after(std::chrono::seconds(30));
    auto [ec, n] = co_await http::async_read(stream, buffer, parser, use_nothrow);
    if (ec) break;
    open->touch(self);
    const auto method = parser.get().method();
    auto res = route(svc, parser.get());
    const bool keep_alive = res.keep_alive();
    if (co_await write_answer(stream, method, res) || !keep_alive) break;
  }
  open->close(self);
  error_code ignored;
  stream.socket().shutdown(tcp_socket::shutdown_both, ignored);
}

// Every second: the live view drains its queue and samples the totals for
// its per-minute chart, whether or not a page is open.
awaitable<void> live_ticker(services& svc, tcp_acceptor& acceptor) {
  asio::steady_timer timer(acceptor.get_executor());
  while (acceptor.is_open()) {
    timer.expires_after(live_feed::tick_period);
    auto [ec] = co_await timer.async_wait(use_nothrow);
    if (ec || !acceptor.is_open()) break;
    svc.live->tick();
  }
}

}  // namespace

awaitable<void> run_admin(services& svc, tcp_acceptor& acceptor) {
  if (svc.live) asio::co_spawn(acceptor.get_executor(), live_ticker(svc, acceptor), asio::detached);
  // Shared with the sessions, which may outlive this loop at shutdown.
  auto open = std::make_shared<admin_connections>(svc.cfg.admin_max_connections);
  accept_backoff backoff;
  for (;;) {
    auto [ec, socket] = co_await acceptor.async_accept(use_nothrow);
    if (ec == asio::error::operation_aborted || !acceptor.is_open()) co_return;
    if (ec) {
      co_await backoff.pause(svc, ec, acceptor, "admin");
      continue;
    }
    backoff.reset();
    asio::co_spawn(acceptor.get_executor(), admin_session(svc, open, std::move(socket)),
                   counted_failure{&svc, "admin", "session"});
  }
}

}  // namespace gistproxy::proxy
