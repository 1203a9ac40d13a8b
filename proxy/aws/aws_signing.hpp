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
//                  with another identity (rewrite_failures{reason="signed_body"}).
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

// Whether an Authorization value is an AWS signature over the request: SigV4
// ("AWS4-HMAC-SHA256 Credential=…") or SigV4a ("AWS4-ECDSA-P256-SHA256 …").
bool is_aws_signature(std::string_view authorization);

// Whether the target's query carries an AWS credential: X-Amz-Credential,
// -Signature or -Security-Token with a value (names %-decoded, any case).
bool has_aws_query_credential(std::string_view target);

// The access key id in a SigV4 or SigV4a Authorization value ("AWS4-HMAC-SHA256
// Credential=AKID/20250101/us-east-1/bedrock/aws4_request, …"); empty if the
// value is not one. It, not the signature that changes per request, names the tenant.
std::string_view sigv4_access_key(std::string_view authorization);

// The identity of an AWS request that has no Authorization, for its tenant:
// a presigned query's access key id (X-Amz-Credential), else its session's
// X-Amz-Security-Token (the field, then the query parameter); empty if none.
std::string_view aws_query_identity(const client_request& r);

// The region of an AWS endpoint host ("bedrock-runtime.eu-west-1.amazonaws.com"); empty if none.
std::string region_of_aws_host(std::string_view host);

}  // namespace gistproxy::proxy
