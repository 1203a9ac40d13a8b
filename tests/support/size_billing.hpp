// Usage that follows the request, for tests of what gistproxy saves: a mock
// that reports the same usage for every request (scripted_render's 100 in /
// 10 out) cannot tell a request that carries a 40 KB output from one that
// carries its reference. Chosen by words in the request, Chat Completions
// JSON answers only:
//   "bill by size"  prompt_tokens = the body's bytes / 4; cached_tokens = the
//                   bytes it shares from the start with the previous LLM
//                   request's body / 4 (a provider's prefix cache, in whole
//                   64-token blocks as the real ones count)
//   "cache miss"    ... with nothing cached
//   "no usage"      no usage member at all (some gateways and local servers)
#pragma once

#include <nlohmann/json.hpp>
#include <string>

namespace gistproxy::testing {

// Rewrites `response`'s usage when the request asks for one of the modes
// above; otherwise leaves it as rendered.
void bill_by_size(nlohmann::json& response, const std::string& body, const std::string& previous_body);

// The input tokens "bill by size" reports for a body, and those it reports
// cached after `previous` (tests compute the bill from the bodies the mock saw).
std::int64_t billed_input_tokens(const std::string& body);
std::int64_t billed_cached_tokens(const std::string& body, const std::string& previous);

}  // namespace gistproxy::testing
