#include "proxy/services.hpp"

namespace gistproxy::proxy {
namespace {

upstream_timeouts timeouts_of(const config& c) { return {c.connect_timeout, c.max_idle_upstream}; }

}  // namespace

shard::shard(services& s)
    : services_(s),
      io_(std::make_unique<asio::io_context>(1)),
      default_pool_(io_->get_executor(), s.default_upstream, s.default_upstream.tls ? s.tls : nullptr,
                    timeouts_of(s.cfg), s.metrics),
      anthropic_pool_(io_->get_executor(), s.anthropic_upstream, s.anthropic_upstream.tls ? s.tls : nullptr,
                      timeouts_of(s.cfg), s.metrics) {}

shard::~shard() {
  default_pool_.close_idle();
  anthropic_pool_.close_idle();
  stopping_ = true;
  io_.reset();
}

upstream_pool& shard::pool_for(const rewrite::dialect* d) {
  return d && d->kind() == rewrite::api_kind::messages ? anthropic_pool_ : default_pool_;
}

void shard::close_idle() {
  for (auto& s : sessions_) {
    if (!s.busy && s.socket) {
      error_code ignored;
      s.socket->shutdown(tcp::socket::shutdown_both, ignored);
      s.socket->close(ignored);
    }
  }
  default_pool_.close_idle();
  anthropic_pool_.close_idle();
}

}  // namespace gistproxy::proxy
