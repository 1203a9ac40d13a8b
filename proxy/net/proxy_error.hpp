// Errors carry their source (downstream, upstream, internal) and whether the
// client may retry: the labels a metric and a log line need. One place maps
// them to an HTTP status and a JSON body both OpenAI and Anthropic SDKs parse.
#pragma once

#include <string>
#include <string_view>

namespace gistproxy::proxy {

enum class error_source { downstream, upstream, internal };

enum class error_kind {
  bad_request,           // 400: malformed HTTP
  credential_mismatch,   // 400: a provider's credential on another provider's path (never forwarded)
  request_timeout,       // 408: the client was too slow sending its request
  body_too_large,        // 413: over --max-body
  headers_too_large,     // 431: the header block or one field over its limit
  not_found,             // 404: the offload service's unknown API, or a blob this tenant does not have
  method_not_allowed,    // 405: the offload service's paths take only the methods they serve
  unauthorized,          // 401: the offload service without an API key (unless --offload-service-anonymous)
  unsupported_encoding,  // 415: a Content-Encoding the offload service cannot decode
  store_unavailable,     // 503: the blob store could not be read (the offload service's blob reads)
  store_integrity,       // 502: the stored bytes no longer hash to their handle (never served)
  client_disconnected,   // 499 (nginx's convention; never sent, only counted)
  internal,              // 500
  upstream_unreachable,  // 502: DNS or connect failure
  upstream_not_configured,  // 502: no upstream set for the request's API family (--NAME-upstream)
  upstream_tls,          // 502: handshake or certificate failure
  upstream_reset,        // 502: connection dropped before/while the response came
  upstream_bad_response, // 502: unparsable HTTP from the upstream
  upstream_no_h2,        // 502: a request that must go over HTTP/2 met an upstream that does not speak it
  shutting_down,         // 503: draining
  out_of_descriptors,    // 503: no file descriptor left to open an upstream connection (retry shortly)
  upstream_timeout,      // 504
  loop_detected,         // 508: the request came back to the gistproxy that forwarded it (its upstream leads to itself)
};

struct proxy_error {
  error_kind kind = error_kind::internal;
  std::string detail;  // human-readable; never holds request bytes or credentials

  int status() const;
  std::string_view type() const;  // e.g. "upstream_timeout"
  error_source source() const;
  bool retryable() const;
  // {"type":"error","error":{"type":…,"code":…,"message":…,"source":…}}: Anthropic
  // SDKs read error.type/message, OpenAI SDKs error.message/type/code.
  std::string json_body() const;
};

std::string_view source_name(error_source s);

}  // namespace gistproxy::proxy
