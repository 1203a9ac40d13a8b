// The admin listener's open connections, least recently active first. At
// --admin-max-connections a new connection closes the least recently active
// one: probes and scrapes are short, so whoever has held a connection longest
// without using it yields, and idle connections (however many are opened)
// never lock /healthz out or use up the process's descriptors. Used on the
// admin listener's one thread only.
#pragma once

#include <algorithm>
#include <cstdint>
#include <list>

#include "proxy/net/beast.hpp"

namespace gistproxy::proxy {

// One session's place in the list; lives in the session's frame.
struct admin_connection {
  explicit admin_connection(tcp_stream& s) : stream(s) {}
  tcp_stream& stream;
  bool listed = false;  // false once closed by the limit: the session then ends on its own
  std::list<admin_connection*>::iterator at;
};

class admin_connections {
 public:
  explicit admin_connections(std::size_t limit) : limit_(std::max<std::size_t>(1, limit)) {}

  // A new connection; returns how many it closed to stay within the limit.
  std::size_t open(admin_connection& c) {
    std::size_t closed = 0;
    while (lru_.size() >= limit_) {
      auto* oldest = lru_.front();
      lru_.pop_front();
      oldest->listed = false;
      oldest->stream.close();  // its pending read or write ends with operation_aborted
      ++closed;
    }
    c.at = lru_.insert(lru_.end(), &c);
    c.listed = true;
    return closed;
  }
  // A request arrived on it: the last to be closed.
  void touch(admin_connection& c) {
    if (c.listed) lru_.splice(lru_.end(), lru_, c.at);
  }
  // Its session ends.
  void close(admin_connection& c) {
    if (c.listed) lru_.erase(c.at);
    c.listed = false;
  }
  std::size_t size() const { return lru_.size(); }

 private:
  std::size_t limit_;
  std::list<admin_connection*> lru_;
};

}  // namespace gistproxy::proxy
