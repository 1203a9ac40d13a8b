#include "proxy/store/s3/s3_client.hpp"

#include <openssl/ssl.h>

#include <algorithm>
#include <random>
#include <thread>

#include <boost/asio/co_spawn.hpp>
#include <boost/asio/detached.hpp>
#include <boost/asio/ssl.hpp>
#include <boost/beast/ssl.hpp>

#include "proxy/net/beast.hpp"
#include "proxy/net/checked_parser.hpp"
#include "proxy/net/egress_tunnel.hpp"

namespace gistproxy::store::s3 {

namespace asio = proxy::asio;
namespace beast = proxy::beast;
namespace http = proxy::http;
using proxy::error_code;
using tcp = asio::ip::tcp;
using clock = std::chrono::steady_clock;

// ---- location -----------------------------------------------------------------

std::string location::host() const { return path_style ? endpoint.host : bucket + "." + endpoint.host; }

std::string location::host_header() const {
  return path_style ? endpoint.host_header() : bucket + "." + endpoint.host_header();
}

std::string location::bucket_path() const { return path_style ? "/" + bucket + "/" : "/"; }

std::string location::object_path(std::string_view key) const { return bucket_path() + std::string(key); }

namespace {

bool valid_bucket(std::string_view b) {
  if (b.size() < 3 || b.size() > 63) return false;
  for (char c : b)
    if (!((c >= 'a' && c <= 'z') || (c >= '0' && c <= '9') || c == '-' || c == '.')) return false;
  return b.front() != '-' && b.front() != '.' && b.back() != '-' && b.back() != '.';
}

std::string trim_slashes(std::string_view s) {
  while (!s.empty() && s.front() == '/') s.remove_prefix(1);
  while (!s.empty() && s.back() == '/') s.remove_suffix(1);
  return std::string(s);
}

}  // namespace

std::optional<location> parse_location(std::string_view store, std::string_view endpoint_flag, const env_lookup& env,
                                       std::string& error) {
  constexpr std::string_view scheme = "s3://";
  if (store.substr(0, scheme.size()) != scheme) return error = "not an s3:// store", std::nullopt;
  store.remove_prefix(scheme.size());
  location loc;
  auto slash = store.find('/');
  loc.bucket = std::string(store.substr(0, slash));
  if (slash != std::string_view::npos) loc.prefix = trim_slashes(store.substr(slash + 1));
  if (!valid_bucket(loc.bucket))
    return error = "s3://BUCKET: '" + loc.bucket + "' is not a valid bucket name (3-63 of a-z 0-9 . -)", std::nullopt;
  if (loc.prefix.find("//") != std::string::npos) return error = "s3://BUCKET/PREFIX: empty path segment in the prefix", std::nullopt;
  // The prefix names gistproxy's own part of the bucket: dot segments would
  // let an endpoint that normalises paths reach objects outside it, and
  // control characters or backslashes have no place in it.
  for (std::size_t at = 0; at <= loc.prefix.size() && !loc.prefix.empty();) {
    const auto end = std::min(loc.prefix.find('/', at), loc.prefix.size());
    const auto segment = std::string_view(loc.prefix).substr(at, end - at);
    if (segment == "." || segment == "..")
      return error = "s3://BUCKET/PREFIX: '.' and '..' segments are not allowed in the prefix", std::nullopt;
    at = end + 1;
  }
  for (unsigned char c : loc.prefix)
    if (c < 0x20 || c == 0x7f || c == '\\')
      return error = "s3://BUCKET/PREFIX: control characters and backslashes are not allowed in the prefix", std::nullopt;

  for (const char* name : {"AWS_REGION", "AWS_DEFAULT_REGION"})
    if (auto v = env(name); v && !v->empty()) {
      loc.region = *v;
      break;
    }
  std::string endpoint(endpoint_flag);
  for (const char* name : {"AWS_ENDPOINT_URL_S3", "AWS_ENDPOINT_URL"})
    if (auto v = env(name); endpoint.empty() && v && !v->empty()) endpoint = *v;
  loc.path_style = !endpoint.empty();
  if (endpoint.empty()) endpoint = "https://s3." + loc.region + ".amazonaws.com";
  auto url = proxy::parse_http_url(endpoint, error);
  if (!url) return error = "S3 endpoint '" + endpoint + "': " + error, std::nullopt;
  if (!url->base_path.empty()) return error = "S3 endpoint '" + endpoint + "' must not have a path", std::nullopt;
  loc.endpoint = *url;
  return loc;
}

std::optional<credentials> credentials_from_env(const env_lookup& env, std::string& error) {
  credentials c;
  if (auto v = env("AWS_ACCESS_KEY_ID")) c.access_key_id = *v;
  if (auto v = env("AWS_SECRET_ACCESS_KEY")) c.secret_access_key = *v;
  if (auto v = env("AWS_SESSION_TOKEN")) c.session_token = *v;
  if (c.access_key_id.empty() || c.secret_access_key.empty())
    return error = "the S3 store needs AWS_ACCESS_KEY_ID and AWS_SECRET_ACCESS_KEY in the environment", std::nullopt;
  return c;
}


std::string response::header(std::string_view name) const {
  for (const auto& [k, v] : headers)
    if (k == name) return v;
  return {};
}

// ---- connections ----------------------------------------------------------------

struct client::tls_state {
  asio::ssl::context context{asio::ssl::context::tls_client};
};

// One keep-alive connection with its own io_context: the calling thread runs
// it for the duration of one exchange, so any store-pool thread can use any
// idle connection.
struct client::connection {
  asio::io_context ioc;
  std::optional<beast::tcp_stream> tcp;
  std::optional<beast::ssl_stream<beast::tcp_stream>> tls;
  beast::flat_buffer buffer;
  bool open = false;

  beast::tcp_stream& lowest() { return tls ? beast::get_lowest_layer(*tls) : *tcp; }
};

client::client(location where, credentials creds, client_options options, std::function<std::int64_t()> now_seconds)
    : where_(std::move(where)), creds_(std::move(creds)), options_(std::move(options)), now_(std::move(now_seconds)),
      tls_(std::make_unique<tls_state>()) {
  if (!now_)
    now_ = [] { return std::int64_t(std::chrono::duration_cast<std::chrono::seconds>(std::chrono::system_clock::now().time_since_epoch()).count()); };
  auto& ctx = tls_->context;
  ctx.set_options(asio::ssl::context::default_workarounds | asio::ssl::context::no_sslv2 | asio::ssl::context::no_sslv3 |
                  asio::ssl::context::no_tlsv1 | asio::ssl::context::no_tlsv1_1);
  error_code ec;
  ctx.set_default_verify_paths(ec);
  if (ec) throw std::runtime_error("cannot load the system CA store: " + ec.message());
  if (!options_.extra_ca_file.empty()) {
    ctx.load_verify_file(options_.extra_ca_file, ec);
    if (ec) throw std::runtime_error("cannot load the S3 CA file '" + options_.extra_ca_file + "': " + ec.message());
  }
  ctx.set_verify_mode(asio::ssl::verify_peer);
}

client::~client() = default;

std::unique_ptr<client::connection> client::take() {
  {
    std::lock_guard lock(idle_mutex_);
    if (!idle_.empty()) {
      auto c = std::move(idle_.back());
      idle_.pop_back();
      return c;
    }
  }
  auto c = std::make_unique<connection>();
  if (where_.endpoint.tls) c->tls.emplace(c->ioc, tls_->context);
  else c->tcp.emplace(c->ioc);
  return c;
}

void client::give_back(std::unique_ptr<connection> c) {
  std::lock_guard lock(idle_mutex_);
  if (idle_.size() < options_.max_idle_connections) idle_.push_back(std::move(c));
}

namespace {

http::request<http::string_body> build(const location& where, const request& r, const credentials& creds,
                                       std::int64_t now) {
  const std::string path = where.object_path(r.key);
  std::string target = uri_encode(path, true);
  for (std::size_t i = 0; i < r.query.size(); ++i)
    target += (i ? "&" : "?") + uri_encode(r.query[i].first, false) + "=" + uri_encode(r.query[i].second, false);
  http::request<http::string_body> req{http::string_to_verb(r.method), target, 11};
  sigv4_request s{r.method, path, r.query, {{"Host", where.host_header()}}, sha256_hex(r.body)};
  for (const auto& h : r.headers) s.headers.push_back(h);
  sigv4_options opt;
  opt.region = where.region;
  opt.amz_date = amz_date_of(now);
  auto signature = sign(s, creds, opt);
  for (const auto& [k, v] : s.headers) req.set(k, v);
  for (const auto& [k, v] : signature.added_headers) req.set(k, v);
  req.set(http::field::authorization, signature.authorization);
  req.body() = r.body;
  req.keep_alive(true);
  req.prepare_payload();
  return req;
}

template <class Stream>
asio::awaitable<void> exchange(Stream& stream, beast::tcp_stream& lowest, beast::flat_buffer& buffer,
                               http::request<http::string_body>& req, std::uint64_t max_body,
                               std::chrono::steady_clock::time_point deadline, response& out, bool& reusable) {
  constexpr auto nothrow = asio::as_tuple(asio::use_awaitable);
  lowest.expires_at(deadline);
  auto [wec, wn] = co_await http::async_write(stream, req, nothrow);
  if (wec) {
    out.error = wec == beast::error::timeout ? "timed out" : "write: " + wec.message();
    co_return;
  }
  proxy::checked_response_parser<http::string_body> parser;
  parser.body_limit(max_body);
  if (req.method() == http::verb::head) parser.skip(true);
  auto [rec, rn] = co_await http::async_read(stream, buffer, parser, nothrow);
  if (rec) {
    out.error = rec == beast::error::timeout ? "timed out" : "read: " + rec.message();
    co_return;
  }
  auto& res = parser.get();
  out.status = int(res.result_int());
  for (const auto& f : res) {
    std::string name(f.name_string());
    std::transform(name.begin(), name.end(), name.begin(), [](unsigned char c) { return char(std::tolower(c)); });
    out.headers.emplace_back(std::move(name), std::string(f.value()));
  }
  out.body = std::move(res.body());
  // Reused only with nothing read past this answer: leftover bytes would be
  // taken as the next request's answer.
  reusable = res.keep_alive() && buffer.size() == 0;
  lowest.expires_never();
}

}  // namespace

asio::awaitable<bool> client::open(connection& c, clock::time_point deadline, response& out) {
  constexpr auto nothrow = asio::as_tuple(asio::use_awaitable);
  auto fail = [&out](std::string why) {
    out.error = std::move(why);
    return false;
  };
  c.buffer.clear();  // nothing of a closed connection's bytes carries over
  const std::string host = where_.host();
  // Through an egress proxy, the proxy is the address to dial; messages name
  // it by host:port (never its credentials).
  const auto& via = options_.egress;
  const std::string dialled = via ? "egress proxy " + via->name() : host;
  tcp::resolver resolver(c.ioc);
  auto [ec, endpoints] =
      co_await resolver.async_resolve(via ? via->host : host, via ? via->port : where_.endpoint.port, nothrow);
  if (ec) co_return fail("resolve " + dialled + ": " + ec.message());
  c.lowest().expires_at(deadline);
  auto [cec, ep] = co_await c.lowest().async_connect(endpoints, nothrow);
  if (cec) {
    const std::string to = via ? "connect to " + dialled : "connect";
    co_return fail(cec == beast::error::timeout ? to + " timed out" : to + ": " + cec.message());
  }
  if (via)
    if (auto refused = co_await proxy::connect_through(c.lowest(), c.buffer, *via, host, where_.endpoint.port))
      co_return fail(refused->detail);
  if (c.tls) {
    if (!SSL_set_tlsext_host_name(c.tls->native_handle(), host.c_str())) co_return fail("cannot set TLS SNI");
    c.tls->set_verify_callback(asio::ssl::host_name_verification(host));
    auto [hec] = co_await c.tls->async_handshake(asio::ssl::stream_base::client, nothrow);
    if (hec) co_return fail("TLS handshake with " + host + ": " + hec.message());
  }
  c.open = true;
  co_return true;
}

response client::attempt(connection& c, const request& r, clock::time_point deadline) {
  auto req = build(where_, r, creds_, now_());
  response out;
  bool reusable = false;
  asio::co_spawn(
      c.ioc,
      [&]() -> asio::awaitable<void> {
        if (!c.open && !co_await open(c, deadline, out)) co_return;
        if (c.tls) co_await exchange(*c.tls, c.lowest(), c.buffer, req, options_.max_body_bytes, deadline, out, reusable);
        else co_await exchange(*c.tcp, c.lowest(), c.buffer, req, options_.max_body_bytes, deadline, out, reusable);
      },
      [&c](std::exception_ptr) { c.ioc.stop(); });
  c.ioc.restart();
  c.ioc.run();
  if (!reusable) c.open = false;
  if (out.status >= 300) out.error = error_code_of(out.body);
  return out;
}

std::string_view operation_name(const request& r) {
  if (r.method == "PUT") {
    for (const auto& [k, v] : r.headers)
      if (k == "x-amz-copy-source") return "refresh";
    return "put";
  }
  if (r.method == "GET") return r.key.empty() ? "list" : "get";
  if (r.method == "HEAD") return r.key.empty() ? "head_bucket" : "head";
  if (r.method == "DELETE") return "delete";
  return "other";
}

std::string_view result_name(const response& r) {
  if (r.status == 0) return "unreachable";
  if (r.ok()) return "ok";
  if (r.status == 404) return "not_found";
  if (r.status == 412) return "exists";
  return r.status >= 500 ? "server_error" : "client_error";
}

response client::send(const request& r) {
  const auto started = clock::now();
  auto out = send_with_retries(r, started + options_.timeout);
  if (options_.observe)
    options_.observe(operation_name(r), out, std::chrono::duration<double>(clock::now() - started).count());
  return out;
}

response client::send_with_retries(const request& r, clock::time_point deadline) {
  thread_local std::mt19937_64 rng{std::random_device{}()};
  response out;
  for (int attempt_no = 1; attempt_no <= options_.max_attempts; ++attempt_no) {
    auto c = take();
    out = attempt(*c, r, deadline);
    out.attempts = attempt_no;
    if (c->open) give_back(std::move(c));
    const bool retry = out.status == 0 || out.status >= 500;  // 503 SlowDown included; 4xx never
    if (!retry || attempt_no == options_.max_attempts) break;
    // Full jitter: a random wait up to base * 2^(attempt-1), never past the deadline.
    const auto cap = options_.backoff_base * (1 << std::min(attempt_no - 1, 10));
    auto wait = std::chrono::milliseconds(std::uniform_int_distribution<long long>(0, cap.count())(rng));
    if (clock::now() + wait >= deadline) break;
    std::this_thread::sleep_for(wait);
  }
  return out;
}

}  // namespace gistproxy::store::s3
