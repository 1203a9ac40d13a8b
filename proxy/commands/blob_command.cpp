#include "proxy/commands/blob_command.hpp"

#include <cstdio>
#include <filesystem>
#include <iostream>
#include <variant>

#include "proxy/commands/wiring.hpp"
#include "proxy/runtime/config.hpp"
#include "proxy/store/s3/s3_blob_store.hpp"
#include "rewrite/blob/digest.hpp"
#include "proxy/store/fs_blob_store.hpp"
#include "rewrite/offload/engine.hpp"

extern char** environ;

namespace gistproxy::proxy {
namespace {

constexpr const char* usage =
    "usage: gistproxy blob <get HANDLE | verify | gc> [options]\n\n"
    "  get HANDLE    write the exact bytes of a blob to stdout (re-hashed first)\n"
    "  verify        re-hash every blob; exit 1 if any is corrupt\n"
    "  gc            remove expired blobs (at most --max per run)\n\n"
    "options:\n"
    "  --store DIR|s3://BUCKET/PREFIX   blob store (default ./gistproxy-blobs); S3 credentials and\n"
    "                      region from AWS_ACCESS_KEY_ID, AWS_SECRET_ACCESS_KEY, AWS_SESSION_TOKEN, AWS_REGION\n"
    "  --s3-endpoint URL   S3-compatible endpoint (default AWS_ENDPOINT_URL_S3 / AWS_ENDPOINT_URL, else AWS);\n"
    "                      reached through https_proxy / http_proxy unless no_proxy lists it (as serve)\n"
    "  --store-timeout D   longest wait for one S3 call, retries included (default 5s)\n"
    "  --tenant T          the tenant to read from (get); default: search every tenant\n"
    "  --api-key KEY       read as the tenant of this API key (get): the key itself (sk-...) or\n"
    "                      the Authorization value the client sent (\"Bearer sk-...\")\n"
    "  --blob-ttl DURATION TTL for gc and get (default 7d)\n"
    "  --max N             most blobs gc removes in one run (default 10000)\n"
    "  --allow-bucket-root gc on s3://BUCKET with no prefix (refused otherwise: other applications'\n"
    "                      objects may live there); gc only ever deletes keys in gistproxy's layout\n"
    "                      whose object starts with a gistproxy blob header for that hash\n";

// The tenants a key may have: serve names a tenant after the Authorization
// value as sent ("Bearer sk-…") or after x-api-key ("sk-…"); an operator
// types the key, so both spellings are tried.
std::vector<std::string> tenants_of_key(const std::string& key) {
  std::vector<std::string> out{rewrite::tenant_of(key)};
  if (key.find(' ') == std::string::npos) out.push_back(rewrite::tenant_of("Bearer " + key));
  return out;
}

struct blob_options {
  std::string verb, handle, tenant, api_key, store = "gistproxy-blobs", s3_endpoint;
  bool allow_bucket_root = false;
  std::chrono::milliseconds store_timeout{5000};
  std::chrono::milliseconds ttl{7ll * 24 * 3600 * 1000};
  std::uint64_t max = 10000;
};

// The options after the verb; an exit code when they are not usable.
std::variant<blob_options, int> parse_blob_args(const std::vector<std::string>& args) {
  blob_options o;
  o.verb = args[0];
  std::size_t i = 1;
  if (o.verb == "get") {
    if (args.size() < 2) return std::cerr << "gistproxy blob get: needs a HANDLE\n", 2;
    o.handle = args[1];
    i = 2;
  }
  for (; i < args.size(); ++i) {
    const std::string& a = args[i];
    if (a == "--allow-bucket-root") {
      o.allow_bucket_root = true;
      continue;
    }
    if (i + 1 >= args.size()) return std::cerr << "gistproxy blob: " << a << " needs a value\n", 2;
    const std::string& v = args[++i];
    if (a == "--store") o.store = v;
    else if (a == "--tenant") o.tenant = v;
    else if (a == "--api-key") o.api_key = v;
    else if (a == "--s3-endpoint") o.s3_endpoint = v;
    else if (a == "--store-timeout") {
      auto d = parse_duration(v);
      if (!d || d->count() <= 0) return std::cerr << "gistproxy blob: bad --store-timeout '" << v << "'\n", 2;
      o.store_timeout = *d;
    } else if (a == "--blob-ttl") {
      auto d = parse_duration(v);
      if (!d || d->count() <= 0)
        return std::cerr << "gistproxy blob: bad --blob-ttl '" << v << "' (a positive duration up to ten years)\n", 2;
      o.ttl = *d;
    } else if (a == "--max") o.max = std::strtoull(v.c_str(), nullptr, 10);
    else return std::cerr << "gistproxy blob: unknown option " << a << "\n" << usage, 2;
  }
  return o;
}

// get: the first tenant that has the handle (the one asked for, the API
// key's, or every tenant of the store).
int blob_get(const blob_options& o, opened_store& opened) {
  if (!rewrite::is_handle_prefix(o.handle))
    return std::cerr << "gistproxy blob get: a handle is 16 to 64 lowercase hex characters\n", 2;
  std::vector<std::string> tenants;
  if (!o.tenant.empty()) tenants.push_back(o.tenant);
  else if (!o.api_key.empty()) tenants = tenants_of_key(o.api_key);
  else if (opened.s3)
    tenants = opened.s3->tenants();
  else
    for (const auto& e : std::filesystem::directory_iterator(o.store))
      if (e.is_directory()) tenants.push_back(e.path().filename().string());
  rewrite::get_result found;
  found.error = rewrite::blob_error::not_found;
  for (const auto& t : tenants) {
    auto r = opened.blobs->get(t, o.handle);
    if (r.error != rewrite::blob_error::not_found) {
      found = std::move(r);
      break;
    }
  }
  if (found.error != rewrite::blob_error::none) {
    std::cerr << "gistproxy blob get: " << rewrite::blob_error_name(found.error) << ": "
              << (found.message.empty() ? "no such blob" : found.message) << "\n";
    return found.error == rewrite::blob_error::integrity ? 3 : 1;
  }
  std::fwrite(found.bytes.data(), 1, found.bytes.size(), stdout);
  return std::fflush(stdout) == 0 ? 0 : 1;
}

int blob_verify(opened_store& opened) {
  auto report = opened.blobs->verify();
  for (const auto& c : report.corrupt) std::cout << "corrupt " << c << "\n";
  std::cout << report.checked << " blobs checked, " << report.corrupt.size() << " corrupt\n";
  return report.corrupt.empty() ? 0 : 1;
}

int blob_gc(const blob_options& o, opened_store& opened) {
  if (opened.s3 && opened.s3->at_bucket_root()) {
    if (!o.allow_bucket_root)
      return std::cerr << "gistproxy blob gc: " << o.store
                       << " has no prefix: gc would act on the whole bucket, where other applications' objects may "
                          "live. Give s3://BUCKET/PREFIX, or --allow-bucket-root if the bucket is gistproxy's alone\n",
             2;
    opened.s3->allow_bucket_root();
  }
  auto removed = opened.blobs->gc(o.max);
  std::cout << removed << " expired blobs removed\n";
  return 0;
}

}  // namespace

int blob_command(const std::vector<std::string>& args) {
  if (args.empty() || args[0] == "--help" || args[0] == "-h") {
    std::cout << usage;
    return args.empty() ? 2 : 0;
  }
  auto parsed = parse_blob_args(args);
  if (auto* code = std::get_if<int>(&parsed)) return *code;
  const auto& o = std::get<blob_options>(parsed);
  if (o.verb != "get" && o.verb != "verify" && o.verb != "gc")
    return std::cerr << "gistproxy blob: unknown command '" << o.verb << "'\n" << usage, 2;
  if (!is_s3_store(o.store) && !std::filesystem::is_directory(o.store))
    return std::cerr << "gistproxy blob: no store at '" << o.store << "'\n", 2;
  config cfg;
  cfg.store = o.store;
  cfg.s3_endpoint = o.s3_endpoint;
  cfg.store_timeout = o.store_timeout;
  cfg.blob_ttl = o.ttl;
  read_egress_environment(cfg.egress, environ);  // an S3 store is reached as serve reaches it
  opened_store opened;
  try {
    opened = open_store(cfg, nullptr);
  } catch (const std::exception& e) {
    return std::cerr << "gistproxy blob: " << e.what() << "\n", 2;
  }
  if (!opened.warning.empty()) return std::cerr << "gistproxy blob: " << opened.warning << "\n", 1;
  if (o.verb == "get") return blob_get(o, opened);
  if (o.verb == "verify") return blob_verify(opened);
  return blob_gc(o, opened);
}

}  // namespace gistproxy::proxy
