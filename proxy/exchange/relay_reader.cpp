// The degenerate reader: an answer we do not intercept reaches the client as
// the upstream sent it. Small bodies with a Content-Length are read whole and
// written in one go; anything else (SSE, chunked, large) streams through as
// it arrives. Usage is observed on the way.
#include "proxy/exchange/hop_readers.hpp"
#include "rewrite/usage/usage_observer.hpp"

namespace gistproxy::proxy {
namespace {

constexpr std::size_t small_body_limit = 256 * 1024;

class relay_reader final : public hop_reader {
 public:
  explicit relay_reader(reader_env env) : env_(std::move(env)) {}

  awaitable<hop_read> read(upstream_answer& hop, int) override {
    const auto& h = hop.head();
    const unsigned status = h.result_int();
    const bool has_body = !env_.out.head_request() && status != 204 && status != 304;
    const auto kind = body_kind_of(h);
    rewrite::usage_observer observer(env_.wire, kind);
    auto length = hop.content_length();
    const bool small = has_body && length && *length <= small_body_limit && kind != rewrite::usage_observer::body_kind::sse;
    if (small || !has_body) {
      proxy_error failure;
      auto body = co_await hop.read_whole(failure);
      if (!body) {
        co_await env_.out.error(failure);
        co_return hop_read::stopped();
      }
      observer.on_whole_body(*body);
      co_await env_.out.whole(hop.head(), *body);
    } else if (co_await env_.out.stream_head(h, length)) {
      for (;;) {
        auto piece = co_await hop.read_piece();
        if (piece.failure) {
          // The upstream broke mid-response: the client's response ends
          // abnormally (no final chunk, short Content-Length) so its SDK raises.
          env_.out.reply().error = piece.failure;
          env_.out.reply().keep_alive = false;
          co_return hop_read::stopped();
        }
        observer.on_body(piece.bytes);
        if (!co_await env_.out.piece(piece.bytes, piece.done)) {
          hop.fail("client disconnected");
          co_return hop_read::stopped();
        }
        if (piece.done) break;
      }
    }
    usage_ = observer.finish();
    hop.end(int(status), usage_);
    co_return hop_read::stopped();
  }

  awaitable<void> finish(hop_read&) override { co_return; }
  awaitable<void> fail(const proxy_error& e) override { co_await env_.out.error(e); }
  rewrite::token_usage usage() const override { return usage_; }
  bool showed(const hop_read&) const override { return true; }  // bytes as they came

 private:
  reader_env env_;
  rewrite::token_usage usage_;
};

}  // namespace

rewrite::usage_observer::body_kind body_kind_of(const http::response_header<>& h) {
  // The first Content-Type and Content-Encoding, as find() gives them, in one
  // pass comparing field codes: each find() is a search of Beast's tree with
  // case-folding compares, and every answer is asked this more than once.
  std::optional<std::string_view> type, coding;
  for (const auto& f : h) {
    if (!type && f.name() == http::field::content_type) type = std::string_view(f.value());
    else if (!coding && f.name() == http::field::content_encoding) coding = std::string_view(f.value());
  }
  return rewrite::usage_observer::classify(type.value_or(""), coding.value_or(""));
}

std::unique_ptr<hop_reader> make_relay_reader(reader_env env) { return std::make_unique<relay_reader>(std::move(env)); }

}  // namespace gistproxy::proxy
