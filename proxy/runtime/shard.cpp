#include "proxy/runtime/services.hpp"

namespace gistproxy::proxy {
namespace {

upstream_timeouts timeouts_of(const config& c) { return {c.connect_timeout, c.max_idle_upstream}; }

}  // namespace

shard::shard(services& s) : services_(s), io_(std::make_unique<asio::io_context>(1)) {
  deadlines_.start(io_->get_executor());
  sweeper_.emplace(*io_, std::chrono::seconds(1));
  for (const auto& u : s.upstreams)
    pools_.push_back(std::make_unique<upstream_pool>(io_->get_executor(), deadlines_, u.url,
                                                     u.url.tls ? s.tls : nullptr, timeouts_of(s.cfg), s.metrics, u.via));
}

shard::~shard() {
  for (auto& p : pools_) p->close_idle();
  stopping_ = true;
  deadlines_.stop();
  sweeper_.reset();
  io_.reset();
}

upstream_pool* shard::pool_for(std::string_view family) {
  for (std::size_t i = 0; i < pools_.size(); ++i)
    if (services_.upstreams[i].family == family) return pools_[i].get();
  return nullptr;
}

void shard::close_idle() {
  for (auto& s : sessions_) {
    if (s.drain) s.drain();
    else if (!s.busy && s.socket) {
      error_code ignored;
      s.socket->shutdown(tcp_socket::shutdown_both, ignored);
      s.socket->close(ignored);
    }
  }
  for (auto& p : pools_) p->close_idle();
}

}  // namespace gistproxy::proxy
