#include "proxy/exchange/upstream_hop.hpp"

#include <boost/asio/ssl/error.hpp>
#include <boost/asio/write.hpp>

#include "proxy/exchange/exchange_stats.hpp"
#include "proxy/net/buffered_parse.hpp"
#include "proxy/net/client_watch.hpp"
#include "proxy/net/descriptor_reserve.hpp"
#include "proxy/net/http_writer.hpp"
#include "rewrite/content_decoder.hpp"

namespace gistproxy::proxy {
namespace {

constexpr std::size_t relay_buffer_size = 16 * 1024;
// A decoded piece is at most this large: a few compressed bytes can stand for
// gigabytes, so decoding is paced by the reader, never done all at once.
constexpr std::size_t decoded_piece_size = 64 * 1024;

bool has_no_body(unsigned status, http::verb method) {
  return method == http::verb::head || status / 100 == 1 || status == 204 || status == 304;
}

bool is_stale_connection_error(const error_code& ec) {
  return ec == http::error::end_of_stream || ec == asio::error::eof || ec == asio::error::connection_reset ||
         ec == asio::error::broken_pipe || ec == asio::ssl::error::stream_truncated;
}

proxy_error upstream_failure(const error_code& ec, std::string_view while_doing) {
  std::string what(while_doing);
  if (ec == beast::error::timeout) return {error_kind::upstream_timeout, "upstream timed out " + what};
  if (is_stale_connection_error(ec) || ec == http::error::partial_message)
    return {error_kind::upstream_reset, "upstream closed the connection " + what};
  if (ec.category() == http::make_error_code(http::error::bad_version).category())
    return {error_kind::upstream_bad_response, "upstream sent malformed HTTP " + what + ": " + ec.message()};
  if (ec.category() == asio::error::get_ssl_category() || ec.category() == asio::ssl::error::get_stream_category())
    return {error_kind::upstream_tls, "TLS failure " + what + ": " + ec.message()};
  return {error_kind::upstream_reset, "upstream connection failed " + what + ": " + ec.message()};
}

// Adds the time from its construction to stop() (or its end) to a request's
// upstream wait. Not a coroutine wrapping the operation: that cost a frame
// allocation and a resumption per upstream read.
class wait_clock {
 public:
  explicit wait_clock(std::chrono::nanoseconds& total) : total_(total), started_(std::chrono::steady_clock::now()) {}
  ~wait_clock() { stop(); }
  wait_clock(const wait_clock&) = delete;
  wait_clock& operator=(const wait_clock&) = delete;
  void stop() {
    if (stopped_) return;
    stopped_ = true;
    total_ += std::chrono::steady_clock::now() - started_;
  }

 private:
  std::chrono::nanoseconds& total_;
  std::chrono::steady_clock::time_point started_;
  bool stopped_ = false;
};

// RFC 9110 §9.2.2.
bool idempotent(http::verb v) {
  return v == http::verb::get || v == http::verb::head || v == http::verb::options || v == http::verb::put ||
         v == http::verb::delete_ || v == http::verb::trace;
}

// The SigV4 fields of a hop gistproxy signs: over the body this hop sends.
void sign_for_aws(const services& svc, const request_context& ctx, const http_url& target, std::string_view path,
                  std::string_view body, head_builder& head) {
  const auto now = std::chrono::duration_cast<std::chrono::seconds>(std::chrono::system_clock::now().time_since_epoch());
  for (const auto& [name, value] : svc.aws->sign(ctx.in.request.method_string(), target.host_header(), path, body,
                                                 ctx.in.endpoint->upstream().sigv4_service, now.count()))
    head.field(name, value);
}

// The target as its provider spells it: a --compatible provider's PREFIX
// names it at gistproxy only, and its URL's path stands there instead.
std::string_view provider_target(const request_context& ctx) {
  auto target = std::string_view(ctx.in.request.target());
  if (!ctx.in.local_prefix.empty() && target.starts_with(ctx.in.local_prefix)) target.remove_prefix(ctx.in.local_prefix.size());
  return target;
}

std::string upstream_request_head(const services& svc, const request_context& ctx, const http_url& target,
                                  const telemetry::span& span, std::string_view body, bool decode_answer) {
  const auto& req = ctx.in.request;
  const std::size_t body_size = body.size();
  // Our traceparent (a child of the client's) replaces the client's, unless
  // the client signed its headers (it may have signed that one).
  const bool client_signed = ctx.in.aws == aws_auth::client_signed;
  const std::string_view traceparent = ctx.in.client_parent && !client_signed ? "traceparent" : "";
  // An answer gistproxy must read is asked for only in codings it decodes.
  const std::string_view accept_encoding = decode_answer ? "Accept-Encoding" : "";
  const bool signs = ctx.in.aws == aws_auth::proxy_signs && svc.aws;
  // A request gistproxy signs carries gistproxy's identity only: the
  // client's SigV4 query parameters go too (aws_signing.hpp).
  const std::string unsigned_target = signs ? without_sigv4_query(provider_target(ctx)) : std::string();
  const std::string path = target.join(signs ? std::string_view(unsigned_target) : provider_target(ctx));
  auto head = head_builder::request(req.method_string(), path, head_size_hint(req));
  // These modes are chosen because Authorization is absent or blank: a blank
  // one is dropped, never forwarded beside (or instead of) a signature of ours.
  const bool drops_authorization = ctx.in.aws == aws_auth::proxy_signs || ctx.in.aws == aws_auth::anonymous;
  // Fields naming or proving a client's AWS identity, which a signature of
  // ours replaces (a client that sent no credentials may still send them).
  // gistproxy's own control headers are for gistproxy: never forwarded.
  head.end_to_end_fields_of(req, {traceparent, accept_encoding, drops_authorization ? "Authorization" : "",
                                  signs ? "X-Amz-Date" : "", signs ? "X-Amz-Security-Token" : "",
                                  signs ? "X-Amz-Content-Sha256" : "", bypass_header, threshold_header})
      .field("Host", target.host_header())
      // After the client's own Via fields: the list stays in the order of the hops.
      .field("Via", svc.via.entry(req.version()));
  if (signs) sign_for_aws(svc, ctx, target, path, body, head);
  if (decode_answer) {
    auto it = req.find(http::field::accept_encoding);
    head.field("Accept-Encoding", rewrite::decodable_accept_encoding(
                                      it == req.end() ? std::nullopt : std::optional<std::string_view>(it->value())));
  }
  if (body_size || req.method() == http::verb::post || req.method() == http::verb::put ||
      req.method() == http::verb::patch)
    head.content_length(body_size);
  if (!traceparent.empty())
    head.field("traceparent", telemetry::format_traceparent(span.trace, span.id, ctx.in.client_parent->flags));
  return std::move(head).finish();
}

}  // namespace

bool intercepts_answers(const services& svc, const request_context& ctx) {
  if (ctx.in.request.method() == http::verb::head) return false;
  // A read of stored Responses state is shown as the client's (stored_state.hpp).
  if (ctx.stored.read) return true;
  // A turn chained on one whose stored state gistproxy changed is read too:
  // its id names a turn whose reads must show the client's own.
  const bool reads_answer = (ctx.offers_read_blob() && svc.store) || ctx.stored.chains;
  return reads_answer && ctx.in.endpoint;
}

upstream_hop::upstream_hop(services& svc, upstream_pool& pool, request_context& ctx, client_watch& watch, int hop)
    : svc_(svc),
      pool_(pool),
      ctx_(ctx),
      watch_(watch),
      span_(svc, ctx, hop),
      // Interception armed: the answer may carry a read_blob call, so it must
      // be read, whatever coding it comes in.
      decode_answer_(intercepts_answers(svc, ctx)) {
  if (!span_->recording) return;
  span_->set("server.address", pool.target().host);
  span_->set("server.port", std::int64_t(std::stoi(pool.target().port)));
  if (pool.via()) span_->set_text("gistproxy.egress_proxy", pool.via()->name());  // host:port only
}

upstream_hop::~upstream_hop() {
  if (!span_.ended()) fail(watch_.client_gone() ? "client disconnected" : "abandoned");
}

awaitable<std::optional<proxy_error>> upstream_hop::send(const std::string& body) {
  const auto method = ctx_.in.request.method();
  const std::string head = upstream_request_head(svc_, ctx_, pool_.target(), span_.get(), body, decode_answer_);
  std::optional<proxy_error> failure;
  // A pooled connection the upstream closed while idle fails before any
  // response byte: the request was never processed, so it is retried once on
  // a fresh connection.
  for (int attempt = 0; attempt < 2 && !watch_.client_gone(); ++attempt) {
    // Connecting, sending and waiting for the head: all upstream time.
    wait_clock waiting(ctx_.upstream.wait);
    auto lease = co_await pool_.acquire(attempt > 0);
    if (lease.error) {
      if (lease.error->kind == error_kind::out_of_descriptors) out_of_descriptors_warning(svc_.log, lease.error->detail);
      failure = lease.error;
      break;
    }
    conn_ = std::move(lease.connection);
    watch_.guard(conn_.get());
    span_->set("gistproxy.connection_reused", conn_->reused);
    auto& conn = *conn_;
    conn.deadline.set(svc_.cfg.upstream_timeout);  // for the request and the response head
    std::array<asio::const_buffer, 2> request_bytes{asio::buffer(head), asio::buffer(body)};
    auto [wec, wn] = co_await conn.with_stream([&](auto& s) { return asio::async_write(s, request_bytes, use_nothrow); });
    error_code rec = conn.deadline.verdict(wec);
    if (!wec) {
      // Skip interim 1xx responses (we never send Expect, but an upstream may still).
      do {
        head_ = std::make_unique<checked_response_parser<http::empty_body>>();
        head_->body_limit(boost::none);
        head_->header_limit(64 * 1024);
        if (method == http::verb::head) head_->skip(true);
        auto [ec, n] =
            co_await conn.with_stream([&](auto& s) { return http::async_read_header(s, conn.buffer, *head_, use_nothrow); });
        rec = conn.deadline.verdict(ec);
      } while (!rec && head_->get().result_int() / 100 == 1 && head_->get().result_int() != 101);
    }
    waiting.stop();
    if (!rec && head_->get().result_int() == 101) {
      // gistproxy never forwards an Upgrade (it is hop-by-hop), so a 101 is
      // an answer nobody asked for: relaying it would hand the client a
      // protocol switch with an HTTP body framing.
      watch_.guard(nullptr);
      conn_.reset();
      co_return proxy_error{error_kind::upstream_bad_response, "upstream switched protocols (101) unasked"};
    }
    if (!rec) {
      if (auto length = head_->content_length()) length_ = *length;
      note_framing();
      if (auto refused = start_decoding()) {
        watch_.guard(nullptr);
        conn_.reset();
        co_return refused;
      }
      co_return std::nullopt;
    }
    // A request that failed while being written cannot have been processed
    // (the upstream never had its whole body). One that was written whole
    // may have been, even if the connection then closed without an answer:
    // retrying a POST then could bill the call twice, so only idempotent
    // methods are retried past that point.
    const bool complete_request_sent = !wec;
    const bool retry = conn.reused && attempt == 0 && is_stale_connection_error(rec) &&
                       (!complete_request_sent || idempotent(method));
    failure = upstream_failure(rec, wec ? "while receiving the request" : "before sending response headers");
    watch_.guard(nullptr);
    conn_.reset();
    if (!retry) break;
    exchange_stats(svc_.metrics, ctx_.in.api).upstream_connection_retried();
  }
  if (watch_.client_gone())
    failure = proxy_error{error_kind::client_disconnected, "client closed the connection; upstream request cancelled"};
  co_return failure;
}

void upstream_hop::note_framing() {
  // A connection is reused only after an answer whose end its own framing
  // marks (Content-Length or chunked). After a HEAD, 1xx, 204 or 304 answer
  // any bytes the upstream adds would be taken as the next client's answer,
  // and a bodiless answer cannot show they are not coming: such a connection
  // is not reused.
  const auto& h = head_->get();
  const bool no_body = has_no_body(h.result_int(), ctx_.in.request.method());
  framed_exactly_ = !no_body && (head_->chunked() || head_->content_length().has_value());
}

std::optional<proxy_error> upstream_hop::start_decoding() {
  auto& h = head_->get();
  auto field = h.find(http::field::content_encoding);
  if (!decode_answer_ || field == h.end() || has_no_body(h.result_int(), ctx_.in.request.method()))
    return std::nullopt;
  const auto coding = rewrite::parse_content_coding(field->value());
  if (!coding) {
    // Asked only for codings gistproxy decodes, the upstream sent another: the
    // answer cannot be inspected and may carry a read_blob call, so it is not
    // relayed.
    return proxy_error{error_kind::upstream_bad_response,
                       "upstream answered in a Content-Encoding gistproxy did not ask for and cannot read"};
  }
  if (*coding == rewrite::content_coding::identity) return std::nullopt;
  decoder_ = std::make_unique<rewrite::content_decoder>(*coding);
  exchange_stats(svc_.metrics, ctx_.in.api).upstream_answer_decoded(rewrite::coding_name(*coding));
  // The client gets the decoded bytes: no coding, a length only known at the end.
  h.erase(http::field::content_encoding);
  h.erase(http::field::content_length);
  length_.reset();
  return std::nullopt;
}

const http::response_header<>& upstream_hop::head() const {
  if (whole_) return whole_->get();
  if (stream_) return stream_->get();
  return head_->get();
}

void upstream_hop::release_if_clean(bool clean) {
  watch_.guard(nullptr);
  if (clean && conn_ && !watch_.client_gone()) {
    if (framed_exactly_) pool_.release(std::move(conn_));
    else pool_.discard("unframed");
  }
  conn_.reset();
}

awaitable<std::optional<std::string>> upstream_hop::read_whole(proxy_error& failure) {
  whole_ = std::make_unique<checked_response_parser<http::string_body>>(std::move(*head_));
  whole_->body_limit(max_whole_answer);
  conn_->deadline.set(svc_.cfg.stream_idle_timeout);  // for the whole body
  if (!whole_->is_done()) {
    auto& conn = *conn_;
    wait_clock reading(ctx_.upstream.wait);
    error_code read_ec = parse_buffered(*whole_, conn.buffer);  // a small answer came with its head
    if (!read_ec && !whole_->is_done()) {
      const auto remaining = whole_->content_length_remaining();  // none when chunked
      conn.wants_large_reads(remaining ? std::optional<std::uint64_t>(*remaining) : std::nullopt);
      auto [ec, n] =
          co_await conn.with_stream([&](auto& s) { return http::async_read(s, conn.buffer, *whole_, use_nothrow); });
      read_ec = ec;
    }
    reading.stop();
    const error_code ec = conn.deadline.verdict(read_ec);
    if (ec) {
      failure = upstream_failure(ec, "while sending the response body");
      fail(failure.type());
      co_return std::nullopt;
    }
  }
  release_if_clean(whole_->keep_alive() && whole_->is_done());
  if (!decoder_) co_return std::move(whole_->get().body());
  auto decoded = rewrite::content_decoder::decode_whole(decoder_->coding(), whole_->get().body(), max_whole_answer);
  if (!decoded) {
    failure = proxy_error{error_kind::upstream_bad_response,
                          "upstream sent a compressed answer that is corrupt, cut short or over 64 MiB decoded"};
    fail(failure.type());
    co_return std::nullopt;
  }
  co_return std::move(*decoded);
}

awaitable<upstream_answer::piece> upstream_hop::read_piece() {
  if (!decoder_) co_return co_await read_raw_piece();
  // Decoded pieces: what the decoder holds first, then more compressed bytes.
  for (;;) {
    piece out;
    if (decoder_->pending()) {
      decoded_.clear();
      if (!decoder_->decode(decoded_, decoded_piece_size)) co_return corrupt_answer();
      if (decoded_.empty()) continue;
      out.bytes = decoded_;
      co_return out;
    }
    if (raw_done_) {
      if (!decoder_->complete()) co_return corrupt_answer();
      out.done = true;
      co_return out;
    }
    auto raw = co_await read_raw_piece();
    if (raw.failure) co_return raw;
    decoder_->feed(raw.bytes);
    raw_done_ = raw.done;
  }
}

upstream_answer::piece upstream_hop::corrupt_answer() {
  piece out;
  out.failure = proxy_error{error_kind::upstream_bad_response, "upstream sent a corrupt or truncated compressed answer"};
  fail(out.failure->type());
  return out;
}

awaitable<upstream_answer::piece> upstream_hop::read_raw_piece() {
  if (!stream_) {
    stream_ = std::make_unique<checked_response_parser<http::buffer_body>>(std::move(*head_));
    buffer_.reset(new char[relay_buffer_size]);  // default-initialised: no memset
  }
  piece out;
  if (stream_->is_done() || !conn_) {
    out.done = true;
    co_return out;
  }
  auto& body = stream_->get().body();
  body.data = buffer_.get();
  body.size = relay_buffer_size;
  auto& conn = *conn_;
  conn.deadline.set(svc_.cfg.stream_idle_timeout);
  wait_clock reading(ctx_.upstream.wait);
  auto [read_ec, n] =
      co_await conn.with_stream([&](auto& s) { return http::async_read_some(s, conn.buffer, *stream_, use_nothrow); });
  reading.stop();
  error_code ec = conn.deadline.verdict(read_ec);
  if (ec == http::error::need_buffer) ec = {};
  if (ec) {
    out.failure = watch_.client_gone()
                      ? proxy_error{error_kind::client_disconnected, "client went away mid-response"}
                      : upstream_failure(ec, "in the middle of the response");
    fail(out.failure->type());
    co_return out;
  }
  out.bytes = std::string_view(buffer_.get(), relay_buffer_size - body.size);
  out.done = stream_->is_done();
  if (out.done) release_if_clean(stream_->keep_alive());
  co_return out;
}

void upstream_hop::end(int status, const rewrite::token_usage& usage) { span_.end(status, usage); }

void upstream_hop::fail(std::string_view reason) {
  watch_.guard(nullptr);
  conn_.reset();
  span_.fail(reason);
}

}  // namespace gistproxy::proxy
