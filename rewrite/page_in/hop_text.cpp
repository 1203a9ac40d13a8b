#include "rewrite/page_in/hop_text.hpp"

#include <string_view>
#include <utility>
#include <vector>

namespace gistproxy::rewrite {
namespace {

constexpr std::size_t max_depth = 64;
constexpr std::size_t max_nodes = 100'000;

// The members every API's answers carry what a client shows in: text parts
// (Messages, Responses, Gemini, Converse), thinking, refusals, and Chat's
// message content (a string there; elsewhere an array, walked below).
bool shown_member(std::string_view key, const nlohmann::json& value) {
  if (!value.is_string() || value.get_ref<const std::string&>().empty()) return false;
  return key == "text" || key == "thinking" || key == "refusal" || key == "content" || key == "reasoning_content";
}

}  // namespace

bool answer_shows_text(const nlohmann::json& response) {
  std::vector<std::pair<const nlohmann::json*, std::size_t>> pending{{&response, 0}};
  std::size_t nodes = 0;
  while (!pending.empty()) {
    const auto [node, depth] = pending.back();
    pending.pop_back();
    if (++nodes > max_nodes || depth > max_depth) return true;
    if (node->is_object()) {
      for (const auto& [key, value] : node->items()) {
        if (shown_member(key, value)) return true;
        if (value.is_structured()) pending.emplace_back(&value, depth + 1);
      }
    } else if (node->is_array()) {
      for (const auto& value : *node)
        if (value.is_structured()) pending.emplace_back(&value, depth + 1);
    }
  }
  return false;
}

}  // namespace gistproxy::rewrite
