// A strict SigV4 verifier, as an AWS service front end checks a request,
// written from AWS's documented canonical request (not from gistproxy's
// signer): method; the canonical URI (the path as received, each byte
// outside the unreserved set %-encoded again, as services other than S3
// do); the canonical query (pairs sorted, encoded); the canonical headers —
// exactly the names SignedHeaders lists, lower-cased, each with the value
// received (pseudo-headers such as :authority included, from the HTTP/2
// head), trimmed and inner spaces collapsed, repeats joined by ','; the
// signed names; the payload hash (x-amz-content-sha256, else the body's).
// Then the string to sign and the HMAC chain from the secret key.
#pragma once

#include <string>
#include <utility>
#include <vector>

namespace gistproxy::testing {

struct sigv4_check {
  bool ok = false;
  std::string why;  // why it did not verify ("signed header :authority is absent", ...)
};

// `fields`: every field received, pseudo-headers included, names lower-case.
// `path`: the request target as received (path and query, still %-encoded).
sigv4_check verify_sigv4(const std::string& method, const std::string& path,
                         const std::vector<std::pair<std::string, std::string>>& fields, const std::string& body,
                         const std::string& secret_access_key);

// Signs like a client that signs over HTTP/2 (the AWS SDK for JavaScript):
// the Authorization value for a request with these fields (pseudo-headers
// included), at `amz_date` (also a field: x-amz-date).
std::string sign_sigv4(const std::string& method, const std::string& path,
                       const std::vector<std::pair<std::string, std::string>>& fields, const std::string& body,
                       const std::string& access_key_id, const std::string& secret_access_key,
                       const std::string& region, const std::string& service);

}  // namespace gistproxy::testing
