#include "tests/support/sigv4_verifier.hpp"

#include <openssl/evp.h>
#include <openssl/hmac.h>
#include <openssl/sha.h>

#include <algorithm>
#include <map>

namespace gistproxy::testing {
namespace {

using field_list = std::vector<std::pair<std::string, std::string>>;

std::string hex(const unsigned char* p, std::size_t n) {
  static const char digits[] = "0123456789abcdef";
  std::string out;
  for (std::size_t i = 0; i < n; ++i) {
    out += digits[p[i] >> 4];
    out += digits[p[i] & 15];
  }
  return out;
}

std::string sha256(const std::string& s) {
  unsigned char d[SHA256_DIGEST_LENGTH];
  SHA256(reinterpret_cast<const unsigned char*>(s.data()), s.size(), d);
  return hex(d, sizeof d);
}

std::string hmac(const std::string& key, const std::string& data) {
  unsigned char d[EVP_MAX_MD_SIZE];
  unsigned n = 0;
  HMAC(EVP_sha256(), key.data(), int(key.size()), reinterpret_cast<const unsigned char*>(data.data()), data.size(), d, &n);
  return std::string(reinterpret_cast<char*>(d), n);
}

bool unreserved(unsigned char c) {
  return (c >= 'A' && c <= 'Z') || (c >= 'a' && c <= 'z') || (c >= '0' && c <= '9') || c == '-' || c == '_' ||
         c == '.' || c == '~';
}

std::string encode(const std::string& s, bool keep_slash) {
  static const char digits[] = "0123456789ABCDEF";
  std::string out;
  for (unsigned char c : s) {
    if (unreserved(c) || (keep_slash && c == '/')) out += char(c);
    else {
      out += '%';
      out += digits[c >> 4];
      out += digits[c & 15];
    }
  }
  return out;
}

std::string decode(const std::string& s) {
  std::string out;
  for (std::size_t i = 0; i < s.size(); ++i) {
    if (s[i] == '%' && i + 2 < s.size() + 0 && std::isxdigit(static_cast<unsigned char>(s[i + 1])) &&
        std::isxdigit(static_cast<unsigned char>(s[i + 2]))) {
      out += char(std::stoi(s.substr(i + 1, 2), nullptr, 16));
      i += 2;
    } else out += s[i];
  }
  return out;
}

std::string canonical_query(const std::string& query) {
  std::vector<std::pair<std::string, std::string>> pairs;
  std::size_t at = 0;
  while (at <= query.size() && !query.empty()) {
    auto end = query.find('&', at);
    if (end == std::string::npos) end = query.size();
    const auto pair = query.substr(at, end - at);
    if (!pair.empty()) {
      const auto eq = pair.find('=');
      pairs.emplace_back(encode(decode(pair.substr(0, eq)), false),
                         eq == std::string::npos ? "" : encode(decode(pair.substr(eq + 1)), false));
    }
    at = end + 1;
  }
  std::sort(pairs.begin(), pairs.end());
  std::string out;
  for (const auto& [k, v] : pairs) out += (out.empty() ? "" : "&") + k + "=" + v;
  return out;
}

std::string canonical_value(const std::string& v) {
  std::string out;
  bool space = false;
  for (char c : v) {
    if (c == ' ' || c == '\t') space = !out.empty();
    else {
      if (space) out += ' ';
      space = false;
      out += c;
    }
  }
  return out;
}

std::string after(const std::string& s, const std::string& key) {
  const auto at = s.find(key);
  if (at == std::string::npos) return {};
  const auto start = at + key.size();
  return s.substr(start, s.find_first_of(", ", start) - start);
}

std::vector<std::string> split(const std::string& s, char c) {
  std::vector<std::string> out;
  std::size_t at = 0;
  for (auto end = s.find(c); ; end = s.find(c, at)) {
    out.push_back(s.substr(at, end - at));
    if (end == std::string::npos) break;
    at = end + 1;
  }
  return out;
}

struct signing_input {
  std::string canonical_request, string_to_sign, key;
};

// The canonical request and what follows from it; empty `canonical_request`
// with `why` set when a signed header is absent.
signing_input canonical(const std::string& method, const std::string& target, const field_list& fields,
                        const std::string& body, const std::string& signed_names, const std::string& scope,
                        const std::string& secret, std::string& why) {
  std::multimap<std::string, std::string> by_name;
  for (const auto& [n, v] : fields) by_name.emplace(n, v);
  std::string headers;
  for (const auto& name : split(signed_names, ';')) {
    auto [lo, hi] = by_name.equal_range(name);
    if (lo == hi) {
      why = "signed header " + name + " is absent";
      return {};
    }
    std::string joined;
    for (auto it = lo; it != hi; ++it) joined += (it == lo ? "" : ",") + canonical_value(it->second);
    headers += name + ":" + joined + "\n";
  }
  const auto question = target.find('?');
  const std::string path = target.substr(0, question);
  const std::string query = question == std::string::npos ? "" : target.substr(question + 1);
  auto payload = by_name.find("x-amz-content-sha256");
  const std::string hashed = payload == by_name.end() ? sha256(body) : payload->second;
  auto date = by_name.find("x-amz-date");
  signing_input in;
  in.canonical_request = method + "\n" + encode(path.empty() ? "/" : path, true) + "\n" + canonical_query(query) +
                         "\n" + headers + "\n" + signed_names + "\n" + hashed;
  in.string_to_sign = "AWS4-HMAC-SHA256\n" + (date == by_name.end() ? "" : date->second) + "\n" + scope + "\n" +
                      sha256(in.canonical_request);
  const auto parts = split(scope, '/');  // date/region/service/aws4_request
  if (parts.size() != 4) {
    why = "malformed credential scope";
    return {};
  }
  in.key = hmac(hmac(hmac(hmac("AWS4" + secret, parts[0]), parts[1]), parts[2]), "aws4_request");
  return in;
}

std::string sorted_names(const field_list& fields) {
  std::vector<std::string> names;
  for (const auto& [n, v] : fields)
    if (std::find(names.begin(), names.end(), n) == names.end()) names.push_back(n);
  std::sort(names.begin(), names.end());
  std::string out;
  for (const auto& n : names) out += (out.empty() ? "" : ";") + n;
  return out;
}

}  // namespace

sigv4_check verify_sigv4(const std::string& method, const std::string& path, const field_list& fields,
                         const std::string& body, const std::string& secret_access_key) {
  std::string authorization;
  for (const auto& [n, v] : fields)
    if (n == "authorization") authorization = v;
  if (!authorization.starts_with("AWS4-HMAC-SHA256 ")) return {false, "no SigV4 Authorization"};
  const auto credential = after(authorization, "Credential=");
  const auto scope = credential.substr(std::min(credential.size(), credential.find('/') + 1));
  std::string why;
  const auto in = canonical(method, path, fields, body, after(authorization, "SignedHeaders="), scope,
                            secret_access_key, why);
  if (in.canonical_request.empty()) return {false, why};
  const auto signature = hmac(in.key, in.string_to_sign);
  const auto expected = hex(reinterpret_cast<const unsigned char*>(signature.data()), signature.size());
  if (expected != after(authorization, "Signature="))
    return {false, "signature does not match; canonical request:\n" + in.canonical_request};
  return {true, {}};
}

std::string sign_sigv4(const std::string& method, const std::string& path, const field_list& fields,
                       const std::string& body, const std::string& access_key_id, const std::string& secret_access_key,
                       const std::string& region, const std::string& service) {
  std::string date;
  for (const auto& [n, v] : fields)
    if (n == "x-amz-date") date = v;
  const std::string scope = date.substr(0, 8) + "/" + region + "/" + service + "/aws4_request";
  const auto names = sorted_names(fields);
  std::string why;
  const auto in = canonical(method, path, fields, body, names, scope, secret_access_key, why);
  const auto signature = hmac(in.key, in.string_to_sign);
  return "AWS4-HMAC-SHA256 Credential=" + access_key_id + "/" + scope + ", SignedHeaders=" + names +
         ", Signature=" + hex(reinterpret_cast<const unsigned char*>(signature.data()), signature.size());
}

}  // namespace gistproxy::testing
