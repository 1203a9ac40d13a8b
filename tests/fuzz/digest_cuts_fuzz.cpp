// Every cut a gist makes (JSON digest keys and items, log and outline lines,
// previews, the tool's name) on text where multi-byte characters sit at
// fuzzed places: the reference, which goes into the forwarded body, is valid
// UTF-8 whenever the output and the tool name are, and each digest stays
// within its budget. Also the offload engine's whole forwarded body.
#include "rewrite/endpoint.hpp"
#include "rewrite/blob/digest.hpp"
#include "rewrite/blob/memory_blob_store.hpp"
#include "rewrite/gist/digests.hpp"
#include "rewrite/gist/reference.hpp"
#include "rewrite/offload/engine.hpp"
#include "rewrite/text/utf8.hpp"
#include "tests/fuzz/fuzz_input.hpp"

#include <nlohmann/json.hpp>

using namespace gistproxy::rewrite;

namespace {

// The fuzzed text with a character of 2, 3 or 4 bytes planted at each place
// a control byte names: cuts at 40, 160, 200 bytes and at budgets land on
// and around them.
std::string planted(gistproxy::fuzz::input& in) {
  static const std::string_view characters[] = {"\xc3\xa9", "\xe2\x82\xac", "\xf0\x9f\x98\x80"};
  const auto text = in.piece();
  std::string out;
  for (unsigned char c : text) {
    if (c >= 0xf8) out += characters[c % 3];
    else if (c < 0x80) out += char(c);
  }
  return out;
}

}  // namespace

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
  gistproxy::fuzz::input in(data, size);
  const std::size_t budget = 8 + in.byte() * 8;
  const std::size_t preview_tokens = 1 + in.byte() * 4;
  const std::string tool = planted(in);
  const std::string text = planted(in);
  if (!text::is_valid_utf8(text) || !text::is_valid_utf8(tool)) return 0;
  for (auto digest : {log_digest, json_digest, source_digest, search_hits_digest}) {
    const auto d = digest(text, budget);
    if (d.size() > budget || !text::is_valid_utf8(d)) __builtin_trap();
  }
  char_ratio_estimator estimator;
  reference_config cfg;
  cfg.preview_tokens = preview_tokens;
  const auto reference = render_reference(text, shape_of(text, estimator), tool, sha256_hex(text), cfg);
  if (!text::is_valid_utf8(reference)) __builtin_trap();

  // The same output through the engine, as a chat tool result: the forwarded body stays valid UTF-8.
  memory_blob_store store([] { return std::int64_t(1); });
  offload_config oc;
  oc.threshold_tokens = 1;
  oc.min_offload_bytes = 1;
  offload_engine engine(oc, store, estimator);
  const nlohmann::json body = {
      {"model", "m"},
      {"messages",
       {{{"role", "assistant"},
         {"tool_calls", {{{"id", "c"}, {"type", "function"}, {"function", {{"name", tool}, {"arguments", "{}"}}}}}}},
        {{"role", "tool"}, {"tool_call_id", "c"}, {"content", text}}}}};
  const auto sent = body.dump();
  auto r = engine.rewrite(endpoint_named("chat")->wire(), sent, "t");
  if (r.report.outcome == rewrite_outcome::rewritten && !text::is_valid_utf8(r.body)) __builtin_trap();
  return 0;
}
