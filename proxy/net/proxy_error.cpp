#include "proxy/net/proxy_error.hpp"

#include "telemetry/access_log.hpp"

namespace gistproxy::proxy {

int proxy_error::status() const {
  switch (kind) {
    case error_kind::bad_request:
    case error_kind::credential_mismatch: return 400;
    case error_kind::request_timeout: return 408;
    case error_kind::body_too_large: return 413;
    case error_kind::headers_too_large: return 431;
    case error_kind::not_found: return 404;
    case error_kind::method_not_allowed: return 405;
    case error_kind::unauthorized: return 401;
    case error_kind::unsupported_encoding: return 415;
    case error_kind::store_unavailable: return 503;
    case error_kind::store_integrity: return 502;
    case error_kind::client_disconnected: return 499;
    case error_kind::internal: return 500;
    case error_kind::upstream_unreachable:
    case error_kind::upstream_not_configured:
    case error_kind::upstream_tls:
    case error_kind::upstream_reset:
    case error_kind::upstream_bad_response:
    case error_kind::upstream_no_h2: return 502;
    case error_kind::shutting_down:
    case error_kind::out_of_descriptors: return 503;
    case error_kind::upstream_timeout: return 504;
    case error_kind::loop_detected: return 508;
  }
  return 500;
}

std::string_view proxy_error::type() const {
  switch (kind) {
    case error_kind::bad_request: return "bad_request";
    case error_kind::credential_mismatch: return "credential_mismatch";
    case error_kind::request_timeout: return "request_timeout";
    case error_kind::body_too_large: return "body_too_large";
    case error_kind::headers_too_large: return "headers_too_large";
    case error_kind::not_found: return "not_found";
    case error_kind::method_not_allowed: return "method_not_allowed";
    case error_kind::unauthorized: return "unauthorized";
    case error_kind::unsupported_encoding: return "unsupported_encoding";
    case error_kind::store_unavailable: return "store_unavailable";
    case error_kind::store_integrity: return "integrity";
    case error_kind::client_disconnected: return "client_disconnected";
    case error_kind::internal: return "internal";
    case error_kind::upstream_unreachable: return "upstream_unreachable";
    case error_kind::upstream_not_configured: return "upstream_not_configured";
    case error_kind::upstream_tls: return "upstream_tls";
    case error_kind::upstream_reset: return "upstream_reset";
    case error_kind::upstream_bad_response: return "upstream_bad_response";
    case error_kind::upstream_no_h2: return "upstream_no_h2";
    case error_kind::shutting_down: return "shutting_down";
    case error_kind::out_of_descriptors: return "out_of_descriptors";
    case error_kind::upstream_timeout: return "upstream_timeout";
    case error_kind::loop_detected: return "loop_detected";
  }
  return "internal";
}

error_source proxy_error::source() const {
  switch (kind) {
    case error_kind::bad_request:
    case error_kind::credential_mismatch:
    case error_kind::request_timeout:
    case error_kind::body_too_large:
    case error_kind::headers_too_large:
    case error_kind::not_found:
    case error_kind::method_not_allowed:
    case error_kind::unauthorized:
    case error_kind::unsupported_encoding:
    case error_kind::client_disconnected: return error_source::downstream;
    case error_kind::internal:
    case error_kind::store_unavailable:
    case error_kind::store_integrity:
    case error_kind::upstream_not_configured:
    case error_kind::loop_detected:
    case error_kind::shutting_down:
    case error_kind::out_of_descriptors: return error_source::internal;
    default: return error_source::upstream;
  }
}

bool proxy_error::retryable() const {
  switch (kind) {
    case error_kind::upstream_unreachable:
    case error_kind::upstream_reset:
    case error_kind::upstream_timeout:
    case error_kind::store_unavailable:
    case error_kind::shutting_down:
    case error_kind::out_of_descriptors: return true;
    default: return false;
  }
}

std::string_view source_name(error_source s) {
  switch (s) {
    case error_source::downstream: return "downstream";
    case error_source::upstream: return "upstream";
    case error_source::internal: return "internal";
  }
  return "internal";
}

std::string proxy_error::json_body() const {
  std::string out = "{\"type\":\"error\",\"error\":{\"type\":";
  telemetry::append_json_string(out, type());
  out += ",\"code\":";
  telemetry::append_json_string(out, type());
  out += ",\"message\":";
  telemetry::append_json_string(out, "gistproxy: " + detail);
  out += ",\"source\":";
  telemetry::append_json_string(out, source_name(source()));
  out += retryable() ? ",\"retryable\":true}}" : ",\"retryable\":false}}";
  return out;
}

}  // namespace gistproxy::proxy
