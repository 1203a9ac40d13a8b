#include "proxy/aws/aws_signing.hpp"

#include "rewrite/aws_credentials.hpp"
#include "rewrite/request_target.hpp"
#include "rewrite/text/field_value.hpp"

namespace gistproxy::proxy {
namespace {

// name=value pairs of a query, %-decoded (SigV4 encodes them again its own way).
aws::header_list decoded_query(std::string_view target) {
  aws::header_list out;
  for (const auto& pair : rewrite::query_pairs(target)) out.emplace_back(pair.decoded_name(), pair.decoded_value());
  return out;
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
  request.query = decoded_query(target);
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
  if (aws_credentials_of(r).client_signed()) return aws_auth::client_signed;
  auto it = r.find(http::field::authorization);
  // gistproxy lends its identity to the operations it reads, and only with
  // a model named: any other path (/model/ID alone, an operation it does not
  // model) goes unsigned, as without gistproxy, and AWS answers it.
  if (it == r.end() || blank(std::string_view(it->value())))
    return can_sign && signs_operation(rewrite::path_of(std::string_view(r.target()))) ? aws_auth::proxy_signs
                                                                                        : aws_auth::anonymous;
  // A Bearer API key, or a scheme nobody here knows: not a signature over
  // the body, so a changed body does not break it.
  return aws_auth::api_key;
}

std::string without_sigv4_query(std::string_view target) {
  std::string out(rewrite::path_of(target));  // the whole target when it has no query
  const auto pairs = rewrite::query_pairs(target);
  if (!pairs.complete()) return std::string(target);  // never cut: the transport refuses such a query
  char separator = '?';
  for (const auto& pair : pairs) {
    // A parameter that merely looks like one of SigV4's ("X-Amz-%53ignature")
    // is one to AWS, and must never be signed again.
    if (rewrite::is_sigv4_query_parameter(pair)) continue;
    out += separator;
    out += pair.sent;
    separator = '&';
  }
  return out;
}

rewrite::aws_credentials aws_credentials_of(const client_request& r) {
  auto c = rewrite::aws_credentials_in_query(std::string_view(r.target()));
  // One pass over the fields in the order sent (each name's values keep their
  // order): two equal_range searches of Beast's tree cost more, and every
  // request is asked this while it is routed.
  for (const auto& f : r) {
    if (f.name() == http::field::authorization) c.add_authorization(std::string_view(f.value()));
    else if (beast::iequals(std::string_view(f.name_string()), "x-amz-security-token"))
      c.add_security_token(std::string_view(f.value()));
  }
  return c;
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
