// The blob store's options: where blobs live (a directory or an S3 bucket),
// its cache, bounds, lifetimes and threads, the turn memory, and whether
// keyless callers may use the offload service.
#include "proxy/runtime/config_options.hpp"

namespace gistproxy::proxy {

std::vector<option> store_options() {
  return {
    {"offload", "on|off", "offload oversized tool outputs (default on; off: a plain proxy)",
     [](config& c, const std::string& v) { return set_switch(c.offload, v); }},
    {"store", "DIR|s3://BUCKET/PREFIX", "blob store: a directory (default ./gistproxy-blobs) or an S3 bucket",
     [](config& c, const std::string& v) { return c.store = v, !v.empty(); }},
    {"s3-endpoint", "URL", "S3-compatible endpoint (MinIO, Ceph, R2, ...; path-style); default AWS_ENDPOINT_URL_S3, "
                           "AWS_ENDPOINT_URL, else AWS for AWS_REGION",
     [](config& c, const std::string& v) { return c.s3_endpoint = v, !v.empty(); }},
    {"store-slow-span", "DURATION", "S3 calls at least this slow become store_call spans of their request (default 200ms; 0: all)",
     [](config& c, const std::string& v) { return set_duration(c.store_slow_span, v); }},
    {"store-max-bytes", "BYTES", "bound on the directory store's blob files (default 0: none); past it new "
                                 "offloads stay inline (counted), and gc evicts the least recently kept blobs",
     [](config& c, const std::string& v) { return set_bytes(c.store_max_bytes, v); }},
    {"offload-service-anonymous", "on|off", "let callers without an API key use /v1/offload and /v1/blobs, as one "
                                            "shared tenant (default off: 401)",
     [](config& c, const std::string& v) { return set_switch(c.offload_service_anonymous, v); }},
    {"store-cache", "DIR", "local disk cache of an s3:// store: page-ins read it first (re-hashed), writes go to S3 first",
     [](config& c, const std::string& v) { return c.store_cache = v, !v.empty(); }},
    {"store-cache-bytes", "BYTES", "the cache's budget; least recently used blobs leave first (default 1GiB)",
     [](config& c, const std::string& v) { return set_bytes(c.store_cache_bytes, v); }},
    {"turn-memory", "BYTES", "remember each conversation's last turn so the next one, which re-sends it, reuses "
                             "the work on the bytes both share (default 256MiB; 0 off)",
     [](config& c, const std::string& v) { return set_bytes(c.turn_memory_bytes, v); }},
    {"store-timeout", "DURATION", "longest wait for one S3 store call, retries included; past it the original "
                                  "is forwarded (default 5s)",
     [](config& c, const std::string& v) { return set_duration(c.store_timeout, v) && c.store_timeout.count() > 0; }},
    {"zstd-level", "N", "zstd level for stored blobs (default 3)",
     [](config& c, const std::string& v) { return set_uint(c.zstd_level, v, 1, 19); }},
    {"max-blob-bytes", "BYTES", "larger outputs stay inline, never truncated (default 16MiB)",
     [](config& c, const std::string& v) { return set_bytes(c.max_blob_bytes, v); }},
    {"blob-ttl", "DURATION", "blobs unused this long expire (default 7d; refreshed by use)",
     [](config& c, const std::string& v) { return set_duration(c.blob_ttl, v) && c.blob_ttl.count() > 0; }},
    {"store-threads", "N", "threads hashing, compressing and writing blobs (default 2)",
     [](config& c, const std::string& v) { return set_uint(c.store_threads, v, 1, 64); }},
  };
}

}  // namespace gistproxy::proxy
