// Streamed answers of requests that offer read_blob: one client stream,
// spliced from every hop by the wire format's stream filter. Text reaches the
// client as it arrives; read_blob calls never do; the end of the turn is sent
// once. Failures after the head went out become the API's own error event.
// The framing (SSE, or Bedrock's binary event-stream) turns each hop's wire
// bytes into the filter's events and its output back into wire bytes.
#include "proxy/exchange/hop_readers.hpp"
#include "rewrite/page_in/hop_text.hpp"
#include "rewrite/stream_framing.hpp"
#include "rewrite/stream_splice.hpp"

namespace gistproxy::proxy {
namespace {

class stream_reader final : public hop_reader {
 public:
  stream_reader(reader_env env, std::unique_ptr<rewrite::stream_filter> filter, rewrite::stream_transport transport)
      : env_(std::move(env)), filter_(std::move(filter)), transport_(transport) {}

  awaitable<hop_read> read(upstream_answer& hop, int hop_index) override {
    if (hop_index == 0) {
      // One client head for all hops: the first hop's fields, streamed.
      if (!co_await env_.out.stream_head(hop.head(), std::nullopt)) co_return client_left(hop);
    } else if (auto refused = not_a_stream(hop)) {
      // Its bytes are not this stream's (an error, or JSON where events were
      // asked for): spliced in, they would corrupt the client's stream.
      hop.fail(refused->type());
      co_await fail(*refused);
      co_return hop_read::stopped();
    }
    rewrite::hop_splice splice(transport_, *filter_, max_pending_event);  // one per hop: each hop is a stream of its own
    for (bool done = false; !done;) {
      auto piece = co_await hop.read_piece();
      if (piece.failure) {
        if (piece.failure->kind == error_kind::client_disconnected) co_return client_left(hop);
        co_await fail(*piece.failure);
        co_return hop_read::stopped();
      }
      done = piece.done;
      const bool followed = !splice.passing_through();
      const std::string to_client = splice.feed(piece.bytes);
      // Counted once, when the hop stops being followed.
      if (followed && splice.passing_through()) env_.stats.degraded_mode(degraded::stream_unparsed);
      if (!co_await env_.out.piece(to_client, false)) co_return client_left(hop);
    }
    hop.end(200, {});
    if (splice.passing_through()) {
      // The upstream's own events, from the one we did not understand on,
      // reached the client as sent, its end included: nothing to add.
      co_await env_.out.piece({}, true);
      co_return hop_read::stopped();
    }
    auto end = filter_->end_hop();
    if (!end.complete) {
      // The stream closed before the end of the turn: the client's stream must
      // not end as if it were complete.
      // Named, not a temporary in the co_await expression (GCC 12 bug 100611 destroys those twice).
      const proxy_error cut{error_kind::upstream_reset, "upstream stream ended before the end of the turn"};
      co_await fail(cut);
      co_return hop_read::stopped();
    }
    hop_read got;
    got.calls = std::move(end.calls);
    got.response = std::move(end.response);
    co_return got;
  }

  awaitable<void> finish(hop_read&) override { co_await env_.out.piece(output_.encode(filter_->finish()), true); }

  awaitable<void> fail(const proxy_error& e) override {
    if (e.kind == error_kind::client_disconnected) co_return co_await env_.out.error(e);
    env_.out.reply().error = e;
    co_await env_.out.piece(output_.error(*filter_, "api_error", "gistproxy: " + e.detail), true);
  }

  // A keep-alive event at once: the client hears the stream is alive.
  awaitable<bool> before_next_hop() override { co_return co_await env_.out.piece(keepalive(), false); }
  // Binary framings have no keep-alive comment: then nothing (and no ticker).
  std::string keepalive() const override { return output_.encode(filter_->keepalive()); }
  rewrite::token_usage usage() const override { return filter_->usage(); }
  // A hop's text went to the client as it came; its start events and the
  // withheld read_blob calls show nothing (a later hop's start is spliced away).
  bool showed(const hop_read& got) const override { return rewrite::answer_shows_text(got.response); }

 private:
  hop_read client_left(upstream_answer& hop) {
    hop.fail("client disconnected");
    return hop_read::stopped();
  }

  // Why a later hop's answer cannot be spliced into the client's stream:
  // an error status, or a body that is not the stream the first hop began
  // (the first hop's kind chose this reader). nullopt when it can.
  std::optional<proxy_error> not_a_stream(const upstream_answer& hop) const {
    if (hop.status() != 200)
      return proxy_error{error_kind::upstream_bad_response,
                         "upstream answered a page-in hop with HTTP " + std::to_string(hop.status())};
    const auto kind = body_kind_of(hop.head());
    const auto expected = transport_ == rewrite::stream_transport::sse ? rewrite::usage_observer::body_kind::sse
                                                                       : rewrite::usage_observer::body_kind::eventstream;
    if (kind == expected) return std::nullopt;
    // The upstream's Content-Type is not echoed: its bytes are not ours to print.
    return proxy_error{error_kind::upstream_bad_response,
                       std::string("upstream answered a page-in hop with ") +
                           (kind == rewrite::usage_observer::body_kind::json ? "JSON" : "another Content-Type") +
                           ", not the stream the turn began"};
  }

  reader_env env_;
  std::unique_ptr<rewrite::stream_filter> filter_;
  rewrite::stream_transport transport_;
  // Encodes what the filter writes outside a hop's events (its end, errors,
  // keep-alives); a reference so the const keepalive() can use it.
  std::unique_ptr<rewrite::stream_framing> output_framing_ = rewrite::make_stream_framing(transport_);
  rewrite::stream_framing& output_ = *output_framing_;
};

}  // namespace

std::unique_ptr<hop_reader> make_stream_reader(reader_env env, std::unique_ptr<rewrite::stream_filter> filter,
                                              rewrite::stream_transport transport) {
  return std::make_unique<stream_reader>(std::move(env), std::move(filter), transport);
}

}  // namespace gistproxy::proxy
