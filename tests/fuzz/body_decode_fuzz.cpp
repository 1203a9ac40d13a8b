// Request body decoding (gzip, zstd): bounded output, never a crash.
#include "rewrite/body_encoding.hpp"

using namespace gistproxy::rewrite;

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
  std::string_view body(reinterpret_cast<const char*>(data), size);
  std::string out;
  for (const char* encoding : {"gzip", "zstd"}) {
    auto status = decode_body(encoding, body, 1 << 20, out);
    if (status == decode_status::ok && out.size() > (1 << 20)) __builtin_trap();
  }
  return 0;
}
