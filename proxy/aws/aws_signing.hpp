// AWS endpoints (Bedrock) check a SigV4 signature over the request body, so a
// body gistproxy rewrites no longer matches the client's signature. Each
// request to a family that signs (upstream_family::sigv4_service) is in one
// of these modes, decided once in the receive phase (README, "AWS Bedrock"):
//   api_key        Authorization: Bearer (a Bedrock API key): forwarded as
//                  is; the body may change freely.
//   proxy_signs    no credentials (Claude Code's CLAUDE_CODE_SKIP_BEDROCK_AUTH)
//                  and --sign-bedrock: every upstream hop is signed with
//                  gistproxy's own AWS credentials, over the body it sends.
//   client_signed  the client signed it (SigV4 header or presigned query):
//                  forwarded byte for byte, never rewritten, never re-signed
//                  with another identity (rewrite_failures{reason="client_signed"}).
//   anonymous      no credentials, nothing to sign with, or a path that is
//                  none of the operations gistproxy signs (signs_operation):
//                  forwarded as is (the endpoint answers 403, as it would
//                  without gistproxy).
//   ambiguous      more than one Authorization field: refused (400), never
//                  forwarded, since no one can say whose request it is.
// A blank Authorization counts as none and is never forwarded (proxy_signs,
// anonymous). Under proxy_signs every field that names or proves a client's
// identity (Authorization, X-Amz-Date, X-Amz-Security-Token,
// X-Amz-Content-Sha256, SigV4's query parameters) is dropped before
// gistproxy signs: one request, one identity.
#pragma once

#include <cstdint>
#include <string>
#include <string_view>

#include "proxy/net/beast.hpp"
#include "proxy/aws/sigv4.hpp"
#include "rewrite/aws_credentials.hpp"
#include "rewrite/endpoint.hpp"

namespace gistproxy::proxy {

using client_request = http::request<http::string_body>;

enum class aws_auth : std::uint8_t { not_aws, api_key, proxy_signs, client_signed, anonymous, ambiguous };

// Signs upstream requests with gistproxy's own credentials (--sign-bedrock).
class aws_signer {
 public:
  aws_signer(aws::credentials creds, std::string region)
      : creds_(std::move(creds)), region_(std::move(region)) {}
  // The identity the signed requests' blobs belong to (a tenant key).
  const std::string& access_key_id() const { return creds_.access_key_id; }
  const std::string& region() const { return region_; }
  // The fields to add to a request for `host_header` and `target` (the path
  // and query as sent upstream) with this body: Authorization, X-Amz-Date
  // (and X-Amz-Security-Token for temporary credentials).
  aws::header_list sign(std::string_view method, std::string_view host_header, std::string_view target,
                              std::string_view body, std::string_view service, long long unix_seconds) const;

 private:
  aws::credentials creds_;
  std::string region_;
};

// Whether gistproxy's own identity may sign a request for this path:
// /model/{modelId}/OP (under any prefix) with a model id and OP one of the
// operations it reads: invoke, invoke-with-response-stream, converse,
// converse-stream, count-tokens. Not /model/ID alone, nor /model/count-tokens.
bool signs_operation(std::string_view path);

// The mode of a request of `d` (not_aws when d's family does not sign).
aws_auth aws_auth_of(const client_request& r, const rewrite::endpoint& d, bool can_sign);

// The target (path and query as sent) without SigV4's query parameters
// (X-Amz-Algorithm, -Credential, -Date, -Expires, -SignedHeaders, -Signature,
// -Security-Token; names %-decoded, any case); every other byte as it was.
std::string without_sigv4_query(std::string_view target);

// What the request carries of an AWS identity (rewrite/aws_credentials.hpp):
// its query, every Authorization and every X-Amz-Security-Token field. The
// one answer routing, the tenant and the signing mode all read.
rewrite::aws_credentials aws_credentials_of(const client_request& r);

// The region of an AWS endpoint host ("bedrock-runtime.eu-west-1.amazonaws.com"); empty if none.
std::string region_of_aws_host(std::string_view host);

}  // namespace gistproxy::proxy
