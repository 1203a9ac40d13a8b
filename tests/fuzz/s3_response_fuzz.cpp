// What an S3 server answers is hostile: ListObjectsV2 bodies, error bodies,
// dates in headers and XML, and the object bytes (a blob read from the bucket
// is decoded and re-hashed like a file). None may crash or return bytes that
// do not hash to their handle.
#include <string_view>

#include "proxy/store/blob_file.hpp"
#include "proxy/store/s3/s3_xml.hpp"
#include "rewrite/blob/digest.hpp"

using namespace gistproxy;

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
  std::string_view text(reinterpret_cast<const char*>(data), size);
  auto page = store::s3::parse_list_objects(text);
  for (const auto& o : page.objects)
    if (o.key.empty()) __builtin_trap();
  store::s3::error_code_of(text);
  store::s3::parse_http_date(text.substr(0, 64));
  store::s3::parse_iso8601(text.substr(0, 64));
  store::s3::xml_unescape(text.substr(0, 4096));
  static const std::string hash = rewrite::sha256_hex("the blob");
  auto got = store::decode_blob(text, hash, 1 << 20);
  if (got.error == rewrite::blob_error::none && rewrite::sha256_hex(got.bytes) != hash) __builtin_trap();
  return 0;
}
