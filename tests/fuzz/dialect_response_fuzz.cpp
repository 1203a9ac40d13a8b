// Each dialect's handling of a complete upstream answer: read_blob calls,
// usage, conversation continuation and call removal. Never a throw.
#include <nlohmann/json.hpp>

#include "rewrite/dialect.hpp"
#include "rewrite/json/checked.hpp"
#include "tests/fuzz/fuzz_input.hpp"

using namespace gistproxy::rewrite;

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
  gistproxy::fuzz::input in(data, size);
  std::string body(in.piece());
  std::string answer_text(in.rest());
  auto answer = checked::parse(answer_text);
  std::vector<call_result> results{{"id", "page text", false}, {"id2", "error", true}};
  for (const auto* d : all_dialects()) {
    d->usage_from_response(std::string_view(answer_text));
    d->usage_from_event("message_start", answer_text, *std::make_unique<token_usage>());
    d->usage_from_event("response.completed", answer_text, *std::make_unique<token_usage>());
    d->inspect(body);
    request_facts facts;
    d->inspect_target(body, facts);  // the body's bytes as a request target
    if (answer.is_discarded()) continue;
    d->find_blob_calls(answer, "read_blob");
    d->usage_from_response(answer);
    auto next = d->continue_conversation(body, answer, "read_blob", results, true);
    if (next && !nlohmann::json::accept(*next) && nlohmann::json::accept(body)) __builtin_trap();
    auto copy = answer;
    d->remove_blob_calls(copy, "read_blob");
  }
  return 0;
}
