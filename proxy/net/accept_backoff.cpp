#include "proxy/net/accept_backoff.hpp"

#include <cerrno>

#include <boost/asio/steady_timer.hpp>
#include <boost/asio/this_coro.hpp>

namespace gistproxy::proxy {

awaitable<void> accept_backoff::pause(services& svc, const error_code& ec, std::string_view listener) {
  const bool descriptors = ec == asio::error::no_descriptors || ec.value() == ENFILE;
  svc.metrics.accept_paused.labels({descriptors ? "descriptors" : "error"}).inc();
  if (delay_ == first_delay)  // once per run of failures: a full table must not flood the log
    svc.log.log(telemetry::log_level::warn, "accept failed",
                "\"listener\":\"" + std::string(listener) + "\",\"error\":\"" + ec.message() + "\"");
  asio::steady_timer timer(co_await asio::this_coro::executor, delay_);
  co_await timer.async_wait(use_nothrow);
  delay_ = std::min(delay_ * 2, max_delay);
}

}  // namespace gistproxy::proxy
