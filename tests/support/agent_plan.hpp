// A scripted model for driving a real agent CLI through several of its own
// tools: the latest user prompt holding "agent runs: [STEPS]" (STEPS a JSON
// array on one line, each {"name": TOOL, "arguments": {...}}) is answered by
// calling the next step's tool, one call per model turn, until every step has
// a result; then a plain text answer. A later prompt with a plan of its own
// starts again (a resumed session). Call ids are "toolu_step_P_K" (P counts
// the plan prompts, K the step), so they stay unique across prompts.
// A step named read_blob without a handle pages back the newest reference
// gistproxy left in the request (the proxy answers it, the agent never sees
// it); the last answer then ends "; found: LINE", LINE the first line of
// that result holding NEEDLE. Messages, Chat Completions, Responses and
// Gemini requests.
#pragma once

#include <optional>

#include "tests/support/scripted_model.hpp"

namespace gistproxy::testing {

// The turn for a request whose latest plan prompt is found; nullopt when the
// request holds no plan (the other scripts decide).
std::optional<model_turn> agent_plan_turn(llm_api api, const nlohmann::json& request);

// The Messages id of a turn's answer: one of its own for each turn that calls
// tools, since Claude Code joins the blocks of answers that share an id into
// one message (all its calls in one turn, the next prompt among the results).
std::string mock_message_id(const model_turn& turn);

}  // namespace gistproxy::testing
