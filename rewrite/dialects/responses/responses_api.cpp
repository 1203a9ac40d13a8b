#include "rewrite/dialects/responses/responses_api.hpp"
#include "rewrite/dialects/responses/responses_stream.hpp"
#include "rewrite/sse/assemble.hpp"

#include <nlohmann/json.hpp>

#include "rewrite/json/checked.hpp"
#include "rewrite/json/splice.hpp"
#include "rewrite/json/tree.hpp"

#include "rewrite/dialects/text_fields.hpp"
#include "rewrite/dialects/tool_scan.hpp"

#include <map>

namespace gistproxy::rewrite {

std::optional<request_facts> responses_wire::inspect(json::document body) const {
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
    if (key == "background" && v.peek() == json::kind::boolean) {
      // A background response is fetched later with GET /v1/responses/{id},
      // outside this exchange: its read_blob calls could not be intercepted.
      auto b = v.boolean_value();
      if (b.value_or(false)) facts.answer_interceptable = false;
      return b.has_value();
    }
    if (key == "instructions" && v.peek() == json::kind::string) return append_content_text(v, system);
    if (key != "input") return v.skip_value().has_value();
    if (v.peek() == json::kind::string) {
      have_user = true;
      return append_content_text(v, first_user);
    }
    if (v.peek() != json::kind::array) return v.skip_value().has_value();
    return v
        .array([&](std::size_t, json::cursor& item) {
          if (have_user || item.peek() != json::kind::object) return item.skip_value().has_value();
          message_view msg;
          if (!read_message(item, msg)) return false;
          if (!msg.content || (!msg.type.empty() && msg.type != "message")) return true;
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
  facts.conversation_key = "responses\n" + system + '\0' + first_user;
  return facts;
}

nlohmann::json responses_wire::echoed_members(std::string_view client_body, top_level_memo& memo) const {
  const auto& top = memo.of(client_body);
  if (!top) return nlohmann::json::object();
  // What the API answers when the client sent none of them: no tools, "auto".
  nlohmann::json echoed = {{"tools", nlohmann::json::array()}, {"tool_choice", "auto"}};
  for (const auto& [key, r] : top->members) {
    if (key != "tools" && key != "tool_choice") continue;
    auto value = json::parse_checked(client_body.substr(r.begin, r.size()));
    if (!value.is_discarded()) echoed[key] = std::move(value);
  }
  return echoed;
}

token_usage responses_wire::usage_from_fields(const usage_fields& usage) const {
  token_usage u;
  u.input_tokens = usage.get("input_tokens").value_or(-1);
  u.output_tokens = usage.get("output_tokens").value_or(-1);
  if (u.input_tokens >= 0) {
    u.cache_read_tokens = usage.get_or_zero("input_tokens_details.cached_tokens");
  }
  return u;
}

void responses_wire::usage_from_event(std::string_view event, std::string_view data, token_usage& usage) const {
  // Usage arrives once, on the terminal event's full response object.
  if (event != "response.completed" && event != "response.incomplete" && event != "response.failed") return;
  auto u = usage_from_response(checked::member(json::parse_checked(data), "response"));
  if (u.known()) usage = u;
}

bool responses_wire::scan(json::document body, request_scan& out) const {
  json::cursor c(body);
  if (c.peek() != json::kind::object) return false;
  auto whole = c.object([&](std::string_view key, json::cursor& v) {
    if (key == "tools") return collect_tools(v, out);
    if (key != "input" || v.peek() != json::kind::array) return v.skip_value().has_value();
    return walk_conversation(v, out, [&](json::cursor& item, call_directory& calls) {
              if (item.peek() != json::kind::object) return item.skip_value().has_value();
              std::string type, call_id, name;
              std::optional<json::range> output;
              bool ok = item.object([&](std::string_view k, json::cursor& iv) {
                           if (k == "type" && iv.peek() == json::kind::string) return iv.string_value(type);
                           if (k == "call_id" && iv.peek() == json::kind::string) return iv.string_value(call_id);
                           if (k == "name" && iv.peek() == json::kind::string) return iv.string_value(name);
                           auto r = iv.skip_value();
                           if (r && k == "output") output = r;
                           return r.has_value();
                         }).has_value();
              if (!ok) return false;
              if (type == "function_call") calls.declare(call_id, name);
              if (type != "function_call_output" || !output) return true;
              json::cursor oc(body.up_to(output->end), output->begin);
              return collect_output_content(oc, calls.tool_of(call_id), call_id, false, out);
            });
  });
  if (!whole || !c.at_end()) return false;
  out.object_end = whole->end - 1;
  return true;
}

std::string responses_wire::read_blob_tool(std::string_view name) const {
  std::string out = R"({"type":"function","name":")";
  json::escape_into(out, name);
  out += R"(","description":")";
  json::escape_into(out, read_blob_description());
  out += R"(","parameters":)" + read_blob_parameters_schema() + R"(,"strict":false})";
  return out;
}

bool responses_endpoint::serves_path(std::string_view path) const { return path.ends_with("/responses"); }

std::string responses_endpoint::request_path(std::string_view) const { return "/v1/responses"; }

std::unique_ptr<stream_filter> responses_wire::make_stream_filter(std::string tool_name) const {
  return make_responses_stream_filter(*this, std::move(tool_name));
}

std::optional<nlohmann::json> responses_wire::assemble_stream(std::string_view sse_text) const {
  return assemble_responses_stream(sse_text);
}

// input without messages is Responses' alone.
int responses_endpoint::request_affinity(const nlohmann::json& body) const {
  return body.is_object() && body.contains("input") && !body.contains("messages") ? 4 : 0;
}

}  // namespace gistproxy::rewrite
