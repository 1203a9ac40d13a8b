#include "proxy/store/blob_file.hpp"

#include <zstd.h>

#include <nlohmann/json.hpp>

#include "rewrite/blob/digest.hpp"
#include "rewrite/json/checked.hpp"

namespace gistproxy::store {
using namespace gistproxy::rewrite;

namespace {
constexpr std::string_view magic = "GPB1 ";
}  // namespace

std::string encode_blob(std::string_view bytes, const blob_meta& meta, std::int64_t created_at, int zstd_level,
                        std::string& error) {
  nlohmann::json header = {{"hash", meta.hash},         {"size", bytes.size()},   {"kind", meta.kind},
                           {"created_at", created_at}, {"tenant", meta.tenant}, {"tool", meta.tool_name}};
  std::string out(magic);
  out += header.dump(-1, ' ', false, nlohmann::json::error_handler_t::replace);
  out += '\n';
  std::size_t head = out.size();
  out.resize(head + ZSTD_compressBound(bytes.size()));
  std::size_t z = ZSTD_compress(out.data() + head, out.size() - head, bytes.data(), bytes.size(), zstd_level);
  if (ZSTD_isError(z)) {
    error = std::string("zstd: ") + ZSTD_getErrorName(z);
    return {};
  }
  out.resize(head + z);
  return out;
}

get_result decode_blob(std::string_view file, std::string_view expected_hash, std::uint64_t max_blob_bytes) {
  get_result r;
  auto nl = file.find('\n');
  if (file.compare(0, magic.size(), magic) != 0 || nl == std::string::npos)
    return {blob_error::integrity, {}, {}, "blob file header is damaged"};
  // The header is as hostile as the rest of the file: any member of the
  // wrong type is damage (an integrity failure), never an exception.
  auto header = checked::parse(std::string_view(file).substr(magic.size(), nl - magic.size()));
  const auto size = checked::integer_at(header, "size");
  if (!header.is_object() || !checked::member(header, "hash").is_string() || !size || *size < 0)
    return {blob_error::integrity, {}, {}, "blob metadata is damaged"};
  r.meta.hash = checked::string_at(header, "hash");
  r.meta.size = std::uint64_t(*size);
  r.meta.kind = checked::string_at(header, "kind");
  r.meta.created_at = checked::integer_at(header, "created_at").value_or(0);
  r.meta.tenant = checked::string_at(header, "tenant");
  r.meta.tool_name = checked::string_at(header, "tool");

  const char* frame = file.data() + nl + 1;
  std::size_t frame_size = file.size() - nl - 1;
  auto content = ZSTD_getFrameContentSize(frame, frame_size);
  // Cap decompression (zstd bombs): the frame must declare a size within the limit.
  if (content == ZSTD_CONTENTSIZE_ERROR || content == ZSTD_CONTENTSIZE_UNKNOWN)
    return {blob_error::integrity, {}, r.meta, "blob data is not a valid zstd frame"};
  if (content > max_blob_bytes || content != r.meta.size)
    return {blob_error::integrity, {}, r.meta, "blob data size does not match its metadata"};
  r.bytes.resize(content);
  std::size_t got = ZSTD_decompress(r.bytes.data(), r.bytes.size(), frame, frame_size);
  if (ZSTD_isError(got) || got != content) return {blob_error::integrity, {}, r.meta, "blob data does not decompress"};
  // The store is the attack surface the hash defends: re-hash on every read.
  if (sha256_hex(r.bytes) != expected_hash || r.meta.hash != expected_hash) {
    r.bytes.clear();
    r.error = blob_error::integrity;
    r.message = "blob bytes do not match their SHA-256 handle";
    return r;
  }
  return r;
}

bool is_intact_blob(std::string_view file, std::string_view hash, std::uint64_t size) {
  const auto nl = file.find('\n');
  if (nl == std::string_view::npos || !is_blob_header_of(file.substr(0, nl + 1), hash)) return false;
  auto header = checked::parse(file.substr(magic.size(), nl - magic.size()));
  if (checked::integer_at(header, "size") != std::optional<std::int64_t>(std::int64_t(size))) return false;
  const auto frame = file.substr(nl + 1);
  if (ZSTD_getFrameContentSize(frame.data(), frame.size()) != size) return false;
  // Walks the frame's block headers only: no decompression.
  const auto compressed = ZSTD_findFrameCompressedSize(frame.data(), frame.size());
  return !ZSTD_isError(compressed) && compressed == frame.size();
}

bool is_blob_header_of(std::string_view head, std::string_view hash) {
  if (head.substr(0, magic.size()) != magic) return false;
  const auto nl = head.find('\n');
  if (nl == std::string_view::npos) return false;
  auto header = checked::parse(head.substr(magic.size(), nl - magic.size()));
  return header.is_object() && checked::member(header, "hash").is_string() && checked::string_at(header, "hash") == hash;
}

}  // namespace gistproxy::store
