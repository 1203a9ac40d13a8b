// Keeps the client listener's certificate current without a restart: a
// SIGHUP (the server calls reload) or a change to the files, noticed by a
// once-a-second look at their stamps, loads them again. New connections
// take the new identity; connections already open keep theirs. Refused
// files (unreadable, mismatched, expired) leave the identity in use
// serving, with a log line and gistproxy_tls_reloads_total{result="refused"}.
#pragma once

#include <boost/asio/steady_timer.hpp>
#include <string_view>

#include "proxy/runtime/services.hpp"

namespace gistproxy::proxy {

class tls_reload {
 public:
  // Sets the expiry gauge and starts watching the files (with --tls-cert).
  tls_reload(services& svc, asio::io_context& io);
  void reload(std::string_view trigger);
  void stop();

 private:
  void watch();
  void publish(std::string_view trigger);

  services& svc_;
  asio::steady_timer timer_;
};

}  // namespace gistproxy::proxy
