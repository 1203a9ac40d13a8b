#include "rewrite/aws_credentials.hpp"

#include <algorithm>

#include "rewrite/text/field_value.hpp"

namespace gistproxy::rewrite {
namespace {

// SigV4's scheme and SigV4a's (multi-region, ECDSA): both sign the body, both
// name their access key id in Credential=.
constexpr std::string_view sigv4_scheme = "AWS4-HMAC-SHA256", sigv4a_scheme = "AWS4-ECDSA-P256-SHA256";

constexpr std::string_view sigv4_query_names[] = {"X-Amz-Algorithm",     "X-Amz-Credential", "X-Amz-Date",
                                                  "X-Amz-Expires",       "X-Amz-SignedHeaders", "X-Amz-Signature",
                                                  "X-Amz-Security-Token"};

bool starts_with_nocase(std::string_view s, std::string_view prefix) {
  if (s.size() < prefix.size()) return false;
  for (std::size_t i = 0; i < prefix.size(); ++i) {
    auto lower = [](char c) { return c >= 'A' && c <= 'Z' ? char(c - 'A' + 'a') : c; };
    if (lower(s[i]) != lower(prefix[i])) return false;
  }
  return true;
}

// The access key id at the head of a Credential ("AKID/20250101/…"), its
// slash %-encoded in a query ("AKID%2F20250101%2F…").
std::string_view access_key_of_credential(std::string_view credential) {
  const auto slash = credential.find('/');
  auto encoded = credential.find("%2F");
  encoded = std::min(encoded, credential.find("%2f"));
  return credential.substr(0, std::min(slash, encoded));
}

}  // namespace

bool is_aws_signature(std::string_view authorization) {
  const auto v = text::trimmed(authorization);
  return starts_with_nocase(v, sigv4_scheme) || starts_with_nocase(v, sigv4a_scheme);
}

std::string_view sigv4_access_key(std::string_view authorization) {
  if (!is_aws_signature(authorization)) return {};
  constexpr std::string_view credential = "Credential=";
  auto at = authorization.find(credential);
  if (at == std::string_view::npos) return {};
  auto rest = authorization.substr(at + credential.size());
  return rest.substr(0, rest.find_first_of("/, "));
}

bool is_sigv4_query_parameter(const query_pair& pair) {
  for (auto known : sigv4_query_names)
    if (pair.named(known, name_case::any)) return true;
  return false;
}

namespace {
// The SignedHeaders list of a signature ("a;b;c"); empty if it names none.
std::string_view sigv4_signed_headers(std::string_view authorization) {
  constexpr std::string_view key = "SignedHeaders=";
  auto at = authorization.find(key);
  if (at == std::string_view::npos) return {};
  auto rest = authorization.substr(at + key.size());
  return rest.substr(0, rest.find_first_of(", "));
}
}  // namespace

void aws_credentials::add_authorization(std::string_view value) {
  if (!is_aws_signature(value)) return;
  if (!signature_field) {
    signature_access_key = sigv4_access_key(value);
    signed_headers = sigv4_signed_headers(value);
  }
  signature_field = true;
}

void aws_credentials::add_security_token(std::string_view value) {
  if (token_field.empty()) token_field = text::trimmed(value);
}

bool aws_credentials::signs_pseudo_field() const {
  for (std::string_view rest = signed_headers; !rest.empty();) {
    const auto end = rest.find(';');
    if (rest.substr(0, end).starts_with(':')) return true;
    if (end == std::string_view::npos) break;
    rest.remove_prefix(end + 1);
  }
  return false;
}

bool aws_credentials::carried() const {
  return client_signed() || query_credential || !token_field.empty() || !token_query.empty();
}

std::string_view aws_credentials::identity() const {
  for (auto id : {signature_access_key, query_access_key, token_field, token_query})
    if (!id.empty()) return id;
  return {};
}

// One walk over the pairs; of each name the first non-empty value counts, as
// query_value reads a credential.
aws_credentials aws_credentials_in_query(std::string_view target) {
  aws_credentials c;
  for (const auto& pair : query_pairs(target)) {
    if (pair.value.empty()) continue;
    if (!c.presigned && pair.named("X-Amz-Signature", name_case::any)) c.presigned = true;
    else if (!c.query_credential && pair.named("X-Amz-Credential", name_case::any)) {
      c.query_credential = true;
      c.query_access_key = access_key_of_credential(pair.value);
    }
    else if (c.token_query.empty() && pair.named("X-Amz-Security-Token", name_case::any)) c.token_query = pair.value;
  }
  return c;
}

}  // namespace gistproxy::rewrite
