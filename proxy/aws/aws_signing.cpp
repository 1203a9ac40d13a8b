#include "proxy/aws/aws_signing.hpp"

#include <algorithm>

#include "rewrite/request_target.hpp"
#include "rewrite/text/field_value.hpp"

namespace gistproxy::proxy {
namespace {

// SigV4's scheme and SigV4a's (multi-region, ECDSA): both sign the body, both
// name their access key id in Credential=.
constexpr std::string_view sigv4_scheme = "AWS4-HMAC-SHA256", sigv4a_scheme = "AWS4-ECDSA-P256-SHA256";

bool starts_with_nocase(std::string_view s, std::string_view prefix) {
  return s.size() >= prefix.size() && beast::iequals(s.substr(0, prefix.size()), prefix);
}

using rewrite::name_case;

// name=value pairs of a query, %-decoded (SigV4 encodes them again its own way).
aws::header_list query_pairs(std::string_view query) {
  aws::header_list out;
  while (!query.empty()) {
    auto amp = query.find('&');
    auto pair = query.substr(0, amp);
    query.remove_prefix(amp == std::string_view::npos ? query.size() : amp + 1);
    if (pair.empty()) continue;
    auto eq = pair.find('=');
    out.emplace_back(aws::uri_decode(pair.substr(0, eq)),
                     eq == std::string_view::npos ? std::string() : aws::uri_decode(pair.substr(eq + 1)));
  }
  return out;
}

// The query parameters of SigV4's query form. Names are compared after
// %-decoding and without case: "X-Amz-%53ignature" is the same parameter to
// AWS, and one that merely looks like ours must still never be re-signed.
constexpr std::string_view sigv4_query_names[] = {"X-Amz-Algorithm",     "X-Amz-Credential", "X-Amz-Date",
                                                  "X-Amz-Expires",       "X-Amz-SignedHeaders", "X-Amz-Signature",
                                                  "X-Amz-Security-Token"};

bool is_sigv4_query_name(std::string_view raw_name) {
  const auto name = aws::uri_decode(raw_name);
  for (auto known : sigv4_query_names)
    if (beast::iequals(name, known)) return true;
  return false;
}

bool presigned(std::string_view target) { return !rewrite::query_value(target, "X-Amz-Signature", name_case::any).empty(); }

// The access key id at the head of a Credential ("AKID/20250101/…"), its
// slash %-encoded in a query ("AKID%2F20250101%2F…").
std::string_view access_key_of_credential(std::string_view credential) {
  const auto slash = credential.find('/');
  auto encoded = credential.find("%2F");
  encoded = std::min(encoded, credential.find("%2f"));
  return credential.substr(0, std::min(slash, encoded));
}

using rewrite::text::blank;

// The Bedrock operations gistproxy reads (InvokeModel and its stream,
// Converse and its stream, CountTokens): the only ones its identity signs.
constexpr std::string_view signed_operations[] = {"invoke", "invoke-with-response-stream", "converse",
                                                  "converse-stream", "count-tokens"};

}  // namespace

bool signs_operation(std::string_view path) {
  constexpr std::string_view model = "/model/";
  const auto at = path.find(model);
  const auto last = path.rfind('/');
  if (at == std::string_view::npos || last < at + model.size()) return false;
  // A model id (anything but slashes) between /model/ and the operation.
  const auto id = path.substr(at + model.size(), last - at - model.size());
  if (id.find_first_not_of('/') == std::string_view::npos) return false;
  const auto operation = path.substr(last + 1);
  for (auto known : signed_operations)
    if (operation == known) return true;
  return false;
}

aws::header_list aws_signer::sign(std::string_view method, std::string_view host_header, std::string_view target,
                                        std::string_view body, std::string_view service, long long unix_seconds) const {
  aws::sigv4_request request;
  request.method = std::string(method);
  // The path as sent, already %-encoded once: SigV4 for services other than
  // S3 encodes each segment again (a Bedrock model id's ':' is %3A on the
  // wire and %253A in the canonical request).
  request.path = std::string(rewrite::path_of(target));
  request.query = query_pairs(rewrite::query_of(target));
  request.headers.emplace_back("host", std::string(host_header));
  request.payload_sha256 = aws::sha256_hex(body);
  aws::sigv4_options options;
  options.region = region_;
  options.service = std::string(service);
  options.amz_date = aws::amz_date_of(unix_seconds);
  options.normalize_path = true;
  options.sign_payload_header = false;
  auto signature = aws::sign(request, creds_, options);
  auto fields = std::move(signature.added_headers);
  fields.emplace_back("Authorization", std::move(signature.authorization));
  return fields;
}

aws_auth aws_auth_of(const client_request& r, const rewrite::endpoint& d, bool can_sign) {
  if (d.upstream().sigv4_service.empty()) return aws_auth::not_aws;
  // Authorization is a singleton field (RFC 9110 §11.6.2: credentials hold
  // commas, so two fields cannot be one list). Which one the endpoint would
  // honour is unknowable, and signing beside them would add a third identity.
  if (r.count(http::field::authorization) > 1) return aws_auth::ambiguous;
  if (presigned(std::string_view(r.target()))) return aws_auth::client_signed;
  auto it = r.find(http::field::authorization);
  // gistproxy lends its identity to the operations it reads, and only with
  // a model named: any other path (/model/ID alone, an operation it does not
  // model) goes unsigned, as without gistproxy, and AWS answers it.
  if (it == r.end() || blank(std::string_view(it->value())))
    return can_sign && signs_operation(rewrite::path_of(std::string_view(r.target()))) ? aws_auth::proxy_signs
                                                                                        : aws_auth::anonymous;
  if (is_aws_signature(std::string_view(it->value()))) return aws_auth::client_signed;
  // A Bearer API key, or a scheme nobody here knows: not a signature over
  // the body, so a changed body does not break it.
  return aws_auth::api_key;
}

std::string without_sigv4_query(std::string_view target) {
  std::string out(rewrite::path_of(target));  // the whole target when it has no query
  std::string_view query = rewrite::query_of(target);
  char separator = '?';
  while (!query.empty()) {
    const auto amp = query.find('&');
    const auto pair = query.substr(0, amp);
    query.remove_prefix(amp == std::string_view::npos ? query.size() : amp + 1);
    if (is_sigv4_query_name(pair.substr(0, pair.find('=')))) continue;
    out += separator;
    out += pair;
    separator = '&';
  }
  return out;
}

bool is_aws_signature(std::string_view authorization) {
  return starts_with_nocase(authorization, sigv4_scheme) || starts_with_nocase(authorization, sigv4a_scheme);
}

bool has_aws_query_credential(std::string_view target) {
  for (std::string_view name : {"X-Amz-Credential", "X-Amz-Signature", "X-Amz-Security-Token"})
    if (!rewrite::query_value(target, name, name_case::any).empty()) return true;
  return false;
}

std::string_view sigv4_access_key(std::string_view authorization) {
  if (!is_aws_signature(authorization)) return {};
  constexpr std::string_view credential = "Credential=";
  auto at = authorization.find(credential);
  if (at == std::string_view::npos) return {};
  auto rest = authorization.substr(at + credential.size());
  return rest.substr(0, rest.find_first_of("/, "));
}

std::string_view aws_query_identity(const client_request& r) {
  const auto target = std::string_view(r.target());
  if (auto credential = rewrite::query_value(target, "X-Amz-Credential", name_case::any); !credential.empty())
    return access_key_of_credential(credential);
  if (auto it = r.find("x-amz-security-token"); it != r.end() && !blank(std::string_view(it->value())))
    return std::string_view(it->value());
  return rewrite::query_value(target, "X-Amz-Security-Token", name_case::any);
}

std::string region_of_aws_host(std::string_view host) {
  // bedrock-runtime.REGION.amazonaws.com, bedrock-runtime-fips.REGION.amazonaws.com
  constexpr std::string_view suffix = ".amazonaws.com";
  if (!host.ends_with(suffix)) return {};
  host.remove_suffix(suffix.size());
  auto dot = host.rfind('.');
  if (dot == std::string_view::npos) return {};
  return std::string(host.substr(dot + 1));
}

}  // namespace gistproxy::proxy
