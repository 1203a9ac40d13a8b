// "Is this request AWS-signed, and whose is it?", answered once. AWS reads a
// credential in three places, and so does every reader here (routing, the
// tenant, the signing mode): an Authorization signature, SigV4
// ("AWS4-HMAC-SHA256 Credential=AKID/…") or SigV4a ("AWS4-ECDSA-P256-SHA256
// …"); a presigned query (X-Amz-Signature, X-Amz-Credential); a session token
// (X-Amz-Security-Token, field or query). Query names are read as AWS reads
// them: %-decoded and without case ("x-amz-%53ignature" is X-Amz-Signature).
// Pure: the caller hands in the field values; views into them are kept, so
// they must outlive the result. Values are only looked at, never decoded.
#pragma once

#include <string_view>

#include "rewrite/request_target.hpp"

namespace gistproxy::rewrite {

// Whether an Authorization value (OWS around it ignored) is an AWS signature
// over the request: SigV4 or SigV4a, the scheme in any case.
bool is_aws_signature(std::string_view authorization);

// The access key id in a SigV4 or SigV4a Authorization value; empty if the
// value is not one. It, not the signature that changes per request, names the tenant.
std::string_view sigv4_access_key(std::string_view authorization);

// Whether a query pair is one of SigV4's query form (X-Amz-Algorithm,
// -Credential, -Date, -Expires, -SignedHeaders, -Signature, -Security-Token).
bool is_sigv4_query_parameter(const query_pair& pair);

// What a request carries of an AWS identity. Built from the target, then
// each Authorization and X-Amz-Security-Token field is added. Its views are
// into the target and the fields it read: valid while they are (the
// request's), never past them.
struct aws_credentials {
  bool signature_field = false;          // an Authorization field is a SigV4 or SigV4a signature
  bool presigned = false;                // X-Amz-Signature with a value in the query
  bool query_credential = false;         // X-Amz-Credential with a value in the query
  std::string_view signature_access_key; // the first signature field's access key id
  std::string_view signed_headers;       // the first signature field's SignedHeaders list (';'-separated)
  std::string_view query_access_key;     // X-Amz-Credential's access key id
  std::string_view token_field;          // the first non-blank X-Amz-Security-Token field
  std::string_view token_query;          // X-Amz-Security-Token in the query

  void add_authorization(std::string_view value);
  void add_security_token(std::string_view value);

  // The client signed the request (a signature over the body): forwarded
  // byte for byte, never signed again with another identity.
  bool client_signed() const { return signature_field || presigned; }
  // The signature covers an HTTP/2 pseudo-header (":authority", ...): the
  // AWS SDK for JavaScript signs those over HTTP/2, and such a request can
  // only verify upstream if it goes there over HTTP/2, its pseudo-fields as sent.
  bool signs_pseudo_field() const;
  // Any AWS credential at all: the request belongs to Bedrock's family.
  bool carried() const;
  // Whose request it is when no other credential names it: the access key id
  // (of the signature, else of the presigned query), else the session token
  // (the field, then the query); empty if none.
  std::string_view identity() const;
};

// What the target's query carries (the fields are the caller's to add).
aws_credentials aws_credentials_in_query(std::string_view target);

}  // namespace gistproxy::rewrite
