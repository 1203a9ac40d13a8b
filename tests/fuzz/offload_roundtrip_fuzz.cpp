// The offload engine over each dialect's scan: a rewritten body is valid
// JSON, and every offloaded output pages back to exactly its bytes — with
// Cline-style text tool results found too (--text-tool-results cline), whose
// references are spliced inside a string that keeps its header.
#include <nlohmann/json.hpp>

#include "rewrite/endpoint.hpp"
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
  cfg.text_tool_results = text_results::cline;
  offload_engine engine(cfg, store, estimator);
  for (const auto* d : all_endpoints()) {
    auto result = engine.rewrite(d->wire(), body, "t");
    if (result.report.outcome != rewrite_outcome::rewritten) continue;
    if (nlohmann::json::accept(body) && !nlohmann::json::accept(result.body)) __builtin_trap();
    for (const auto& o : result.report.offloads) {
      page_request q;
      q.handle = o.hash;
      auto page = page_in(store, "t", q, page_limits::with_page(1ull << 30));
      if (!page.ok) __builtin_trap();
      // Text comes back as its exact bytes; a binary blob as one header line
      // and the base64 of its exact bytes. (A text output may itself begin
      // like that header: the hash, not the prefix, tells which it is.)
      if (sha256_hex(page.text) == o.hash) continue;
      std::string decoded;
      if (!page.text.starts_with("[read_blob: ") || !base64_decode(page.text.substr(page.text.find('\n') + 1), decoded))
        __builtin_trap();
      if (sha256_hex(decoded) != o.hash) __builtin_trap();
    }
  }
  return 0;
}
