// What the OpenAI Responses API keeps between requests, enforced and served
// as the real API does, so a proxy that chains page-in hops wrongly, or shows
// a client stored state that is not its own, fails here as it would in
// production:
//   - every response gets its own id, kept unless the request said store:false;
//   - previous_response_id must name a kept response (else 400
//     "Previous response with id '…' not found.");
//   - a request continuing a response that ended in function calls must carry
//     a function_call_output for each (else 400 "No tool output found for
//     function call …");
//   - every kept item has an id (the request's own, or one given here);
//   - GET /v1/responses/{id} answers the kept response (?stream=true: replayed
//     as its events, SSE); GET …/{id}/input_items lists the items the model
//     saw before answering (the whole conversation chained so far, then the
//     request's input), newest first unless order=asc, `limit` (1..100,
//     default 20) at a time after the item `after`; DELETE …/{id} forgets it.
// The model then sees the kept conversation followed by the request's input.
#pragma once

#include <cstdint>
#include <map>
#include <mutex>
#include <nlohmann/json.hpp>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

namespace gistproxy::testing {

class responses_state {
 public:
  // Ids are id_prefix then a number: a WebSocket connection's own cache has
  // its own prefix, so no two connections name different answers alike.
  explicit responses_state(std::string id_prefix = "resp_") : prefix_(std::move(id_prefix)) {}
  struct admitted {
    nlohmann::json request;  // input: the conversation previous_response_id names, then the request's own
    std::string error;       // set: answer 400 with this message
  };
  admitted admit(const nlohmann::json& request);
  // Names an answer to an admitted request and keeps it unless the request
  // said store:false. Returns the id, which replaces the answer's own.
  std::string keep(const nlohmann::json& admitted_request, const nlohmann::json& answer);

  // A stored-state request (GET or DELETE under /v1/responses/{id}); nullopt
  // when `target` is not one.
  struct served {
    int status = 200;
    std::string body;
    std::string content_type = "application/json";
  };
  std::optional<served> serve(std::string_view method, std::string_view target);

  static nlohmann::json error_body(const std::string& message, const char* param = "previous_response_id");

 private:
  struct kept {
    nlohmann::json input;  // the items the model saw before answering (ids given)
    nlohmann::json items;  // the whole conversation: input and this answer's output
    nlohmann::json response;
    std::vector<std::string> pending_calls;
  };
  served list_input_items(const kept& k, std::string_view target) const;
  std::string prefix_;
  std::mutex mutex_;
  std::map<std::string, kept> kept_;
  std::uint64_t next_ = 1, next_item_ = 1;
};

}  // namespace gistproxy::testing
