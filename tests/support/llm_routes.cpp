// Which API a mock upstream request path speaks (scripted_model.hpp).
#include "tests/support/scripted_model.hpp"

namespace gistproxy::testing {

std::optional<llm_route> route_of(const std::string& path) {
  llm_route r;
  if (is_gemini_path(path)) {
    r.api = llm_api::gemini;
    r.stream = path.ends_with(":streamGenerateContent");
    r.model = gemini_model_of(path);
    return r;
  }
  for (std::string_view verb : {":rawPredict", ":streamRawPredict"})
    if (path.find("/publishers/anthropic/models/") != std::string::npos && path.ends_with(verb)) {
      r.api = llm_api::messages;
      r.stream = verb == ":streamRawPredict";
      r.model = gemini_model_of(path);  // the same /models/NAME:verb shape
      return r;
    }
  for (std::string_view verb : {"/invoke", "/invoke-with-response-stream", "/converse", "/converse-stream"})
    if (path.starts_with("/model/") && path.ends_with(verb) && path.size() > 7 + verb.size()) {
      r.api = verb.starts_with("/converse") ? llm_api::converse : llm_api::messages;
      r.stream = verb.ends_with("stream");
      r.eventstream = true;
      std::string id = path.substr(7, path.size() - 7 - verb.size());
      for (std::size_t at; (at = id.find("%3A")) != std::string::npos;) id.replace(at, 3, ":");
      for (std::size_t at; (at = id.find("%2F")) != std::string::npos;) id.replace(at, 3, "/");
      r.model = id;
      return r;
    }
  if (path.ends_with("/chat/completions")) return r;
  if (path.ends_with("/responses")) return r.api = llm_api::responses, r;
  if (path.ends_with("/messages")) return r.api = llm_api::messages, r;
  return std::nullopt;
}

bool is_converse_path(const std::string& path) {
  return path.find("/model/") != std::string::npos && path.ends_with("/converse");
}

bool is_gemini_path(const std::string& path) {
  return path.find("/models/") != std::string::npos &&
         (path.ends_with(":generateContent") || path.ends_with(":streamGenerateContent"));
}

std::string gemini_model_of(const std::string& path) {
  auto start = path.find("/models/") + 8;
  return path.substr(start, path.rfind(':') - start);
}

}  // namespace gistproxy::testing
