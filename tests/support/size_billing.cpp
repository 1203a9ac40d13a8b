#include "tests/support/size_billing.hpp"

#include <algorithm>

namespace gistproxy::testing {

std::int64_t billed_input_tokens(const std::string& body) { return std::int64_t(body.size() / 4); }

std::int64_t billed_cached_tokens(const std::string& body, const std::string& previous) {
  if (body.find("cache miss") != std::string::npos) return 0;
  const auto shared = std::mismatch(body.begin(), body.begin() + std::ptrdiff_t(std::min(body.size(), previous.size())),
                                    previous.begin()).first - body.begin();
  return std::int64_t(shared / 4) / 64 * 64;
}

void bill_by_size(nlohmann::json& response, const std::string& body, const std::string& previous_body) {
  if (!response.is_object() || !response.contains("usage")) return;
  if (body.find("no usage") != std::string::npos) {
    response.erase("usage");
    return;
  }
  if (body.find("bill by size") == std::string::npos) return;
  const auto input = billed_input_tokens(body);
  const auto cached = billed_cached_tokens(body, previous_body);
  auto& usage = response["usage"];
  usage["prompt_tokens"] = input;
  usage["total_tokens"] = input + usage.value("completion_tokens", 0);
  usage["prompt_tokens_details"] = {{"cached_tokens", cached}, {"audio_tokens", 0}};
}

}  // namespace gistproxy::testing
