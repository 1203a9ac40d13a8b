// A blocking S3 REST client for the store pool's threads: requests signed
// with SigV4, sent over Beast on a keep-alive pool of connections (TLS
// verified against the system CAs and the host name), every call bounded by
// one deadline that covers its retries. Retries (exponential backoff, full
// jitter) on transport errors, 5xx and SlowDown; never on another 4xx.
// Through an egress proxy, each connection is a CONNECT tunnel (TLS still
// verified against the S3 host).
#pragma once

#include <chrono>
#include <cstdint>
#include <functional>
#include <memory>
#include <mutex>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include <boost/asio/awaitable.hpp>

#include "proxy/net/egress_proxy.hpp"
#include "proxy/net/http_url.hpp"
#include "proxy/store/s3/s3_xml.hpp"
#include "proxy/aws/sigv4.hpp"

namespace gistproxy::store::s3 {

// The client signs with aws/'s SigV4, the one Bedrock requests are signed with too.
using aws::amz_date_of;
using aws::credentials;
using aws::header_list;
using aws::sha256_hex;
using aws::sign;
using aws::sigv4_options;
using aws::sigv4_request;
using aws::uri_decode;
using aws::uri_encode;

// Where the objects live: s3://BUCKET/PREFIX plus the endpoint to reach.
struct location {
  proxy::http_url endpoint;  // scheme, host, port of the S3 API
  std::string bucket;
  std::string prefix;        // no leading or trailing slash; may be empty
  bool path_style = true;    // /BUCKET/KEY on the endpoint; else BUCKET.host/KEY
  std::string region = "us-east-1";

  std::string host() const;  // the host to connect to (and to verify the certificate of)
  std::string host_header() const;
  std::string object_path(std::string_view key) const;  // decoded path of an object
  std::string bucket_path() const;                      // decoded path of the bucket
};

// Reads `store` (s3://BUCKET[/PREFIX]), `endpoint_flag` (--s3-endpoint) and
// the environment (AWS_ENDPOINT_URL_S3, AWS_ENDPOINT_URL, AWS_REGION,
// AWS_DEFAULT_REGION) as the AWS SDKs do: the flag wins, then the
// S3-specific variable, then the general one, else AWS's own endpoint for the
// region with virtual-host addressing. Nullopt and `error` when invalid.
using env_lookup = std::function<std::optional<std::string>(const char*)>;
std::optional<location> parse_location(std::string_view store, std::string_view endpoint_flag, const env_lookup& env,
                                       std::string& error);
// AWS_ACCESS_KEY_ID / AWS_SECRET_ACCESS_KEY / AWS_SESSION_TOKEN; nullopt and
// `error` when the key id or the secret is missing.
std::optional<credentials> credentials_from_env(const env_lookup& env, std::string& error);

struct request {
  std::string method;
  std::string key;          // object key below the bucket (prefix included); empty: the bucket
  header_list query;        // decoded
  header_list headers;      // extra headers (x-amz-meta-*, If-None-Match, ...)
  std::string body;
};

struct response {
  int status = 0;            // 0: no HTTP answer (connection failed, timed out)
  std::string body;          // capped at client_options.max_body_bytes
  header_list headers;       // lowercase names
  std::string error;         // transport error, or S3's <Code> on an error status
  int attempts = 0;
  std::string header(std::string_view lowercase_name) const;
  bool ok() const { return status >= 200 && status < 300; }
};

struct client_options {
  std::chrono::milliseconds timeout{5000};  // one call, retries included
  int max_attempts = 4;
  std::chrono::milliseconds backoff_base{50};
  std::uint64_t max_body_bytes = 64ull << 20;
  std::size_t max_idle_connections = 16;
  std::string extra_ca_file;  // added to the system CAs (private S3 endpoints)
  std::optional<proxy::egress_proxy> egress;  // tunnel through this proxy; nullopt: connect directly
  // Called after every call (metrics, slow-call spans): the operation
  // (operation_name), the response, the seconds it took.
  std::function<void(std::string_view op, const response&, double seconds)> observe;
};

// put, refresh (a copy onto itself), get, head, head_bucket, list, delete.
std::string_view operation_name(const request& r);
// ok, not_found, exists (412), client_error, server_error, unreachable.
std::string_view result_name(const response& r);

class client {
 public:
  client(location where, credentials creds, client_options options, std::function<std::int64_t()> now_seconds = {});
  ~client();
  client(const client&) = delete;
  client& operator=(const client&) = delete;

  response send(const request& r);
  const location& where() const { return where_; }

 private:
  struct connection;
  std::unique_ptr<connection> take();
  void give_back(std::unique_ptr<connection> c);
  // Connects c (through the egress proxy's tunnel, if any; TLS, if https)
  // before `deadline`; false, with out.error set, when it cannot.
  boost::asio::awaitable<bool> open(connection& c, std::chrono::steady_clock::time_point deadline, response& out);
  response attempt(connection& c, const request& r, std::chrono::steady_clock::time_point deadline);
  response send_with_retries(const request& r, std::chrono::steady_clock::time_point deadline);

  location where_;
  credentials creds_;
  client_options options_;
  std::function<std::int64_t()> now_;
  struct tls_state;
  std::unique_ptr<tls_state> tls_;
  std::mutex idle_mutex_;
  std::vector<std::unique_ptr<connection>> idle_;
};

}  // namespace gistproxy::store::s3
