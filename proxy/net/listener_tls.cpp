#include "proxy/net/listener_tls.hpp"

#include <openssl/err.h>
#include <openssl/ssl.h>
#include <openssl/x509.h>
#include <sys/stat.h>

#include <array>
#include <stdexcept>
#include <vector>

namespace gistproxy::proxy {
namespace {

// TLS 1.2's suites with forward secrecy and an AEAD (Mozilla's
// "intermediate" list); TLS 1.3's are OpenSSL's defaults, all of that kind.
constexpr const char* tls12_ciphers =
    "ECDHE-ECDSA-AES128-GCM-SHA256:ECDHE-RSA-AES128-GCM-SHA256:ECDHE-ECDSA-AES256-GCM-SHA384:"
    "ECDHE-RSA-AES256-GCM-SHA384:ECDHE-ECDSA-CHACHA20-POLY1305:ECDHE-RSA-CHACHA20-POLY1305";

struct file_stamp {
  std::string path;
  struct stat st {};
  bool exists = false;
};

file_stamp stamp_of(const std::string& path) {
  file_stamp s{path};
  s.exists = ::stat(path.c_str(), &s.st) == 0;
  return s;
}

std::vector<file_stamp> stamps_of(const tls_files& files) {
  std::vector<file_stamp> out;
  for (const auto* path : {&files.cert, &files.key, &files.client_ca})
    if (!path->empty()) out.push_back(stamp_of(*path));
  return out;
}

bool same_stamp(const file_stamp& a, const file_stamp& b) {
  if (a.exists != b.exists) return false;
  if (!a.exists) return true;
  return a.st.st_ino == b.st.st_ino && a.st.st_size == b.st.st_size && a.st.st_mtim.tv_sec == b.st.st_mtim.tv_sec &&
         a.st.st_mtim.tv_nsec == b.st.st_mtim.tv_nsec;
}

// OpenSSL's queued errors as one line (they name files and reasons, never key bytes).
std::string openssl_errors() {
  std::string out;
  while (unsigned long e = ERR_get_error()) {
    std::array<char, 256> text{};
    ERR_error_string_n(e, text.data(), text.size());
    if (!out.empty()) out += "; ";
    out += text.data();
  }
  return out.empty() ? "unknown error" : out;
}

[[noreturn]] void refuse(const std::string& what) {
  throw std::runtime_error(what + ": " + openssl_errors());
}

// Called by OpenSSL (C): noexcept, as every callback handed to a C library
// (choose_alpn only compares bytes).
int select_alpn(SSL*, const unsigned char** out, unsigned char* outlen, const unsigned char* in, unsigned inlen,
                void*) noexcept {
  static constexpr unsigned char h2[] = {'h', '2'};
  static constexpr unsigned char http1[] = {'h', 't', 't', 'p', '/', '1', '.', '1'};
  switch (choose_alpn(std::string_view(reinterpret_cast<const char*>(in), inlen))) {
    case alpn_choice::h2: *out = h2, *outlen = sizeof h2; return SSL_TLSEXT_ERR_OK;
    case alpn_choice::http1: *out = http1, *outlen = sizeof http1; return SSL_TLSEXT_ERR_OK;
    case alpn_choice::none: break;
  }
  return SSL_TLSEXT_ERR_NOACK;
}

// A passphrase-protected key would make OpenSSL prompt on the terminal; a
// proxy has none to prompt on, so it is refused instead.
int no_passphrase(char*, int, int, void*) noexcept { return 0; }

std::int64_t unix_seconds(const ASN1_TIME* t) {
  std::tm tm{};
  if (!t || ASN1_TIME_to_tm(t, &tm) != 1) return 0;
  return std::int64_t(timegm(&tm));
}

tls_certificate_facts check_validity(SSL_CTX* c, const std::string& cert_path) {
  X509* leaf = SSL_CTX_get0_certificate(c);
  if (!leaf) throw std::runtime_error("--tls-cert " + cert_path + ": no certificate");
  if (X509_cmp_current_time(X509_get0_notAfter(leaf)) <= 0)
    throw std::runtime_error("--tls-cert " + cert_path + ": the certificate has expired");
  if (X509_cmp_current_time(X509_get0_notBefore(leaf)) >= 0)
    throw std::runtime_error("--tls-cert " + cert_path + ": the certificate is not valid yet");
  tls_certificate_facts facts;
  std::array<char, 256> name{};
  X509_NAME_oneline(X509_get_subject_name(leaf), name.data(), int(name.size()));
  facts.subject = name.data();
  facts.not_after = unix_seconds(X509_get0_notAfter(leaf));
  return facts;
}

void require_client_certificates(SSL_CTX* c, const std::string& ca) {
  if (SSL_CTX_load_verify_locations(c, ca.c_str(), nullptr) != 1) refuse("--tls-client-ca " + ca);
  STACK_OF(X509_NAME)* names = SSL_load_client_CA_file(ca.c_str());
  if (!names) refuse("--tls-client-ca " + ca + ": no CA certificate");
  SSL_CTX_set_client_CA_list(c, names);  // takes ownership
  SSL_CTX_set_verify(c, SSL_VERIFY_PEER | SSL_VERIFY_FAIL_IF_NO_PEER_CERT, nullptr);
  // Resumed sessions must have been verified the same way (OpenSSL refuses
  // to resume without an id context once peers are verified).
  static constexpr unsigned char context[] = "gistproxy-listener";
  SSL_CTX_set_session_id_context(c, context, sizeof context - 1);
}

}  // namespace

alpn_choice choose_alpn(std::string_view list) {
  bool http1 = false;
  while (!list.empty()) {
    const std::size_t n = static_cast<unsigned char>(list.front());
    if (n == 0 || n + 1 > list.size()) return alpn_choice::none;  // malformed: nothing chosen
    const std::string_view name = list.substr(1, n);
    if (name == "h2") return alpn_choice::h2;
    http1 = http1 || name == "http/1.1";
    list.remove_prefix(n + 1);
  }
  return http1 ? alpn_choice::http1 : alpn_choice::none;
}

struct listener_tls::loaded {
  std::shared_ptr<asio::ssl::context> context;
  tls_certificate_facts facts;
  std::vector<file_stamp> stamps;
};

std::shared_ptr<const listener_tls::loaded> listener_tls::load(const tls_files& files) {
  auto out = std::make_shared<loaded>();
  out->stamps = stamps_of(files);
  ERR_clear_error();
  out->context = std::make_shared<asio::ssl::context>(asio::ssl::context::tls_server);
  SSL_CTX* c = out->context->native_handle();
  SSL_CTX_set_min_proto_version(c, TLS1_2_VERSION);
  SSL_CTX_set_options(c, SSL_OP_NO_COMPRESSION | SSL_OP_NO_RENEGOTIATION | SSL_OP_CIPHER_SERVER_PREFERENCE);
  if (SSL_CTX_set_cipher_list(c, tls12_ciphers) != 1) refuse("TLS 1.2 cipher list");
  SSL_CTX_set_default_passwd_cb(c, no_passphrase);
  if (SSL_CTX_use_certificate_chain_file(c, files.cert.c_str()) != 1) refuse("--tls-cert " + files.cert);
  if (SSL_CTX_use_PrivateKey_file(c, files.key.c_str(), SSL_FILETYPE_PEM) != 1) refuse("--tls-key " + files.key);
  if (SSL_CTX_check_private_key(c) != 1)
    throw std::runtime_error("--tls-key " + files.key + " is not the key of --tls-cert " + files.cert);
  out->facts = check_validity(c, files.cert);
  if (!files.client_ca.empty()) require_client_certificates(c, files.client_ca);
  SSL_CTX_set_alpn_select_cb(c, select_alpn, nullptr);
  return out;
}

listener_tls::listener_tls(tls_files files) : files_(std::move(files)), loaded_(load(files_)) {}

std::shared_ptr<asio::ssl::context> listener_tls::current() const {
  std::lock_guard lock(mutex_);
  return loaded_->context;
}

tls_certificate_facts listener_tls::facts() const {
  std::lock_guard lock(mutex_);
  return loaded_->facts;
}

std::optional<std::string> listener_tls::reload() {
  std::shared_ptr<const loaded> fresh;
  try {
    fresh = load(files_);
  } catch (const std::exception& e) {
    // Refused files are not tried again until they change again.
    std::lock_guard lock(mutex_);
    auto kept = std::make_shared<loaded>(*loaded_);
    kept->stamps = stamps_of(files_);
    loaded_ = std::move(kept);
    return std::string(e.what());
  }
  std::lock_guard lock(mutex_);
  loaded_ = std::move(fresh);
  return std::nullopt;
}

bool listener_tls::files_changed() const {
  std::lock_guard lock(mutex_);
  for (const auto& s : loaded_->stamps)
    if (!same_stamp(s, stamp_of(s.path))) return true;
  return false;
}

}  // namespace gistproxy::proxy
