// Token counts whose body wraps the request they count. An agent asks how
// large its next turn is; gistproxy answers for the turn it will really send,
// so the count's wrapped request is rewritten as that turn would be and put
// back in its wrapping:
//   Gemini :countTokens   {"generateContentRequest": {…}}, or {"contents": […]}
//                         (re-sent as a generateContentRequest naming the
//                         path's model, so the read_blob definition the turn
//                         will carry is counted too);
//   Bedrock CountTokens   {"input": {"converse": {…}}}, or
//                         {"input": {"invokeModel": {"body": "<base64 JSON>"}}}.
// Any other shape (other members beside these, a body that is not JSON) is
// not unwrapped: the count goes upstream as sent.
#pragma once

#include <optional>
#include <string>
#include <string_view>

namespace gistproxy::rewrite {

class endpoint;

struct count_envelope {
  std::string before, after;  // the raw bytes around the wrapped request
  bool base64 = false;        // the wrapped request is a base64 string (Bedrock invokeModel)
};

struct unwrapped_count {
  count_envelope envelope;
  std::string request;              // the wrapped request's JSON, as the turn would send it
  const endpoint* reader = nullptr;  // the endpoint that reads it
};

// The endpoints' envelopes (endpoint::unwrap_count). Gemini's, read by
// `gemini`; `model` is the one the path names (the contents-only form needs it).
std::optional<unwrapped_count> unwrap_gemini_count(const endpoint& gemini, std::string_view model, std::string_view body);
// Bedrock's: a Converse request is read by `converse`, an InvokeModel body by `invoke`.
std::optional<unwrapped_count> unwrap_bedrock_count(const endpoint& converse, const endpoint& invoke, std::string_view body);

// The count's body with `request` (the wrapped request, rewritten) in place.
std::string rewrap_count(const count_envelope& envelope, std::string_view request);

}  // namespace gistproxy::rewrite
