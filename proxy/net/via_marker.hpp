// Forwarding-loop detection (RFC 9110 §7.6.3). Every request gistproxy sends
// upstream carries a Via entry naming this process by a pseudonym drawn at
// start-up ("Via: 1.1 gistproxy-3f9c0a…"); a request that arrives with this
// process's own entry in its Via has come back to the proxy that forwarded
// it (an upstream URL that leads back into it, directly or through gateways)
// and is refused (508) instead of being forwarded again, and again.
//
// Via, not a field of gistproxy's own: RFC 9110 asks every proxy to add
// itself there for exactly this, proxies before and after gistproxy already
// append to it, and upstreams expect it. The pseudonym is random (never the
// host name, a credential or anything configured), so it says nothing but
// "a gistproxy", and only this process's pseudonym is a loop: another
// gistproxy in the chain (wrap chained through a gateway that is a
// gistproxy) has its own and forwards as usual.
#pragma once

#include <string>
#include <string_view>

#include <boost/beast/http/fields.hpp>

namespace gistproxy::proxy {

class via_marker {
 public:
  // A fresh random pseudonym ("gistproxy-" and 16 hex digits).
  via_marker();
  explicit via_marker(std::string pseudonym) : pseudonym_(std::move(pseudonym)) {}

  const std::string& pseudonym() const { return pseudonym_; }
  // The Via entry for a request received as HTTP `version` (Beast's: 10, 11;
  // 20 for HTTP/2): the received protocol, then the pseudonym.
  std::string entry(unsigned version) const;
  // Whether a Via field of `fields` lists an entry received by this process.
  bool seen_in(const boost::beast::http::fields& fields) const;

 private:
  std::string pseudonym_;
};

}  // namespace gistproxy::proxy
