#include "proxy/aws/sigv4.hpp"

#include <algorithm>
#include <cctype>
#include <cstdio>
#include <ctime>

#include <openssl/evp.h>
#include <openssl/hmac.h>
#include <openssl/sha.h>

namespace gistproxy::aws {
namespace {

constexpr char hex_digits[] = "0123456789abcdef";

std::string to_hex(const unsigned char* p, std::size_t n) {
  std::string out(n * 2, '0');
  for (std::size_t i = 0; i < n; ++i) {
    out[2 * i] = hex_digits[p[i] >> 4];
    out[2 * i + 1] = hex_digits[p[i] & 15];
  }
  return out;
}

std::string hmac(std::string_view key, std::string_view data) {
  unsigned char out[EVP_MAX_MD_SIZE];
  unsigned int len = 0;
  HMAC(EVP_sha256(), key.data(), int(key.size()), reinterpret_cast<const unsigned char*>(data.data()), data.size(), out, &len);
  return std::string(reinterpret_cast<const char*>(out), len);
}

bool unreserved(unsigned char c) {
  return (c >= 'A' && c <= 'Z') || (c >= 'a' && c <= 'z') || (c >= '0' && c <= '9') || c == '-' || c == '.' || c == '_' ||
         c == '~';
}

int hex_value(char c) {
  if (c >= '0' && c <= '9') return c - '0';
  if (c >= 'a' && c <= 'f') return c - 'a' + 10;
  if (c >= 'A' && c <= 'F') return c - 'A' + 10;
  return -1;
}

std::string lower(std::string_view s) {
  std::string out(s);
  std::transform(out.begin(), out.end(), out.begin(), [](unsigned char c) { return char(std::tolower(c)); });
  return out;
}

bool is_space(char c) { return c == ' ' || c == '\t' || c == '\r' || c == '\n'; }

// Trimmed, every run of white space (line folds included) one space.
std::string canonical_value(std::string_view v) {
  std::string out;
  bool pending_space = false;
  for (char c : v) {
    if (is_space(c)) {
      pending_space = !out.empty();
      continue;
    }
    if (pending_space) out += ' ';
    pending_space = false;
    out += c;
  }
  return out;
}

// RFC 3986 section 5.2.4 dot-segment removal, with empty segments dropped
// (the other services' normalisation; S3 signs paths unnormalised).
std::string normalized_path(std::string_view path) {
  std::vector<std::string_view> segments;
  std::size_t at = 0;
  while (at <= path.size()) {
    auto slash = path.find('/', at);
    auto end = slash == std::string_view::npos ? path.size() : slash;
    auto seg = path.substr(at, end - at);
    if (seg == "..") {
      if (!segments.empty()) segments.pop_back();
    } else if (!seg.empty() && seg != ".") {
      segments.push_back(seg);
    }
    if (slash == std::string_view::npos) break;
    at = slash + 1;
  }
  std::string out;
  for (auto s : segments) out += "/" + std::string(s);
  const bool trailing = path.size() > 1 && path.back() == '/' && !segments.empty();
  if (out.empty() || trailing) out += '/';
  return out;
}

std::string canonical_query(const header_list& query) {
  std::vector<std::pair<std::string, std::string>> encoded;
  encoded.reserve(query.size());
  for (const auto& [k, v] : query) encoded.emplace_back(uri_encode(k, false), uri_encode(v, false));
  std::sort(encoded.begin(), encoded.end());
  std::string out;
  for (const auto& [k, v] : encoded) out += (out.empty() ? "" : "&") + k + "=" + v;
  return out;
}

}  // namespace

std::string uri_encode(std::string_view s, bool keep_slash) {
  std::string out;
  out.reserve(s.size());
  for (unsigned char c : s) {
    if (unreserved(c) || (keep_slash && c == '/')) {
      out += char(c);
    } else {
      out += '%';
      out += char(std::toupper(hex_digits[c >> 4]));
      out += char(std::toupper(hex_digits[c & 15]));
    }
  }
  return out;
}

std::string uri_decode(std::string_view s) {
  std::string out;
  out.reserve(s.size());
  for (std::size_t i = 0; i < s.size(); ++i) {
    if (s[i] == '%' && i + 2 < s.size() && hex_value(s[i + 1]) >= 0 && hex_value(s[i + 2]) >= 0) {
      out += char(hex_value(s[i + 1]) * 16 + hex_value(s[i + 2]));
      i += 2;
    } else {
      out += s[i];
    }
  }
  return out;
}

std::string sha256_hex(std::string_view bytes) {
  unsigned char d[SHA256_DIGEST_LENGTH];
  SHA256(reinterpret_cast<const unsigned char*>(bytes.data()), bytes.size(), d);
  return to_hex(d, sizeof d);
}

std::string amz_date_of(long long unix_seconds) {
  std::time_t t = std::time_t(unix_seconds);
  std::tm tm{};
  gmtime_r(&t, &tm);
  char b[20];
  std::strftime(b, sizeof b, "%Y%m%dT%H%M%SZ", &tm);
  return b;
}

sigv4_signature sign(const sigv4_request& request, const credentials& creds, const sigv4_options& options) {
  sigv4_signature out;
  out.added_headers.emplace_back("X-Amz-Date", options.amz_date);
  if (options.sign_payload_header) out.added_headers.emplace_back("X-Amz-Content-Sha256", request.payload_sha256);
  const bool token_signed = !creds.session_token.empty() && !options.omit_session_token;
  if (token_signed) out.added_headers.emplace_back("X-Amz-Security-Token", creds.session_token);

  // Lowercase names, sorted; duplicates joined with commas in the order sent.
  std::vector<std::pair<std::string, std::string>> headers;
  auto add = [&](const std::string& name, const std::string& value) {
    auto key = lower(name);
    auto v = canonical_value(value);
    for (auto& [k, existing] : headers)
      if (k == key) return void(existing += "," + v);
    headers.emplace_back(key, v);
  };
  for (const auto& [k, v] : request.headers) add(k, v);
  for (const auto& [k, v] : out.added_headers) add(k, v);
  std::stable_sort(headers.begin(), headers.end(), [](const auto& a, const auto& b) { return a.first < b.first; });
  std::string canonical_headers, signed_headers;
  for (const auto& [k, v] : headers) {
    canonical_headers += k + ":" + v + "\n";
    signed_headers += (signed_headers.empty() ? "" : ";") + k;
  }

  const std::string path = options.normalize_path ? normalized_path(request.path) : request.path;
  out.canonical_request = request.method + "\n" + uri_encode(path.empty() ? "/" : path, true) + "\n" +
                          canonical_query(request.query) + "\n" + canonical_headers + "\n" + signed_headers + "\n" +
                          request.payload_sha256;

  const std::string date = options.amz_date.substr(0, 8);
  const std::string scope = date + "/" + options.region + "/" + options.service + "/aws4_request";
  out.string_to_sign = "AWS4-HMAC-SHA256\n" + options.amz_date + "\n" + scope + "\n" + sha256_hex(out.canonical_request);

  const std::string key = hmac(hmac(hmac(hmac("AWS4" + creds.secret_access_key, date), options.region), options.service),
                               "aws4_request");
  const std::string sig = hmac(key, out.string_to_sign);
  out.signature = to_hex(reinterpret_cast<const unsigned char*>(sig.data()), sig.size());
  out.authorization = "AWS4-HMAC-SHA256 Credential=" + creds.access_key_id + "/" + scope +
                      ", SignedHeaders=" + signed_headers + ", Signature=" + out.signature;
  if (!creds.session_token.empty() && !token_signed) out.added_headers.emplace_back("X-Amz-Security-Token", creds.session_token);
  return out;
}

}  // namespace gistproxy::aws
