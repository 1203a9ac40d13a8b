#include "rewrite/replay/agent_heads.hpp"

#include <stdexcept>

#include "rewrite/json/checked.hpp"

namespace gistproxy::rewrite {

namespace {

// More than any agent sends before its conversation (a million tokens).
constexpr std::uint64_t max_head_tokens = 1'000'000;

}  // namespace

agent_heads agent_heads::parse(std::string_view text) {
  const auto doc = checked::parse(text);
  if (doc.is_discarded() || !doc.is_object()) throw std::runtime_error("not a JSON object");
  const auto& heads = checked::member(doc, "heads");
  if (!heads.is_object()) throw std::runtime_error("no \"heads\" object (format name -> {agent, tokens, as_of, basis})");
  agent_heads out;
  for (const auto& [format, entry] : heads.items()) {
    const auto tokens = checked::integer_at(entry, "tokens");
    if (!entry.is_object() || !tokens || *tokens < 0 || std::uint64_t(*tokens) > max_head_tokens)
      throw std::runtime_error("heads." + format + ": needs \"tokens\", a whole number from 0 to 1000000");
    out.heads_[format] = {checked::string_at(entry, "agent", format), std::uint64_t(*tokens),
                          checked::string_at(entry, "as_of", "undated"), checked::string_at(entry, "basis")};
  }
  return out;
}

const agent_head* agent_heads::find(std::string_view format) const {
  auto it = heads_.find(format);
  return it == heads_.end() ? nullptr : &it->second;
}

std::string_view why_name(head_choice::why w) {
  switch (w) {
    case head_choice::why::recorded: return "recorded";
    case head_choice::why::flag: return "flag";
    case head_choice::why::format_default: return "format default";
    case head_choice::why::unknown: return "unknown";
  }
  return "unknown";
}

head_choice choose_head(const head_policy& policy, bool rebuilt, std::string_view format) {
  head_choice c;
  if (!rebuilt) {
    c.reason = head_choice::why::recorded;
  } else if (policy.tokens) {
    c.reason = head_choice::why::flag;
    c.tokens = *policy.tokens;
  } else if (const auto* e = policy.table ? policy.table->find(format) : nullptr) {
    c.reason = head_choice::why::format_default;
    c.tokens = e->tokens;
    c.estimate = *e;
  }
  return c;
}

namespace {

// The tools member of `api` with one tool, `description` its filler (JSON-escaped).
std::string tools_member(std::string_view api, const std::string& description) {
  const std::string d = "\"description\":\"" + description + "\"";
  const std::string empty_schema = R"({"type":"object","properties":{}})";
  if (api == "chat")
    return R"("tools":[{"type":"function","function":{"name":"agent_head",)" + d + ",\"parameters\":" + empty_schema + "}}]";
  if (api == "messages") return R"("tools":[{"name":"agent_head",)" + d + ",\"input_schema\":" + empty_schema + "}]";
  if (api == "responses")
    return R"("tools":[{"type":"function","name":"agent_head",)" + d + ",\"parameters\":" + empty_schema + "}]";
  if (api == "gemini") return R"("tools":[{"functionDeclarations":[{"name":"agent_head",)" + d + "}]}]";
  return {};
}

}  // namespace

std::string assumed_head_member(const endpoint& api, std::uint64_t tokens, const token_estimator& e) {
  const auto frame = tools_member(api.name(), "");
  if (tokens == 0 || frame.empty()) return {};
  tokens = std::min(tokens, max_head_tokens);
  // Prose of the kind tool descriptions hold, repeated to about `tokens` in all.
  const std::string phrase = "Reads, searches and edits the files of the workspace and runs its commands when asked. ";
  constexpr std::uint64_t sample = 64;
  std::string many;
  for (std::uint64_t i = 0; i < sample; ++i) many += phrase;
  const auto per_phrase = std::max<std::uint64_t>(1, e.estimate(many, content_kind::text) / sample);
  const auto framing = e.estimate(frame, content_kind::text);
  std::string filler;
  for (std::uint64_t n = framing; n + per_phrase <= tokens; n += per_phrase) filler += phrase;
  return tools_member(api.name(), filler);
}

}  // namespace gistproxy::rewrite
