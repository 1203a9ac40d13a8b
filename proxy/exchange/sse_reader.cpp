// Streamed answers of requests that offer read_blob: one client stream,
// spliced from every hop by the dialect's stream filter. Text reaches the
// client as it arrives; read_blob calls never do; the end of the turn is sent
// once. Failures after the head went out become the API's own error event.
#include "proxy/exchange/hop_readers.hpp"
#include "rewrite/sse/event_parser.hpp"

namespace gistproxy::proxy {
namespace {

class sse_reader final : public hop_reader {
 public:
  sse_reader(reader_env env, std::unique_ptr<rewrite::stream_filter> filter)
      : env_(std::move(env)), filter_(std::move(filter)) {}

  awaitable<hop_read> read(upstream_answer& hop, int hop_index) override {
    if (hop_index == 0) {
      // One client head for all hops: the first hop's fields, streamed.
      if (!co_await env_.out.stream_head(hop.head(), std::nullopt)) co_return client_left(hop);
    } else if (hop.status() != 200) {
      proxy_error e{error_kind::upstream_bad_response,
                    "upstream answered a page-in hop with HTTP " + std::to_string(hop.status())};
      hop.fail(e.type());
      co_await fail(e);
      co_return hop_read::stopped();
    }
    rewrite::sse::event_parser events;
    for (bool done = false; !done;) {
      auto piece = co_await hop.read_piece();
      if (piece.failure) {
        if (piece.failure->kind == error_kind::client_disconnected) co_return client_left(hop);
        co_await fail(*piece.failure);
        co_return hop_read::stopped();
      }
      done = piece.done;
      std::string to_client = passthrough_ ? std::string(piece.bytes) : filter_events(events, piece.bytes);
      if (!co_await env_.out.piece(to_client, false)) co_return client_left(hop);
    }
    hop.end(200, {});
    if (passthrough_) {
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

  awaitable<void> finish(hop_read&) override { co_await env_.out.piece(filter_->finish(), true); }

  awaitable<void> fail(const proxy_error& e) override {
    if (e.kind == error_kind::client_disconnected) co_return co_await env_.out.error(e);
    env_.out.reply().error = e;
    co_await env_.out.piece(filter_->error_event("api_error", "gistproxy: " + e.detail), true);
  }

  // A keep-alive event at once: the client hears the stream is alive.
  awaitable<bool> before_next_hop() override { co_return co_await env_.out.piece(filter_->keepalive(), false); }
  std::string keepalive() const override { return filter_->keepalive(); }
  rewrite::token_usage usage() const override { return filter_->usage(); }

 private:
  hop_read client_left(upstream_answer& hop) {
    hop.fail("client disconnected");
    return hop_read::stopped();
  }

  // Feeds one piece of a hop's stream through the filter. An event the filter
  // cannot handle (an exception on a shape nobody expected), or an event
  // larger than any API sends, switches the stream to pass-through: from that
  // event on, the upstream's bytes reach the client as sent (fail-open),
  // counted. Never an aborted stream for what we merely did not understand.
  std::string filter_events(rewrite::sse::event_parser& events, std::string_view piece) {
    std::string to_client;
    events.feed(piece, [&](const rewrite::sse::event& e) {
      if (passthrough_) {
        to_client += e.raw;
        return;
      }
      try {
        to_client += filter_->on_event(e);
      } catch (const std::exception&) {
        passthrough_ = true;
        to_client += e.raw;
      }
    });
    if (!passthrough_ && events.pending().size() > max_pending_event) passthrough_ = true;
    if (passthrough_) {
      to_client += events.pending();
      env_.stats.degraded_mode(degraded::stream_unparsed);
    }
    return to_client;
  }

  reader_env env_;
  std::unique_ptr<rewrite::stream_filter> filter_;
  bool passthrough_ = false;
};

}  // namespace

std::unique_ptr<hop_reader> make_sse_reader(reader_env env, std::unique_ptr<rewrite::stream_filter> filter) {
  return std::make_unique<sse_reader>(std::move(env), std::move(filter));
}

}  // namespace gistproxy::proxy
