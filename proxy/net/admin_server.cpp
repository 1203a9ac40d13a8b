#include "proxy/net/admin_server.hpp"

#include <boost/asio/co_spawn.hpp>
#include <boost/asio/detached.hpp>

namespace gistproxy::proxy {
namespace {

http::response<http::string_body> route(services& svc, const http::request<http::string_body>& req) {
  http::response<http::string_body> res{http::status::ok, req.version()};
  auto path = std::string_view(req.target());
  path = path.substr(0, path.find('?'));
  if (req.method() != http::verb::get && req.method() != http::verb::head) {
    res.result(http::status::method_not_allowed);
    res.set(http::field::content_type, "application/json");
    res.body() = R"({"error":"only GET"})";
  } else if (path == "/metrics") {
    res.set(http::field::content_type, "text/plain; version=0.0.4; charset=utf-8");
    res.body() = svc.registry.render();
  } else if (path == "/healthz") {
    res.set(http::field::content_type, "application/json");
    res.body() = R"({"status":"ok"})";
  } else if (path == "/readyz") {
    res.set(http::field::content_type, "application/json");
    if (svc.draining) {
      res.result(http::status::service_unavailable);
      res.body() = R"({"status":"draining"})";
    } else {
      res.body() = R"({"status":"ready"})";
    }
  } else {
    res.result(http::status::not_found);
    res.set(http::field::content_type, "application/json");
    res.body() = R"({"error":"not found; try /metrics, /healthz or /readyz"})";
  }
  res.keep_alive(req.keep_alive());
  res.prepare_payload();
  return res;
}

awaitable<void> admin_session(services& svc, tcp_socket socket) {
  tcp_stream stream(std::move(socket));
  beast::flat_buffer buffer;
  for (;;) {
    http::request_parser<http::string_body> parser;
    parser.body_limit(64 * 1024);
    stream.expires_after(std::chrono::seconds(30));
    auto [ec, n] = co_await http::async_read(stream, buffer, parser, use_nothrow);
    if (ec) break;
    auto res = route(svc, parser.get());
    auto [wec, wn] = co_await http::async_write(stream, res, use_nothrow);
    if (wec || !res.keep_alive()) break;
  }
  error_code ignored;
  stream.socket().shutdown(tcp_socket::shutdown_both, ignored);
}

}  // namespace

awaitable<void> run_admin(services& svc, tcp_acceptor& acceptor) {
  for (;;) {
    auto [ec, socket] = co_await acceptor.async_accept(use_nothrow);
    if (ec == asio::error::operation_aborted || !acceptor.is_open()) co_return;
    if (ec) continue;
    asio::co_spawn(acceptor.get_executor(), admin_session(svc, std::move(socket)), asio::detached);
  }
}

}  // namespace gistproxy::proxy
