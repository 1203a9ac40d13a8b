// An API served under a cloud's own paths. Azure OpenAI hosts Chat
// Completions and Responses, Vertex AI hosts Anthropic Messages and Gemini,
// Bedrock's InvokeModel hosts Anthropic Messages: the bodies, answers and
// streams are the hosted API's, byte for byte, while the paths, the model's
// name (often in the path), the credentials, the upstream and the metric label
// are the cloud's. A hosted dialect answers those and forwards everything
// else to the API it hosts, so each cloud endpoint is a few path rules, not a
// second copy of an adapter.
#pragma once

#include <string>
#include <string_view>

#include <nlohmann/json.hpp>

#include "rewrite/dialect.hpp"
#include "rewrite/stream_filter.hpp"

namespace gistproxy::rewrite {

class hosted_dialect : public dialect {
 public:
  explicit hosted_dialect(const dialect& hosted) : hosted_(hosted) {}

  const dialect& wire_format() const override { return hosted_.wire_format(); }
  // A bare body of a cloud usually cannot be told from its hosted API's: 0
  // unless a cloud recognises its own marks (Bedrock's anthropic_version).
  int request_affinity(const nlohmann::json&) const override { return 0; }
  prefix_layout cache_prefix() const override { return hosted_.cache_prefix(); }
  double usual_cache_read_ratio() const override { return hosted_.usual_cache_read_ratio(); }
  std::string_view operation_name() const override { return hosted_.operation_name(); }
  stream_transport answer_stream_transport() const override { return hosted_.answer_stream_transport(); }

  std::optional<request_facts> inspect(json::document body) const override { return hosted_.inspect(body); }
  void inspect_target(std::string_view target, request_facts& facts) const override {
    hosted_.inspect_target(target, facts);
  }
  bool scan(json::document body, request_scan& out) const override { return hosted_.scan(body, out); }
  std::string read_blob_tool(std::string_view name) const override { return hosted_.read_blob_tool(name); }
  std::string image_replacement(std::string_view text) const override { return hosted_.image_replacement(text); }

  response_calls find_blob_calls(const nlohmann::json& response, std::string_view tool_name) const override {
    return hosted_.find_blob_calls(response, tool_name);
  }
  void remove_blob_calls(nlohmann::json& response, std::string_view tool_name) const override {
    hosted_.remove_blob_calls(response, tool_name);
  }
  std::optional<std::string> continue_conversation(std::string_view body, const nlohmann::json& response,
                                                   std::string_view tool_name, const std::vector<call_result>& results,
                                                   bool last_hop) const override {
    return hosted_.continue_conversation(body, response, tool_name, results, last_hop);
  }

  std::string_view usage_member() const override { return hosted_.usage_member(); }
  token_usage usage_from_fields(const usage_fields& usage) const override { return hosted_.usage_from_fields(usage); }
  void usage_from_event(std::string_view event, std::string_view data, token_usage& usage) const override {
    hosted_.usage_from_event(event, data, usage);
  }
  std::unique_ptr<stream_filter> make_stream_filter(std::string tool_name) const override {
    return hosted_.make_stream_filter(std::move(tool_name));
  }
  std::optional<nlohmann::json> assemble_stream(std::string_view sse_text) const override {
    return hosted_.assemble_stream(sse_text);
  }

 protected:
  const dialect& hosted_;
};

// Path pieces the cloud dialects read (query and fragment already removed).
namespace cloud_path {
// The segment after `prefix` up to the next '/' (or ':' when `stop_at_colon`);
// empty when `path` does not start with prefix.
std::string_view segment_after(std::string_view path, std::string_view prefix, bool stop_at_colon = false);
// A model id (or deployment name) as a path names it, %XX decoded (Bedrock's
// ARNs and profile ids carry ':' and '/' encoded). Empty when it is not one: a
// malformed escape, a byte outside printable ASCII (which must not reach span
// attributes or logs as if it were a name), or longer than Bedrock's 2048.
std::string model_id(std::string_view encoded);
// Each byte outside RFC 3986's unreserved set as %XX (a model id put in a path).
std::string percent_encoded(std::string_view s);
}  // namespace cloud_path

}  // namespace gistproxy::rewrite
