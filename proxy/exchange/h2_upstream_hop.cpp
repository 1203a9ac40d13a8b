#include "proxy/exchange/h2_upstream_hop.hpp"

#include <charconv>

#include "proxy/exchange/exchange_stats.hpp"
#include "proxy/exchange/request_controls.hpp"
#include "proxy/net/client_watch.hpp"
#include "proxy/net/descriptor_reserve.hpp"
#include "proxy/net/hop_by_hop.hpp"

namespace gistproxy::proxy {
namespace {

std::string lower(std::string_view s) {
  std::string out(s);
  for (auto& c : out)
    if (c >= 'A' && c <= 'Z') c = char(c - 'A' + 'a');
  return out;
}

bool signs_field(std::string_view signed_headers, std::string_view name) {
  for (std::string_view rest = signed_headers; !rest.empty();) {
    const auto end = rest.find(';');
    if (rest.substr(0, end) == name) return true;
    if (end == std::string_view::npos) break;
    rest.remove_prefix(end + 1);
  }
  return false;
}

}  // namespace

bool needs_h2_upstream(const request_context& ctx, const h2_pseudo_fields* pseudo) {
  if (!pseudo || ctx.in.aws != aws_auth::client_signed) return false;
  return aws_credentials_of(ctx.in.request).signs_pseudo_field();
}

h2_upstream_hop::h2_upstream_hop(services& svc, upstream_pool& pool, request_context& ctx, client_watch& watch,
                                 const h2_pseudo_fields& pseudo, int hop)
    : svc_(svc), pool_(pool), ctx_(ctx), watch_(watch), pseudo_(pseudo), span_(svc, ctx, hop) {
  ctx.upstream.protocol = "HTTP/2";
  if (!span_->recording) return;
  span_->set("server.address", pool.target().host);
  span_->set_text("network.protocol.name", "http");
  span_->set_text("network.protocol.version", "2");
}

h2_upstream_hop::~h2_upstream_hop() {
  if (!span_.ended()) fail(watch_.client_gone() ? "client disconnected" : "abandoned");
}

// The client's pseudo-fields and end-to-end fields as it sent them: what its
// signature covers. Only what no signature can cover changes: hop-by-hop
// fields go (HTTP/2 forbids them), gistproxy's own controls go, Via is added.
h2_client_request h2_upstream_hop::upstream_request(std::size_t body_size) const {
  const auto& req = ctx_.in.request;
  const auto signed_headers = aws_credentials_of(req).signed_headers;
  h2_client_request r;
  r.method = std::string(req.method_string());
  // The client's scheme when it signed it, else the upstream connection's.
  r.scheme = signs_field(signed_headers, ":scheme") ? pseudo_.scheme : std::string(pool_.target().tls ? "https" : "http");
  r.authority = pseudo_.authority.empty() ? pool_.target().host_header() : pseudo_.authority;
  r.path = pseudo_.path;
  for_each_end_to_end_field(req, [&](const auto& f) {
    const auto name = lower(f.name_string());
    if (name == bypass_header || name == threshold_header) return;
    r.fields.emplace_back(name, std::string(f.value()));
  });
  // A Host the client sent itself goes too; one made of :authority does not.
  if (auto host = req.find(http::field::host); host != req.end() && !pseudo_.host_from_authority)
    r.fields.emplace_back("host", std::string(host->value()));
  if (auto length = req.find(http::field::content_length); length != req.end() || body_size)
    r.fields.emplace_back("content-length", std::to_string(body_size));
  r.fields.emplace_back("via", svc_.via.entry(20));
  return r;
}

awaitable<std::optional<proxy_error>> h2_upstream_hop::send(const std::string& body) {
  const auto started = std::chrono::steady_clock::now();
  struct wait_tally {
    std::chrono::nanoseconds& total;
    std::chrono::steady_clock::time_point since;
    ~wait_tally() { total += std::chrono::steady_clock::now() - since; }
  } tally{ctx_.upstream.wait, started};
  // An idle connection the upstream began to close as the request went out
  // refuses its stream (GOAWAY below it, REFUSED_STREAM): never processed,
  // so it is sent once more on a fresh connection.
  for (int attempt = 0;; ++attempt) {
    if (auto idle = attempt == 0 ? pool_.idle_h2() : nullptr) conn_ = std::move(idle);
    else if (auto lease = co_await pool_.connect_h2(); lease.error) {
      if (lease.error->kind == error_kind::out_of_descriptors) out_of_descriptors_warning(svc_.log, lease.error->detail);
      if (lease.error->kind == error_kind::upstream_no_h2)
        svc_.log.log(telemetry::log_level::warn, "upstream refused HTTP/2 for a request signed over HTTP/2 pseudo-headers: not sent");
      co_return lease.error;
    } else {
      conn_ = std::make_unique<h2_upstream_connection>(std::move(lease.connection), h2_client_limits{});
    }
    span_->set("gistproxy.connection_reused", conn_->socket().reused);
    watch_.guard(&conn_->socket());
    conn_->socket().deadline.set(svc_.cfg.upstream_timeout);  // for the request and the response head
    const auto ec = co_await conn_->send(upstream_request(body.size()), body);
    if (watch_.client_gone())
      co_return proxy_error{error_kind::client_disconnected, "client closed the connection; upstream request cancelled"};
    if (!ec && conn_->status()) break;
    auto failure = failure_of(ec, "before sending response headers");
    const bool unprocessed = conn_->failure() == std::optional<std::string>("refused");
    watch_.guard(nullptr);
    const bool retry = attempt == 0 && conn_->socket().reused && unprocessed;
    conn_.reset();
    if (!retry) co_return failure;
    exchange_stats(svc_.metrics, ctx_.in.api).upstream_connection_retried();
  }
  take_head();
  co_return std::nullopt;
}

void h2_upstream_hop::take_head() {
  head_.result(*conn_->status());
  for (const auto& [name, value] : conn_->fields()) {
    if (name.starts_with(':')) continue;
    head_.insert(name, value);
    if (name == "content-length") {
      std::uint64_t n = 0;
      auto [end, err] = std::from_chars(value.data(), value.data() + value.size(), n);
      if (err == std::errc() && end == value.data() + value.size()) length_ = n;
    }
  }
}

proxy_error h2_upstream_hop::failure_of(const error_code& ec, std::string_view while_doing) const {
  if (ec == beast::error::timeout) return {error_kind::upstream_timeout, "upstream timed out " + std::string(while_doing)};
  const auto why = conn_ ? conn_->failure().value_or("connection") : "connection";
  // An HTTP/1.x server answers the preface in its own protocol, or closes
  // the connection without a byte (an HTTP/2 server sends its SETTINGS first).
  const bool closed_unheard = conn_ && !conn_->heard() && !conn_->status() &&
                              (ec == asio::error::eof || ec == asio::error::connection_reset);
  if (conn_ && (conn_->answered_http1() || closed_unheard))
    return {error_kind::upstream_no_h2, "upstream did not answer over HTTP/2 (h2c with prior knowledge) " +
                                            std::string(while_doing) + "; a request signed over HTTP/2 pseudo-headers "
                                            "cannot verify over HTTP/1.1, so it was not sent another way"};
  if (ec) return {error_kind::upstream_reset, "upstream connection failed " + std::string(while_doing) + ": " + ec.message()};
  return {error_kind::upstream_reset, "upstream HTTP/2 stream failed (" + why + ") " + std::string(while_doing)};
}

awaitable<std::optional<std::string>> h2_upstream_hop::read_whole(proxy_error& failure) {
  std::string whole;
  for (;;) {
    auto got = co_await read_piece();
    if (got.failure) {
      failure = *got.failure;
      co_return std::nullopt;
    }
    if (whole.size() + got.bytes.size() > max_whole_answer) {
      failure = proxy_error{error_kind::upstream_bad_response, "upstream answer over 64 MiB"};
      fail(failure.type());
      co_return std::nullopt;
    }
    whole.append(got.bytes);
    if (got.done) co_return whole;
  }
}

awaitable<upstream_answer::piece> h2_upstream_hop::read_piece() {
  piece out;
  if (!conn_) {
    out.done = true;
    co_return out;
  }
  conn_->socket().deadline.set(svc_.cfg.stream_idle_timeout);
  const auto ec = co_await conn_->read_more();
  if (watch_.client_gone()) {
    out.failure = proxy_error{error_kind::client_disconnected, "client went away mid-response"};
  } else if (ec || (conn_->body().empty() && !conn_->ended())) {
    out.failure = failure_of(ec, "in the middle of the response");
  }
  if (out.failure) {
    fail(out.failure->type());
    co_return out;
  }
  piece_ = conn_->body();
  conn_->consume();  // held here now: the upstream may send that much more
  out.bytes = piece_;
  out.done = conn_->ended();
  if (out.done && conn_->reusable()) {
    watch_.guard(nullptr);
    pool_.release_h2(std::move(conn_));
  }
  co_return out;
}

void h2_upstream_hop::end(int status, const rewrite::token_usage& usage) {
  watch_.guard(nullptr);
  conn_.reset();
  span_.end(status, usage);
}

void h2_upstream_hop::fail(std::string_view reason) {
  watch_.guard(nullptr);
  if (conn_) conn_->abandon();
  conn_.reset();
  span_.fail(reason);
}

}  // namespace gistproxy::proxy
