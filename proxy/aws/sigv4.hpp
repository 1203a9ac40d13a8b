// AWS Signature Version 4 (header form): the canonical request, the string to
// sign, the signature and the Authorization header, from a request and a time
// the caller gives (no clock here). Verified against AWS's published SigV4
// test suite (tests/fixtures/sigv4) and against an independent signer
// (@smithy/signature-v4) in the tests. One signer for both of gistproxy's AWS
// callers: the S3 blob store (proxy/store/s3) and Bedrock requests it signs
// again (aws_signing.hpp).
#pragma once

#include <string>
#include <string_view>
#include <utility>
#include <vector>

namespace gistproxy::aws {

struct credentials {
  std::string access_key_id;
  std::string secret_access_key;
  std::string session_token;  // empty: long-term credentials
};

using header_list = std::vector<std::pair<std::string, std::string>>;

struct sigv4_request {
  std::string method;      // GET, PUT, ...
  std::string path;        // decoded (raw bytes); encoded here, segment by segment
  header_list query;       // decoded names and values
  header_list headers;     // as sent (Host included); names any case, duplicates kept in order
  std::string payload_sha256;  // lowercase hex of the body (or UNSIGNED-PAYLOAD)
};

struct sigv4_options {
  std::string region = "us-east-1";
  std::string service = "s3";
  std::string amz_date;             // YYYYMMDD'T'HHMMSS'Z'
  bool normalize_path = false;      // S3 signs the path as is; other services normalise it
  bool sign_payload_header = true;  // add x-amz-content-sha256 (S3 requires it)
  bool omit_session_token = false;  // add the token after signing (some services)
};

struct sigv4_signature {
  std::string canonical_request;
  std::string string_to_sign;
  std::string signature;       // lowercase hex
  std::string authorization;   // the Authorization header value
  header_list added_headers;   // x-amz-date, x-amz-content-sha256, x-amz-security-token: send them too
};

sigv4_signature sign(const sigv4_request& request, const credentials& creds, const sigv4_options& options);

// RFC 3986 unreserved characters stay; every other byte becomes %XX
// (uppercase). `keep_slash` for paths.
std::string uri_encode(std::string_view s, bool keep_slash);
// %XX decoding; invalid escapes are kept as they are.
std::string uri_decode(std::string_view s);
// "20150830T123600Z" for unix seconds.
std::string amz_date_of(long long unix_seconds);
// Lowercase hex SHA-256.
std::string sha256_hex(std::string_view bytes);

}  // namespace gistproxy::aws
