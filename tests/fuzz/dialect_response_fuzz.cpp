// Each dialect's handling of a complete upstream answer: read_blob calls,
// usage, conversation continuation and call removal; a request body's prefix
// fingerprint and a price table read from the same bytes. Never a throw.
#include <nlohmann/json.hpp>

#include "rewrite/prompt_cache/prefix_fingerprint.hpp"
#include "rewrite/cost/prices.hpp"
#include "rewrite/endpoint.hpp"
#include "rewrite/json/checked.hpp"
#include "rewrite/json/tree.hpp"
#include "tests/fuzz/fuzz_input.hpp"

using namespace gistproxy::rewrite;

namespace {

// Every integer nlohmann's tree holds is read the same from the text (below
// the field cap, where the two keep different members: document order against
// key order).
void check_usage_fields(std::string_view text, const nlohmann::json& parsed) {
  // Only for JSON nlohmann reads: a key holding a lone surrogate reads as
  // U+FFFD in the text and as WTF-8 in the tree (no API names a usage field so).
  if (!nlohmann::json::accept(text)) return;
  auto from_text = read_usage_fields(text);
  if (!from_text || !parsed.is_object()) return;
  auto from_tree = usage_fields_of(parsed);
  if (from_text->size() >= usage_fields::max_fields || from_tree.size() >= usage_fields::max_fields) return;
  for (std::size_t i = 0; i < from_tree.size(); ++i)
    if (from_text->get(from_tree.path(i)) != from_tree.value(i)) __builtin_trap();
}

// A request body's prefix fingerprint: bounded on any input, deterministic,
// and a body always extends itself.
void check_prefix_fingerprint(std::string_view body) {
  for (const auto* d : all_endpoints()) {
    const auto layout = d->wire().cache_prefix();
    auto a = fingerprint_prefix(body, layout);
    auto b = fingerprint_prefix(body, layout);
    if (a.has_value() != b.has_value()) __builtin_trap();
    // A body that carries this API's conversation (or whose conversation the
    // provider holds) keeps its own prefix; one without it never counts as kept.
    auto parts = split_prefix(body, layout);
    if (parts && (parts->has_conversation || parts->provider_held) != keeps_prefix(*parts, *parts)) __builtin_trap();
    if (!a) continue;
    if (a->head != b->head || a->cumulative != b->cumulative) __builtin_trap();
    if (!extends(summary_of(*a), *b)) __builtin_trap();
  }
}

// JSON as the upstream's parser reads it, lone surrogates included (the
// continuation gives an answer's back as the escapes they came as).
bool readable(std::string_view text) {
  return checked::within_depth(text, 512) && json::parse_tree(text, 1024, json::lone_surrogates::keep).has_value();
}

}  // namespace

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
  gistproxy::fuzz::input in(data, size);
  std::string body(in.piece());
  std::string answer_text(in.rest());
  auto answer = json::parse_checked(answer_text);  // as the JSON reader parses answers
  check_usage_fields(answer_text, answer);
  check_prefix_fingerprint(body);
  std::string error;
  price_table::parse(answer_text, error);  // --prices files: bounded, never a throw
  std::vector<call_result> results{{"id", "page text", false}, {"id2", "error", true}};
  for (const auto* d : all_endpoints()) {
    d->wire().usage_from_response(std::string_view(answer_text));
    d->wire().usage_from_event("message_start", answer_text, *std::make_unique<token_usage>());
    d->wire().usage_from_event("response.completed", answer_text, *std::make_unique<token_usage>());
    d->wire().inspect(body);
    request_facts facts;
    d->inspect_target(body, facts);  // the body's bytes as a request target
    if (answer.is_discarded()) continue;
    d->wire().find_blob_calls(answer, "read_blob");
    d->wire().usage_from_response(answer);
    auto next = d->wire().continue_conversation(body, answer, "read_blob", results, true);
    if (next && !readable(*next) && readable(body)) __builtin_trap();
    auto copy = answer;
    d->wire().remove_blob_calls(copy, "read_blob");
  }
  return 0;
}
