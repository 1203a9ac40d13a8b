// What the OpenAI Responses API keeps between requests, enforced as the real
// API does, so a proxy that chains page-in hops wrongly fails here as it
// would in production:
//   - every response gets its own id, kept unless the request said store:false;
//   - previous_response_id must name a kept response (else 400
//     "Previous response with id '…' not found.");
//   - a request continuing a response that ended in function calls must carry
//     a function_call_output for each (else 400 "No tool output found for
//     function call …").
// The model then sees the kept conversation followed by the request's input.
#pragma once

#include <cstdint>
#include <map>
#include <mutex>
#include <nlohmann/json.hpp>
#include <string>
#include <vector>

namespace gistproxy::testing {

class responses_state {
 public:
  struct admitted {
    nlohmann::json request;  // previous_response_id replaced by the conversation it names
    std::string error;       // set: answer 400 with this message
  };
  admitted admit(const nlohmann::json& request);
  // Names an answer to an admitted request and keeps it unless the request
  // said store:false. Returns the id, which replaces the answer's own.
  std::string keep(const nlohmann::json& admitted_request, const nlohmann::json& answer);

  static nlohmann::json error_body(const std::string& message);

 private:
  struct kept {
    nlohmann::json items;  // the whole conversation: input so far and this answer's output
    std::vector<std::string> pending_calls;
  };
  std::mutex mutex_;
  std::map<std::string, kept> kept_;
  std::uint64_t next_ = 1;
};

}  // namespace gistproxy::testing
