#include "rewrite/dialects/chat/chat_api.hpp"
#include "rewrite/dialects/chat/chat_stream.hpp"
#include "rewrite/sse/assemble.hpp"

#include <nlohmann/json.hpp>

#include "rewrite/json/checked.hpp"
#include "rewrite/json/tree.hpp"

#include "rewrite/dialects/text_fields.hpp"
#include "rewrite/dialects/tool_scan.hpp"

#include <map>

namespace gistproxy::rewrite {

std::optional<request_facts> chat_wire::inspect(json::document body) const {
  json::cursor c(body);
  request_facts facts;
  std::string system, first_user;
  bool have_user = false;
  auto ok = c.object([&](std::string_view key, json::cursor& v) {
    if (key == "model" && v.peek() == json::kind::string) return v.string_value(facts.model);
    if (key == "stream" && v.peek() == json::kind::boolean) {
      auto b = v.boolean_value();
      facts.stream = b.value_or(false);
      return b.has_value();
    }
    if (key != "messages" || v.peek() != json::kind::array) return v.skip_value().has_value();
    return v
        .array([&](std::size_t, json::cursor& m) {
          if (have_user || m.peek() != json::kind::object) return m.skip_value().has_value();
          message_view msg;
          if (!read_message(m, msg)) return false;
          if (!msg.content) return true;
          if (msg.role == "system" || msg.role == "developer") return append_content_text_at(body, *msg.content, system);
          if (msg.role == "user") {
            have_user = true;
            return append_content_text_at(body, *msg.content, first_user);
          }
          return true;
        })
        .has_value();
  });
  if (!ok || !c.at_end()) return std::nullopt;
  facts.conversation_key = "chat\n" + system + '\0' + first_user;
  return facts;
}

token_usage chat_wire::usage_from_fields(const usage_fields& usage) const {
  token_usage u;
  u.input_tokens = usage.get("prompt_tokens").value_or(-1);
  u.output_tokens = usage.get("completion_tokens").value_or(-1);
  if (u.input_tokens >= 0) {
    u.cache_read_tokens = usage.get_or_zero("prompt_tokens_details.cached_tokens");
  }
  return u;
}

void chat_wire::usage_from_event(std::string_view, std::string_view data, token_usage& usage) const {
  // Only the include_usage chunk has a non-null usage; skip parsing the rest.
  if (data.find("\"usage\"") == std::string_view::npos || data.find("_tokens") == std::string_view::npos) return;
  auto u = usage_from_response(json::parse_checked(data));
  if (u.known()) usage = u;
}

namespace {

// Records id -> function name for each entry of an assistant's tool_calls.
bool collect_chat_call_names(json::cursor& c, call_directory& calls) {
  return c.array([&](std::size_t, json::cursor& call) {
            if (call.peek() != json::kind::object) return call.skip_value().has_value();
            std::string id, name;
            bool ok = call.object([&](std::string_view key, json::cursor& v) {
                         if (key == "id" && v.peek() == json::kind::string) return v.string_value(id);
                         if (key == "function" && v.peek() == json::kind::object) return read_string_member(v, "name", name);
                         return v.skip_value().has_value();
                       }).has_value();
            if (ok && !id.empty()) calls.declare(std::move(id), std::move(name));
            return ok;
          }).has_value();
}

}  // namespace

bool chat_wire::scan(json::document body, request_scan& out) const {
  json::cursor c(body);
  if (c.peek() != json::kind::object) return false;
  auto whole = c.object([&](std::string_view key, json::cursor& v) {
    if (key == "tools") return collect_tools(v, out);
    if (key != "messages" || v.peek() != json::kind::array) return v.skip_value().has_value();
    return walk_conversation(v, out, [&](json::cursor& m, call_directory& calls) {
              if (m.peek() != json::kind::object) return m.skip_value().has_value();
              std::string role, call_id;
              std::optional<json::range> content;
              bool ok = m.object([&](std::string_view k, json::cursor& mv) {
                           if (k == "role" && mv.peek() == json::kind::string) return mv.string_value(role);
                           if (k == "tool_call_id" && mv.peek() == json::kind::string) return mv.string_value(call_id);
                           if (k == "tool_calls" && mv.peek() == json::kind::array)
                             return collect_chat_call_names(mv, calls);
                           auto r = mv.skip_value();
                           if (r && k == "content") content = r;
                           return r.has_value();
                         }).has_value();
              if (!ok) return false;
              if (!content) return true;
              json::cursor cc(body.up_to(content->end), content->begin);
              if (role == "tool") return collect_output_content(cc, calls.tool_of(call_id), call_id, false, out);
              // Opt-in: tool results some agents send as user text (collect_text_tool_results).
              if (role == "user" && out.text_results_from == text_results::cline) return collect_text_tool_results(cc, out);
              return true;
            });
  });
  if (!whole || !c.at_end()) return false;
  out.object_end = whole->end - 1;
  return true;
}

std::string chat_wire::read_blob_tool(std::string_view name) const {
  std::string out = R"({"type":"function","function":{"name":")";
  json::escape_into(out, name);
  out += R"(","description":")";
  json::escape_into(out, read_blob_description());
  out += R"(","parameters":)" + read_blob_parameters_schema() + "}}";
  return out;
}

bool chat_endpoint::serves_path(std::string_view path) const { return path.ends_with("/chat/completions"); }

std::string chat_endpoint::request_path(std::string_view) const { return "/v1/chat/completions"; }

std::unique_ptr<stream_filter> chat_wire::make_stream_filter(std::string tool_name) const {
  return make_chat_stream_filter(*this, std::move(tool_name));
}

std::optional<nlohmann::json> chat_wire::assemble_stream(std::string_view sse_text) const {
  return assemble_chat_stream(sse_text);
}

// Any body with a message list may be chat (the default of bare bodies);
// system or tool roles and tool_calls are chat's own.
int chat_endpoint::request_affinity(const nlohmann::json& body) const {
  const auto& messages = checked::array_at(body, "messages");
  for (const auto& m : messages)
    if (checked::string_is(m, "role", "system") || checked::string_is(m, "role", "tool") || checked::member(m, "tool_calls").is_array())
      return 2;
  return 1;
}

}  // namespace gistproxy::rewrite
