#include "rewrite/blob/digest.hpp"

// SHA-256 through OpenSSL's low-level functions, not EVP. They run the same
// assembly (SHA-NI, AVX2), but EVP's first use loads the default provider:
// 2 MiB of libcrypto's pages made resident in every process, 140 KiB of heap,
// and a lookup plus a context per hash (~8% of a pass-through request's CPU
// when they were fetched on every call). The functions are deprecated in
// OpenSSL 3.0 but present in every 3.x; a build without them uses EVP.
#define OPENSSL_SUPPRESS_DEPRECATED
#include <openssl/evp.h>
#include <openssl/sha.h>

#include <cstring>
#include <functional>
#include <memory>

namespace gistproxy::rewrite {

#ifndef OPENSSL_NO_DEPRECATED_3_0
sha256_digest sha256(std::string_view bytes) {
  sha256_digest d;
  SHA256_CTX ctx;
  SHA256_Init(&ctx);
  SHA256_Update(&ctx, bytes.data(), bytes.size());
  SHA256_Final(d.data(), &ctx);
  return d;
}
#else
namespace {

// The algorithm is fetched once per process and each thread reuses one context.
const EVP_MD* sha256_algorithm() {
  static EVP_MD* md = EVP_MD_fetch(nullptr, "SHA256", nullptr);  // kept for the process's life
  return md;
}

EVP_MD_CTX* thread_context() {
  thread_local std::unique_ptr<EVP_MD_CTX, decltype(&EVP_MD_CTX_free)> ctx(EVP_MD_CTX_new(), EVP_MD_CTX_free);
  return ctx.get();
}

}  // namespace

sha256_digest sha256(std::string_view bytes) {
  sha256_digest d;
  const EVP_MD* md = sha256_algorithm();
  EVP_MD_CTX* ctx = thread_context();
  unsigned int length = 0;
  if (md && ctx && EVP_DigestInit_ex2(ctx, md, nullptr) == 1 && EVP_DigestUpdate(ctx, bytes.data(), bytes.size()) == 1 &&
      EVP_DigestFinal_ex(ctx, d.data(), &length) == 1 && length == d.size())
    return d;
  SHA256(reinterpret_cast<const unsigned char*>(bytes.data()), bytes.size(), d.data());  // the slow path never fails
  return d;
}
#endif

std::string to_hex(const sha256_digest& d) {
  static constexpr char hex[] = "0123456789abcdef";
  std::string out(64, '0');
  for (std::size_t i = 0; i < d.size(); ++i) {
    out[2 * i] = hex[d[i] >> 4];
    out[2 * i + 1] = hex[d[i] & 15];
  }
  return out;
}

bool is_handle_prefix(std::string_view s) {
  if (s.size() < 16 || s.size() > 64) return false;
  for (char c : s)
    if (!((c >= '0' && c <= '9') || (c >= 'a' && c <= 'f'))) return false;
  return true;
}

std::size_t handle_key_hash::operator()(std::string_view key) const noexcept {
  if (key.size() < 16) return std::hash<std::string_view>{}(key);
  std::uint64_t high, low;
  std::memcpy(&high, key.data() + key.size() - 16, 8);
  std::memcpy(&low, key.data() + key.size() - 8, 8);
  // Hex digits carry 4 bits a byte: one multiply spreads them over the word.
  return std::size_t((high * 0x9E3779B97F4A7C15ull) ^ low ^ (low >> 29) ^ key.size());
}

}  // namespace gistproxy::rewrite
