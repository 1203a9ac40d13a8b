// Timeouts for a shard's sockets without a timer per operation.
//
// Beast's basic_stream arms an Asio timer at the start of every read and
// write and cancels it at the end: a timer-queue insert, a removal, a clock
// read and a cancelled handler to run, per operation (a few per request, one
// per streamed upstream read). Here each socket has one `socket_deadline`;
// arming it stores a time (a coarse clock read), disarming clears it, and one
// timer per shard ticks every `resolution`. A tick walks the sockets only when
// the earliest deadline set since the last walk has come, closing those whose
// deadline passed. Their pending operations then end (operation_aborted or a
// closed descriptor) and `verdict` turns that into beast::error::timeout, as
// Beast would. A timeout fires up to one resolution late: timeouts are seconds.
#pragma once

#include <boost/asio/steady_timer.hpp>
#include <chrono>
#include <cstddef>
#include <optional>

#include "proxy/net/beast.hpp"

namespace gistproxy::proxy {

class socket_deadline;

// The monotonic clock at the kernel tick's resolution (a few ms): enough for
// timeouts and idle ages, and a fraction of the cost of steady_clock, which a
// request read a dozen times (~3% of its CPU on this VM).
struct coarse_clock {
  using duration = std::chrono::nanoseconds;
  using rep = duration::rep;
  using period = duration::period;
  using time_point = std::chrono::time_point<coarse_clock>;
  static constexpr bool is_steady = true;
  static time_point now() noexcept;
};

class deadline_sweeper {
 public:
  using clock = coarse_clock;
  static constexpr std::chrono::milliseconds default_resolution{100};

  explicit deadline_sweeper(std::chrono::milliseconds resolution = default_resolution) : resolution_(resolution) {}
  deadline_sweeper(const deadline_sweeper&) = delete;
  deadline_sweeper& operator=(const deadline_sweeper&) = delete;

  // Sweeps on `ex`'s thread from now on; stop() before that io_context goes.
  void start(executor ex);
  void stop();
  // How many deadlines are armed (walks them all: for tests).
  std::size_t armed() const;

 private:
  friend class socket_deadline;
  void link(socket_deadline& d);
  void unlink(socket_deadline& d);
  void due_at(clock::time_point t);
  void tick();
  void sweep(clock::time_point now);

  std::chrono::milliseconds resolution_;
  std::optional<asio::steady_timer> timer_;
  bool ticking_ = false;
  // Every deadline armed since the last walk, in no particular order (a
  // disarmed one leaves at the next walk: disarming touches no neighbour).
  socket_deadline* head_ = nullptr;
  std::size_t linked_ = 0;
  clock::time_point earliest_ = clock::time_point::max();  // no walk before this
};

// One socket's deadline. The socket (and this) must stay where they are while
// armed; everything runs on the sweeper's thread.
class socket_deadline {
 public:
  socket_deadline(deadline_sweeper& sweeper, tcp_socket& socket) : sweeper_(sweeper), socket_(socket) {}
  ~socket_deadline();
  socket_deadline(const socket_deadline&) = delete;
  socket_deadline& operator=(const socket_deadline&) = delete;

  // Disarms the deadline when it goes out of scope.
  class scope {
   public:
    explicit scope(socket_deadline& d) : d_(&d) {}
    scope(scope&& o) noexcept : d_(o.d_) { o.d_ = nullptr; }
    scope(const scope&) = delete;
    scope& operator=(const scope&) = delete;
    scope& operator=(scope&&) = delete;
    ~scope() {
      if (d_) d_->disarm();
    }

   private:
    socket_deadline* d_;
  };

  // The socket is closed if this is still armed `after` from now (replaces
  // any earlier deadline): around the operations the timeout bounds, until
  // the scope ends (arm) or until disarm() or the next set() (set).
  [[nodiscard]] scope arm(std::chrono::milliseconds after);
  void set(std::chrono::milliseconds after);
  void disarm();
  bool armed() const { return due_ != deadline_sweeper::clock::time_point::max(); }
  // Whether a deadline passed and closed the socket.
  bool expired() const { return expired_; }
  // The error an operation ended with, as the caller should see it.
  error_code verdict(error_code ec) const { return expired_ && ec ? error_code(beast::error::timeout) : ec; }

 private:
  friend class deadline_sweeper;
  deadline_sweeper& sweeper_;
  tcp_socket& socket_;
  deadline_sweeper::clock::time_point due_ = deadline_sweeper::clock::time_point::max();  // max: disarmed
  bool linked_ = false;
  bool expired_ = false;
  socket_deadline* prev_ = nullptr;
  socket_deadline* next_ = nullptr;
};

}  // namespace gistproxy::proxy
