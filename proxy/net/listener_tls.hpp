// TLS on the client listener: the certificate, key and optional client CA
// the operator names, loaded into a server context that new connections
// take. A reload swaps in a new context; connections keep the one they took
// until they end. Files that cannot serve (unreadable, a key that does not
// match its certificate, a certificate outside its validity) are refused:
// at start-up with a message, at a reload by keeping the identity in use.
#pragma once

#include <boost/asio/ssl/context.hpp>
#include <cstdint>
#include <memory>
#include <mutex>
#include <optional>
#include <string>
#include <string_view>

#include "proxy/net/beast.hpp"

namespace gistproxy::proxy {

struct tls_files {
  std::string cert;       // PEM: the certificate, then its chain
  std::string key;        // PEM: its private key (unencrypted: nothing can type a passphrase)
  std::string client_ca;  // PEM: CAs client certificates must chain to (empty: none asked for)
};

// What a loaded certificate says, for logs and the expiry gauge.
struct tls_certificate_facts {
  std::string subject;
  std::int64_t not_after = 0;  // Unix seconds
};

// The application protocol a server picks from a client's ALPN list (RFC
// 7301 wire form: length-prefixed names): h2 when offered, else http/1.1,
// else none (the handshake goes on without ALPN; the session then reads
// HTTP/1.1 or the h2 preface as on cleartext). A malformed list picks none.
enum class alpn_choice { none, h2, http1 };
alpn_choice choose_alpn(std::string_view client_list);

class listener_tls {
 public:
  // Throws std::runtime_error saying which file is wrong and why.
  explicit listener_tls(tls_files files);

  // The context a new connection takes; it keeps it however often a reload
  // swaps the current one.
  std::shared_ptr<asio::ssl::context> current() const;
  tls_certificate_facts facts() const;
  // Loads the files again. Nullopt: the new identity serves new connections;
  // else why the files were refused (the old identity keeps serving).
  std::optional<std::string> reload();
  // Whether any file's modification time, size or inode differ from the
  // loaded ones' (a certificate manager's rename counts).
  bool files_changed() const;

 private:
  struct loaded;
  static std::shared_ptr<const loaded> load(const tls_files& files);

  const tls_files files_;
  mutable std::mutex mutex_;  // current() runs on the accept loop, reload() on the signal handler's thread
  std::shared_ptr<const loaded> loaded_;
};

}  // namespace gistproxy::proxy
