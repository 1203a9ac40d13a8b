#include "proxy/sessions/accept_backoff.hpp"

#include <boost/asio/steady_timer.hpp>
#include <boost/asio/this_coro.hpp>
#include <boost/asio/write.hpp>
#include <memory>

namespace gistproxy::proxy {
namespace {

// A client still sending its request when it is answered would meet a reset
// if the connection closed with its bytes unread, and most clients then lose
// the answer. So after the answer, what it sends is read and dropped until it
// closes (it has read the answer), or for at most a second or 8 MiB.
constexpr auto linger_limit = std::chrono::seconds(1);
constexpr std::size_t linger_bytes = 8u << 20;

// How long the answer waits for the request it answers: a client sends it
// as it connects, so it is there, or all but; one that sends nothing is
// answered after this, in full.
constexpr auto request_wait = std::chrono::milliseconds(250);

// Whether the waiting client's request is a HEAD, whose answer is the header
// alone, Content-Length included (RFC 9110 §9.3.2): a body after it would be
// read as the next answer. Peeked, never consumed: the drain reads it.
awaitable<bool> asks_head(const std::shared_ptr<tcp_socket>& client) {
  asio::steady_timer wait(client->get_executor(), request_wait);
  wait.async_wait([weak = std::weak_ptr<tcp_socket>(client)](error_code ec) {
    if (auto c = weak.lock(); c && !ec) c->cancel(ec);
  });
  auto [ec] = co_await client->async_wait(tcp_socket::wait_read, use_nothrow);
  wait.cancel();
  if (ec) co_return false;
  constexpr std::string_view head = "HEAD ";
  char first[head.size()];
  const auto n = client->receive(asio::buffer(first), tcp_socket::message_peek, ec);
  co_return !ec && n == head.size() && std::string_view(first, n) == head;
}

// `client` is the caller's: it outlives this wait.
awaitable<void> answer_and_close(const std::shared_ptr<tcp_socket>& client) {
  asio::steady_timer limit(client->get_executor(), linger_limit);
  // Holds the socket weakly: a wait that fires as the linger ends touches nothing gone.
  limit.async_wait([weak = std::weak_ptr<tcp_socket>(client)](error_code ec) {
    if (auto c = weak.lock(); c && !ec) c->close(ec);
  });
  error_code ignored;
  std::string_view answer = shed_answer();
  const bool head = co_await asks_head(client);
  if (head) answer = answer.substr(0, answer.find("\r\n\r\n") + 4);
  auto [wec, wn] = co_await asio::async_write(*client, asio::buffer(answer), use_nothrow);
  if (!wec) {
    client->shutdown(tcp_socket::shutdown_send, ignored);
    char sink[16384];
    for (std::size_t drained = 0; drained < linger_bytes;) {
      auto [ec, n] = co_await client->async_read_some(asio::buffer(sink), use_nothrow);
      if (ec) break;
      drained += n;
    }
  }
  client->close(ignored);
}

}  // namespace

awaitable<void> accept_backoff::pause(services& svc, const error_code& ec, tcp_acceptor& acceptor,
                                      std::string_view listener) {
  const bool descriptors = is_out_of_descriptors(ec);
  svc.metrics.accept_paused.labels({descriptors ? "descriptors" : "error"}).inc();
  if (!failing_) {  // once per run of failures: a full table must not flood the log
    failing_ = true;
    const std::string fields = "\"listener\":\"" + std::string(listener) + "\",\"error\":\"" + ec.message() + "\"";
    svc.log.log(telemetry::log_level::warn,
                descriptors ? "out of file descriptors: accept failed; new clients are answered 503" : "accept failed",
                fields);
  }
  if (descriptors && reserve_.lend()) {
    // The waiting client, on the reserve's slot. Never a blocking accept: one
    // that left meanwhile must not hang this thread.
    auto client = std::make_shared<tcp_socket>(acceptor.get_executor());
    error_code aec;
    acceptor.non_blocking(true, aec);
    if (!aec) acceptor.accept(*client, aec);
    if (!aec) {
      svc.metrics.accept_shed.labels({listener}).inc();
      co_await answer_and_close(client);
    }
    reserve_.take();
    if (!aec) co_return;  // told at once; the next accept finds the next waiting client, or waits
    if (aec == asio::error::would_block) {
      // Nobody was waiting: accept() fails for lack of a descriptor before
      // it looks. The next client is answered the moment it comes.
      co_await acceptor.async_wait(tcp_acceptor::wait_read, use_nothrow);
      co_return;
    }
  }
  asio::steady_timer timer(co_await asio::this_coro::executor, delay_);
  co_await timer.async_wait(use_nothrow);
  delay_ = std::min(delay_ * 2, max_delay);
}

}  // namespace gistproxy::proxy
