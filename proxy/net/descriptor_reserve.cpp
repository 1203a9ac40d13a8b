#include "proxy/net/descriptor_reserve.hpp"

#include <fcntl.h>
#include <unistd.h>

#include <atomic>
#include <cerrno>
#include <chrono>
#include <cstdint>

#include "proxy/net/proxy_error.hpp"
#include "telemetry/access_log.hpp"

namespace gistproxy::proxy {

bool is_out_of_descriptors(const error_code& ec) {
  return ec == asio::error::no_descriptors ||
         (ec.category() == asio::error::get_system_category() && ec.value() == ENFILE);
}

descriptor_reserve::descriptor_reserve() { take(); }

descriptor_reserve::~descriptor_reserve() {
  if (fd_ >= 0) ::close(fd_);
}

void descriptor_reserve::take() {
  if (fd_ < 0) fd_ = ::open("/dev/null", O_RDONLY | O_CLOEXEC);
}

bool descriptor_reserve::lend() {
  take();  // lost earlier (another thread took the slot): maybe free again
  if (fd_ < 0) return false;
  ::close(fd_);
  fd_ = -1;
  return true;
}

const std::string& shed_answer() {
  static const std::string answer = [] {
    const auto body = proxy_error{error_kind::out_of_descriptors,
                                  "the proxy is out of file descriptors and cannot serve this connection; retry shortly"}
                          .json_body();
    return "HTTP/1.1 503 Service Unavailable\r\nContent-Type: application/json\r\n"
           "x-gistproxy-error: out_of_descriptors\r\nRetry-After: 1\r\nConnection: close\r\nContent-Length: " +
           std::to_string(body.size()) + "\r\n\r\n" + body;
  }();
  return answer;
}

void out_of_descriptors_warning(telemetry::logger& log, std::string_view what) {
  static std::atomic<std::int64_t> last_ms{-1'000'000};
  const auto now_ms =
      std::chrono::duration_cast<std::chrono::milliseconds>(std::chrono::steady_clock::now().time_since_epoch()).count();
  auto last = last_ms.load();
  if (now_ms - last < 1000 || !last_ms.compare_exchange_strong(last, now_ms)) return;
  std::string fields = "\"what\":";
  telemetry::append_json_string(fields, what);
  log.log(telemetry::log_level::warn, "out of file descriptors", fields);
}

}  // namespace gistproxy::proxy
