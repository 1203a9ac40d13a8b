// The head an agent sends before its conversation on every request (its tool
// definitions and system prompt), which most agents' own files do not record:
// replay rebuilds their requests from the messages alone, and then sees a
// request far smaller than the agent sent (the --inject-read-blob=auto cost
// model judges read_blob's definition against that head and, seeing almost
// none, offloads nothing).
//
// A table (docs/agent_heads.json, compiled in; --agent-heads FILE instead)
// gives each such format's head as an estimate with its date and basis;
// --assume-head-tokens N sets one for every trace. Replay adds a head of
// about that many tokens to each rebuilt request (one tool whose description
// is filler, where the API keeps tools) and says per trace which head it
// assumed and why: recorded (the bodies as sent carry it), flag, format
// default, or unknown.
#pragma once

#include <cstdint>
#include <map>
#include <optional>
#include <string>
#include <string_view>

#include "rewrite/endpoint.hpp"
#include "rewrite/gist/content_shape.hpp"

namespace gistproxy::rewrite {

struct agent_head {
  std::string agent;  // the agent and version the estimate is for
  std::uint64_t tokens = 0;
  std::string as_of;  // when it was estimated
  std::string basis;  // how
};

class agent_heads {
 public:
  // The table from JSON text of docs/agent_heads.json's shape; throws
  // std::runtime_error saying what is wrong (the text is the user's).
  static agent_heads parse(std::string_view text);
  // The table compiled in from docs/agent_heads.json.
  static const agent_heads& builtin();
  const agent_head* find(std::string_view format) const;

 private:
  std::map<std::string, agent_head, std::less<>> heads_;
};

// What replay assumed for a trace part's head, and why.
struct head_choice {
  enum class why : std::uint8_t { recorded, flag, format_default, unknown } reason = why::unknown;
  std::uint64_t tokens = 0;  // added to each rebuilt request
  agent_head estimate;       // format_default: the table's entry
};
std::string_view why_name(head_choice::why w);

struct head_policy {
  std::optional<std::uint64_t> tokens;  // --assume-head-tokens
  const agent_heads* table = nullptr;   // null: no table
};

// Bodies as sent carry their head; rebuilt requests get the flag's, else
// their format's estimate, else none (unknown).
head_choice choose_head(const head_policy& policy, bool rebuilt, std::string_view format);

// The request member that adds a head of about `tokens` tokens (by `e`) to a
// body of `api`, without its braces or comma ("" when `api` keeps no tools
// replay knows how to write, or for 0 tokens).
std::string assumed_head_member(const endpoint& api, std::uint64_t tokens, const token_estimator& e);

}  // namespace gistproxy::rewrite
