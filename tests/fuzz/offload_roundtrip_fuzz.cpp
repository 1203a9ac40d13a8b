// The offload engine over each dialect's scan: a rewritten body is valid
// JSON, and every offloaded output pages back to exactly its bytes.
#include <nlohmann/json.hpp>

#include "rewrite/blob/digest.hpp"
#include "rewrite/blob/memory_blob_store.hpp"
#include "rewrite/offload/base64.hpp"
#include "rewrite/offload/engine.hpp"
#include "rewrite/page_in/page_in.hpp"
#include "tests/fuzz/fuzz_input.hpp"

using namespace gistproxy::rewrite;

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
  std::string_view body(reinterpret_cast<const char*>(data), size);
  memory_blob_store store([] { return std::int64_t(1); });
  char_ratio_estimator estimator;
  offload_config cfg;
  cfg.threshold_tokens = 8;
  cfg.min_offload_bytes = 16;
  offload_engine engine(cfg, store, estimator);
  for (const auto* d : all_dialects()) {
    auto result = engine.rewrite(*d, body, "t");
    if (result.report.outcome != rewrite_outcome::rewritten) continue;
    if (nlohmann::json::accept(body) && !nlohmann::json::accept(result.body)) __builtin_trap();
    for (const auto& o : result.report.offloads) {
      page_request q;
      q.handle = o.hash;
      auto page = page_in(store, "t", q, page_limits::with_page(1ull << 30));
      if (!page.ok) __builtin_trap();
      std::string exact = page.text;
      if (exact.starts_with("[read_blob: ") && !base64_decode(exact.substr(exact.find('\n') + 1), exact)) __builtin_trap();
      if (sha256_hex(exact) != o.hash) __builtin_trap();
    }
  }
  return 0;
}
