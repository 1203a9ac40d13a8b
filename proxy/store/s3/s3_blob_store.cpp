#include "proxy/store/s3/s3_blob_store.hpp"

#include <chrono>

#include "proxy/store/blob_file.hpp"
#include "proxy/store/fs_blob_store.hpp"
#include "rewrite/blob/digest.hpp"

namespace gistproxy::store {
using namespace gistproxy::rewrite;

namespace {

constexpr std::size_t max_listed_objects = 1'000'000;  // verify/gc stop there (one run)
// A short handle (16+ hex characters) under one tenant matches one key, or a
// few: a listing of it that needs more pages than this is misbehaving, and a
// page-in must not wait on it (an always-truncated listing took 387 LISTs in
// 15 s and went on after the client left).
constexpr std::size_t max_handle_pages = 3;
constexpr std::size_t max_known = 200'000;             // remembered objects (~100 bytes each)

std::string status_text(const s3::response& r) {
  if (r.status == 0) return "S3 unreachable: " + r.error;
  return "S3 answered " + std::to_string(r.status) + (r.error.empty() ? "" : " " + r.error);
}

std::int64_t system_now() {
  return std::chrono::duration_cast<std::chrono::seconds>(std::chrono::system_clock::now().time_since_epoch()).count();
}

bool is_hex64(std::string_view s) {
  if (s.size() != 64) return false;
  for (char c : s)
    if (!((c >= '0' && c <= '9') || (c >= 'a' && c <= 'f'))) return false;
  return true;
}

s3::header_list meta_headers(const blob_meta& meta, std::uint64_t size) {
  return {{"x-amz-meta-gistproxy-size", std::to_string(size)},
          {"x-amz-meta-gistproxy-kind", meta.kind},
          {"x-amz-meta-gistproxy-tool", meta.tool_name}};
}

std::int64_t last_modified_of(const s3::response& r) {
  return s3::parse_http_date(r.header("last-modified")).value_or(0);
}

}  // namespace

s3_blob_store::s3_blob_store(std::unique_ptr<s3::client> client, s3_store_options options)
    : client_(std::move(client)), options_(std::move(options)) {
  if (!options_.now) options_.now = system_now;
}

bool s3_blob_store::at_bucket_root() const { return client_->where().prefix.empty(); }

std::optional<s3_blob_store::owned_key> s3_blob_store::parse_key(std::string_view key) const {
  const auto base = root();
  if (key.size() <= base.size() || key.substr(0, base.size()) != base) return std::nullopt;
  const auto rel = key.substr(base.size());
  const auto slash = rel.find('/');
  if (slash == std::string_view::npos) return std::nullopt;
  owned_key k{std::string(rel.substr(0, slash)), std::string(rel.substr(slash + 1))};
  if (!is_valid_tenant(k.tenant) || !is_hex64(k.hash)) return std::nullopt;
  return k;
}

std::string s3_blob_store::root() const {
  const auto& p = client_->where().prefix;
  return p.empty() ? std::string() : p + "/";
}

std::string s3_blob_store::key_of(std::string_view tenant, std::string_view hash) const {
  return root() + std::string(tenant) + "/" + std::string(hash);
}

std::string s3_blob_store::check_access() {
  // HeadBucket: no body, so the status says it (an error body needs a GET).
  auto r = client_->send({"HEAD", "", {}, {}, {}});
  if (r.ok()) return {};
  if (r.status == 403)
    return status_text(r) + ": access denied: the credentials are wrong (check AWS_ACCESS_KEY_ID / AWS_SECRET_ACCESS_KEY) "
                            "or may not use bucket '" + client_->where().bucket + "'";
  if (r.status == 404) return status_text(r) + ": bucket '" + client_->where().bucket + "' does not exist";
  if (r.status == 301 || r.status == 400)
    return status_text(r) + ": the bucket is in another region (set AWS_REGION) or the endpoint is wrong";
  return status_text(r);
}

bool s3_blob_store::contains(std::string_view tenant, std::string_view hash) {
  if (!is_valid_tenant(tenant) || !is_hex64(hash)) return false;
  const auto key = key_of(tenant, hash);
  {
    // Budget mode asks this for every old output of every request: what this
    // replica wrote or read needs no round trip.
    std::lock_guard lock(known_mutex_);
    if (known_.count(key)) return true;
    // An output nobody stored is asked about on every turn of its
    // conversation: a recent "not there" answers for a few minutes (another
    // replica storing it meanwhile costs at most one redundant put).
    if (auto it = known_absent_.find(key); it != known_absent_.end() && options_.now() - it->second < absent_ttl_seconds)
      return false;
  }
  auto head = client_->send({"HEAD", key, {}, {}, {}});
  if (head.ok()) remember(std::string(tenant), std::string(hash), last_modified_of(head));
  else if (head.status == 404) {
    std::lock_guard lock(known_mutex_);
    if (known_absent_.size() >= max_known) known_absent_.clear();
    known_absent_[key] = options_.now();
  }
  return head.ok();
}

std::int64_t s3_blob_store::refresh_if_old(const std::string& key, std::int64_t last_modified, const s3::header_list& meta) {
  const auto now = options_.now();
  if (last_modified <= 0 || now - last_modified < options_.refresh_after_seconds) return last_modified;
  // A copy onto itself (new metadata required by S3) resets Last-Modified
  // without moving the bytes through this process.
  s3::header_list headers = meta;
  headers.emplace_back("x-amz-copy-source", s3::uri_encode(client_->where().object_path(key), true));
  headers.emplace_back("x-amz-metadata-directive", "REPLACE");
  // Best effort: a failed refresh only shortens the blob's life.
  return client_->send({"PUT", key, {}, headers, {}}).ok() ? now : last_modified;
}

bool s3_blob_store::known_fresh(const std::string& key) {
  std::lock_guard lock(known_mutex_);
  auto it = known_.find(key);
  return it != known_.end() && options_.now() - it->second < options_.refresh_after_seconds;
}

void s3_blob_store::remember(const std::string& tenant, const std::string& hash, std::int64_t last_modified) {
  std::lock_guard lock(known_mutex_);
  if (known_.size() >= max_known) {  // a bound, not an LRU: forgetting costs one request per blob
    known_.clear();
    known_handles_.clear();
  }
  known_[key_of(tenant, hash)] = last_modified;
  known_absent_.erase(key_of(tenant, hash));
  known_handles_[tenant + "/" + hash.substr(0, 16)] = hash;
}

std::string s3_blob_store::known_full_hash(std::string_view tenant, std::string_view prefix) {
  if (prefix.size() < 16) return {};
  std::lock_guard lock(known_mutex_);
  auto it = known_handles_.find(std::string(tenant) + "/" + std::string(prefix.substr(0, 16)));
  // 16 hex characters are 64 bits: another blob of the tenant sharing them is
  // not a case to pay a listing for on every page-in.
  return it != known_handles_.end() && it->second.compare(0, prefix.size(), prefix) == 0 ? it->second : std::string();
}

// Only what put() would take as stored without asking the bucket: an older
// object is written again by put(), which renews its age.
bool s3_blob_store::keep(std::string_view tenant, std::string_view hash) {
  return is_valid_tenant(tenant) && is_hex64(hash) && known_fresh(key_of(tenant, hash));
}

put_result s3_blob_store::put(std::string_view bytes, const blob_meta& meta) { return store(bytes, std::nullopt, meta); }

put_result s3_blob_store::put_encoded(std::string_view bytes, std::string_view encoded, const blob_meta& meta) {
  return store(bytes, encoded, meta);
}

put_result s3_blob_store::store(std::string_view bytes, std::optional<std::string_view> encoded, const blob_meta& meta) {
  if (!is_valid_tenant(meta.tenant) || !is_hex64(meta.hash)) return {blob_error::io, false, "invalid tenant or hash"};
  if (bytes.size() > options_.max_blob_bytes) return {blob_error::too_large, false, "blob exceeds --max-blob-bytes"};
  const auto key = key_of(meta.tenant, meta.hash);
  if (known_fresh(key)) return {blob_error::none, true, {}};  // stored, and young: nothing to ask the bucket
  const auto headers = meta_headers(meta, bytes.size());

  std::string error;
  std::string object = encoded ? std::string(*encoded) : encode_blob(bytes, meta, options_.now(), options_.zstd_level, error);
  if (object.empty()) return {blob_error::io, false, error};
  auto put_headers = headers;
  put_headers.emplace_back("If-None-Match", "*");  // written once; identical bytes make a lost race harmless
  const auto size = object.size();
  // First sight is the common case: one conditional PUT, no HEAD before it.
  auto r = client_->send({"PUT", key, {}, put_headers, std::move(object)});
  if (r.status == 412) {  // another replica (or an earlier run) stored it: keep it alive
    auto head = client_->send({"HEAD", key, {}, {}, {}});
    remember(meta.tenant, meta.hash, head.ok() ? refresh_if_old(key, last_modified_of(head), headers) : options_.now());
    return {blob_error::none, true, {}};
  }
  if (!r.ok()) return {blob_error::io, false, status_text(r)};
  remember(meta.tenant, meta.hash, options_.now());
  objects_.fetch_add(1);
  stored_bytes_.fetch_add(size);
  return {blob_error::none, false, {}};
}

get_result s3_blob_store::get(std::string_view tenant, std::string_view prefix) {
  if (!is_handle_prefix(prefix)) return {blob_error::not_found, {}, {}, "a handle is 16 to 64 lowercase hex characters"};
  if (!is_valid_tenant(tenant)) return {blob_error::not_found, {}, {}, "unknown tenant"};
  std::string full = prefix.size() == 64 ? std::string(prefix) : known_full_hash(tenant, prefix);
  if (full.empty()) {
    std::string error;
    std::size_t matches = 0;
    const auto tenant_root = root() + std::string(tenant) + "/";
    bool listed = list(std::string(tenant) + "/" + std::string(prefix), [&](const s3::listed_object& o) {
      auto owned = parse_key(o.key);  // a listing may return any key: only ours, of this tenant and prefix
      if (!owned || owned->tenant != tenant || owned->hash.compare(0, prefix.size(), prefix) != 0) return true;
      full = owned->hash;
      return ++matches < 2;
    }, error, max_handle_pages);
    if (!listed) return {blob_error::io, {}, {}, error};
    if (matches > 1) return {blob_error::ambiguous, {}, {}, "handle prefix matches several blobs; use more characters"};
    if (matches == 0) return {blob_error::not_found, {}, {}, "no blob with this handle for this API key"};
  }
  const auto key = key_of(tenant, full);
  auto r = client_->send({"GET", key, {}, {}, {}});
  if (r.status == 404) return {blob_error::not_found, {}, {}, "no blob with this handle for this API key"};
  if (!r.ok()) return {blob_error::io, {}, {}, status_text(r)};
  const auto modified = last_modified_of(r);
  if (modified > 0 && options_.now() - modified > options_.ttl_seconds)
    return {blob_error::expired, {}, {}, "blob expired (unused for longer than the TTL)"};
  auto got = decode_blob(r.body, full, options_.max_blob_bytes);
  if (got.error == blob_error::none)
    remember(std::string(tenant), full, refresh_if_old(key, modified, meta_headers(got.meta, got.bytes.size())));
  return got;
}

bool s3_blob_store::list(std::string_view prefix, const std::function<bool(const s3::listed_object&)>& visit,
                         std::string& error, std::size_t max_pages) {
  if (max_pages == 0) max_pages = options_.max_list_pages;
  std::string token;
  std::size_t seen = 0;
  const auto deadline = std::chrono::steady_clock::now() + options_.max_list_time;
  for (std::size_t pages = 0;; ++pages) {
    // An endpoint that always says there is more (or repeats its token)
    // must not keep a page-in, verify or gc listing forever.
    if (pages >= max_pages || std::chrono::steady_clock::now() >= deadline)
      return error = "listing did not end within " + std::to_string(max_pages) + " pages or " +
                     std::to_string(options_.max_list_time.count() / 1000) + " s",
             false;
    s3::header_list query = {{"list-type", "2"}, {"prefix", root() + std::string(prefix)}};
    if (!token.empty()) query.emplace_back("continuation-token", token);
    auto r = client_->send({"GET", "", query, {}, {}});
    if (!r.ok()) return error = status_text(r), false;
    auto page = s3::parse_list_objects(r.body);
    for (const auto& o : page.objects) {
      if (++seen > max_listed_objects || !visit(o)) return true;
    }
    if (page.next_token.empty()) return true;
    if (page.next_token == token) return error = "listing repeated its continuation token", false;
    token = std::move(page.next_token);
  }
}

std::vector<std::string> s3_blob_store::tenants() {
  std::vector<std::string> out;
  auto r = client_->send({"GET", "", {{"list-type", "2"}, {"prefix", root()}, {"delimiter", "/"}}, {}, {}});
  if (!r.ok()) return out;
  for (const auto& p : s3::parse_list_objects(r.body).common_prefixes) {
    auto t = p.substr(root().size());
    if (!t.empty() && t.back() == '/') t.pop_back();
    if (is_valid_tenant(t)) out.push_back(t);
  }
  return out;
}

verify_report s3_blob_store::verify() {
  verify_report report;
  std::string error;
  const auto base = root();
  bool listed = list("", [&](const s3::listed_object& o) {
    auto owned = parse_key(o.key);  // was: substr past the prefix on any key (out_of_range on a short one)
    if (!owned) return true;
    const auto rel = owned->tenant + "/" + owned->hash;
    const auto& hash = owned->hash;
    ++report.checked;
    auto r = client_->send({"GET", o.key, {}, {}, {}});
    if (!r.ok()) report.corrupt.push_back(rel + ": " + status_text(r));
    else if (auto got = decode_blob(r.body, hash, options_.max_blob_bytes); got.error != blob_error::none)
      report.corrupt.push_back(rel + ": " + got.message);
    return true;
  }, error);
  if (!listed) report.corrupt.push_back("listing failed: " + error);
  return report;
}

// Deletes only what gistproxy wrote: a key in its layout under its prefix
// (never the bare bucket unless allowed) whose object starts with a blob
// header naming that same hash (a ranged GET of its first bytes).
std::uint64_t s3_blob_store::gc(std::uint64_t max_removals) {
  if (at_bucket_root() && !options_.allow_bucket_root) return 0;
  std::uint64_t removed = 0;
  std::string error;
  list("", [&](const s3::listed_object& o) {
    if (removed >= max_removals) return false;
    if (o.last_modified <= 0 || options_.now() - o.last_modified <= options_.ttl_seconds) return true;
    auto owned = parse_key(o.key);
    if (!owned) return true;
    auto head = client_->send({"GET", o.key, {}, {{"Range", "bytes=0-4095"}}, {}});
    if (!head.ok() || !is_blob_header_of(head.body, owned->hash)) return true;
    if (client_->send({"DELETE", o.key, {}, {}, {}}).ok()) ++removed;
    return true;
  }, error);
  return removed;
}

}  // namespace gistproxy::store
