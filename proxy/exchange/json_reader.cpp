// JSON answers of requests that offer read_blob: each hop's answer is read
// whole and its read_blob calls found before anything reaches the client;
// only the final answer is written, carrying the usage of every hop. An
// answer of a shape nothing expected goes to the client as the upstream sent
// it (fail-open, counted), never a 500 of ours.
#include "proxy/exchange/hop_readers.hpp"
#include "rewrite/json/splice.hpp"
#include "rewrite/json/checked.hpp"
#include "rewrite/json/tree.hpp"

namespace gistproxy::proxy {
namespace {

namespace checked = rewrite::checked;

bool interceptable(const upstream_answer& hop) {
  return hop.status() == 200 && body_kind_of(hop.head()) == rewrite::usage_observer::body_kind::json;
}

class json_reader final : public hop_reader {
 public:
  explicit json_reader(reader_env env) : env_(std::move(env)) {}

  awaitable<hop_read> read(upstream_answer& hop, int hop_index) override {
    if (!interceptable(hop)) {
      // An error status: as the upstream sent it.
      relay_ = make_relay_reader(env_);
      co_return co_await relay_->read(hop, hop_index);
    }
    if (auto length = hop.content_length(); length && *length > max_whole_answer) {
      // Too large to hold, and relaying it uninspected could hand the client
      // a read_blob call: refused (read_whole refuses a longer chunked one).
      const proxy_error too_large{error_kind::upstream_bad_response,
                                  "upstream answer too large to inspect for read_blob calls"};
      hop.fail(too_large.type());
      co_await env_.out.error(too_large);
      co_return hop_read::stopped();
    }
    proxy_error failure;
    auto body = co_await hop.read_whole(failure);
    if (!body) {
      co_await env_.out.error(failure);
      co_return hop_read::stopped();
    }
    hop_index_ = hop_index;
    head_ = hop.head();
    body_ = std::move(*body);
    hop_read got;
    rewrite::token_usage hop_usage;
    try {
      got.response = rewrite::json::parse_checked(body_);
      as_sent_ = !got.response.is_object();  // not ours to touch
      if (!as_sent_) {
        hop_usage = env_.wire->usage_from_response(got.response);
        got.calls = env_.wire->find_blob_calls(got.response, env_.tool).blob_calls;
        rewrite::add_numbers(usage_sum_, checked::member(got.response, env_.wire->usage_member()));
      }
    } catch (const std::exception&) {
      unparsed();
      got = {};
    }
    hop.end(hop.status(), hop_usage);
    got.usage = hop_usage;
    co_return got;
  }

  awaitable<void> finish(hop_read& last) override {
    if (relay_) co_return;  // the relay answered
    std::optional<std::string> changed;
    if (!as_sent_) {
      try {
        auto& response = last.response;
        if (!last.calls.empty()) env_.wire->remove_blob_calls(response, env_.tool);
        if (hop_index_ > 0) response[std::string(env_.wire->usage_member())] = usage_sum_;  // every hop's usage
        const bool echoed = rewrite::restore_echoed(response, env_.echoed);
        if (hop_index_ > 0 || !last.calls.empty() || echoed) changed = checked::dump(response);
        usage_ = env_.wire->usage_from_response(response);
      } catch (const std::exception&) {
        unparsed();
        changed.reset();
      }
    }
    co_await env_.out.whole(head_, changed ? *changed : body_);
  }

  awaitable<void> fail(const proxy_error& e) override { co_await env_.out.error(e); }
  rewrite::token_usage usage() const override { return relay_ ? relay_->usage() : usage_; }
  // Only the final answer is written: the client sees nothing of a hop before it.
  bool showed(const hop_read&) const override { return false; }

 private:
  void unparsed() {
    env_.stats.degraded_mode(degraded::answer_unparsed);
    as_sent_ = true;
  }

  reader_env env_;
  std::unique_ptr<hop_reader> relay_;
  int hop_index_ = 0;
  http::response_header<> head_;
  std::string body_;  // the last hop's answer as the upstream sent it
  bool as_sent_ = false;
  nlohmann::json usage_sum_;
  rewrite::token_usage usage_;
};

}  // namespace

std::unique_ptr<hop_reader> make_json_reader(reader_env env) { return std::make_unique<json_reader>(std::move(env)); }

}  // namespace gistproxy::proxy
