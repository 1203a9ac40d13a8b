// read_blob's argument parser and page-in engine on a fuzzed blob: never a
// crash, and a whole-blob answer is the blob's exact bytes.
#include "rewrite/blob/digest.hpp"
#include "rewrite/blob/memory_blob_store.hpp"
#include "rewrite/page_in/page_in.hpp"
#include "rewrite/text/utf8.hpp"
#include "tests/fuzz/fuzz_input.hpp"

using namespace gistproxy::rewrite;

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
  gistproxy::fuzz::input in(data, size);
  const std::uint64_t page = 16 + in.byte() * 8;
  std::string args(in.piece());
  std::string blob(in.rest());
  memory_blob_store store([] { return std::int64_t(1); });
  const auto hash = sha256_hex(blob);
  store.put(blob, {hash, blob.size(), "text", 0, "t", "tool"});
  std::string error;
  auto request = parse_page_request(args, error);
  if (!request) return 0;
  request->handle = hash;  // read the fuzzed blob, whatever handle was asked for
  auto limits = page_limits::with_page(page);
  limits.max_matches = 50;
  auto r = page_in(store, "t", *request, limits);
  const bool whole = r.mode == page_mode::full && !request->offset && blob.size() <= page;
  if (r.ok && whole && text::is_valid_utf8(blob) && r.text != blob) __builtin_trap();
  if (r.ok && text::is_valid_utf8(blob) && !text::is_valid_utf8(r.text)) __builtin_trap();
  return 0;
}
