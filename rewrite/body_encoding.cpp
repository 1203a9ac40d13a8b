#include "rewrite/body_encoding.hpp"

#include <zlib.h>
#include <zstd.h>

namespace gistproxy::rewrite {
namespace {

decode_status gunzip(std::string_view in, std::uint64_t max, std::string& out) {
  z_stream zs{};
  if (inflateInit2(&zs, 16 + MAX_WBITS) != Z_OK) return decode_status::corrupt;
  zs.next_in = reinterpret_cast<Bytef*>(const_cast<char*>(in.data()));
  zs.avail_in = uInt(in.size());
  char buf[65536];
  int rc;
  for (;;) {
    zs.next_out = reinterpret_cast<Bytef*>(buf);
    zs.avail_out = sizeof buf;
    rc = inflate(&zs, Z_NO_FLUSH);
    if (rc != Z_OK && rc != Z_STREAM_END) break;
    out.append(buf, sizeof buf - zs.avail_out);
    if (out.size() > max) {
      inflateEnd(&zs);
      return decode_status::too_large;
    }
    if (rc == Z_STREAM_END) {
      // RFC 1952 §2.2: a gzip file is a series of members. Decode them all
      // (what gunzip does); stopping at the first would drop the rest.
      if (zs.avail_in == 0) break;
      if (inflateReset(&zs) != Z_OK) break;
      rc = Z_OK;
      continue;
    }
    if (zs.avail_in == 0 && zs.avail_out != 0) break;  // input ended inside a member
  }
  inflateEnd(&zs);
  return rc == Z_STREAM_END ? decode_status::ok : decode_status::corrupt;
}

decode_status unzstd(std::string_view in, std::uint64_t max, std::string& out) {
  ZSTD_DStream* ds = ZSTD_createDStream();
  ZSTD_initDStream(ds);
  ZSTD_inBuffer input{in.data(), in.size(), 0};
  char buf[65536];
  std::size_t rc = 1;
  while (input.pos < input.size || rc != 0) {
    ZSTD_outBuffer output{buf, sizeof buf, 0};
    rc = ZSTD_decompressStream(ds, &output, &input);
    if (ZSTD_isError(rc)) {
      ZSTD_freeDStream(ds);
      return decode_status::corrupt;
    }
    out.append(buf, output.pos);
    if (out.size() > max) {
      ZSTD_freeDStream(ds);
      return decode_status::too_large;
    }
    if (input.pos == input.size && output.pos == 0 && rc != 0) {
      ZSTD_freeDStream(ds);
      return decode_status::corrupt;  // truncated frame
    }
  }
  ZSTD_freeDStream(ds);
  return decode_status::ok;
}

}  // namespace

decode_status decode_body(std::string_view encoding, std::string_view body, std::uint64_t max_bytes, std::string& out) {
  out.clear();
  if (encoding.empty() || encoding == "identity") {
    out.assign(body);
    return decode_status::ok;
  }
  if (encoding == "gzip" || encoding == "x-gzip") return gunzip(body, max_bytes, out);
  if (encoding == "zstd") return unzstd(body, max_bytes, out);
  return decode_status::unsupported;
}

}  // namespace gistproxy::rewrite
