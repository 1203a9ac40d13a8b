#include "rewrite/dialects/messages/messages_api.hpp"
#include "rewrite/dialects/messages/messages_stream.hpp"
#include "rewrite/sse/assemble.hpp"

#include <nlohmann/json.hpp>

#include "rewrite/dialects/text_fields.hpp"
#include "rewrite/dialects/tool_scan.hpp"
#include "rewrite/json/checked.hpp"
#include "rewrite/json/tree.hpp"

#include <map>

namespace gistproxy::rewrite {

std::optional<request_facts> messages_wire::inspect(json::document body) const {
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
    if (key == "system") return append_content_text(v, system, billing_header);  // not prompt: left out
    if (key != "messages" || v.peek() != json::kind::array) return v.skip_value().has_value();
    return v
        .array([&](std::size_t, json::cursor& m) {
          if (have_user || m.peek() != json::kind::object) return m.skip_value().has_value();
          message_view msg;
          if (!read_message(m, msg)) return false;
          if (msg.role != "user" || !msg.content) return true;
          have_user = true;
          return append_content_text_at(body, *msg.content, first_user);
        })
        .has_value();
  });
  if (!ok || !c.at_end()) return std::nullopt;
  facts.conversation_key = "messages\n" + system + '\0' + first_user;
  return facts;
}

// Anthropic's input_tokens are the uncached ones only; per the GenAI
// conventions, input tokens include cache reads and writes.
token_usage messages_wire::usage_from_fields(const usage_fields& u) const {
  token_usage out;
  if (auto in = u.get("input_tokens")) {
    out.cache_read_tokens = u.get_or_zero("cache_read_input_tokens");
    out.cache_write_tokens = u.get_or_zero("cache_creation_input_tokens");
    out.input_tokens = saturating_sum(*in, out.cache_read_tokens, out.cache_write_tokens);
  }
  if (auto o = u.get("output_tokens")) out.output_tokens = *o;
  return out;
}

void messages_wire::usage_from_event(std::string_view event, std::string_view data, token_usage& usage) const {
  if (event != "message_start" && event != "message_delta") return;
  auto j = json::parse_checked(data);
  if (!j.is_object()) return;
  // message_start carries input tokens; message_delta's usage is cumulative.
  const auto& u = event == "message_start" ? checked::member(checked::member(j, "message"), "usage")
                                           : checked::member(j, "usage");
  auto got = usage_from_fields(usage_fields_of(u));
  if (got.input_tokens >= 0 && (event == "message_start" || got.input_tokens > 0)) {
    usage.input_tokens = got.input_tokens;
    usage.cache_read_tokens = got.cache_read_tokens;
    usage.cache_write_tokens = got.cache_write_tokens;
  }
  if (got.output_tokens >= 0) usage.output_tokens = got.output_tokens;
}

bool messages_wire::scan(json::document body, request_scan& out) const {
  json::cursor c(body);
  if (c.peek() != json::kind::object) return false;
  auto whole = c.object([&](std::string_view key, json::cursor& v) {
    if (key == "tools") return collect_tools(v, out);
    if (key != "messages" || v.peek() != json::kind::array) return v.skip_value().has_value();
    return walk_conversation(v, out, [&](json::cursor& m, call_directory& calls) {
              if (m.peek() != json::kind::object) return m.skip_value().has_value();
              std::string role;
              std::optional<json::range> user_content;
              bool message = m.object([&](std::string_view k, json::cursor& mv) {
                         if (k == "role" && mv.peek() == json::kind::string) return mv.string_value(role);
                         if (k == "content" && mv.peek() == json::kind::string) {
                           user_content = mv.skip_value();
                           return user_content.has_value();
                         }
                         if (k != "content" || mv.peek() != json::kind::array) return mv.skip_value().has_value();
                         user_content = mv.array([&](std::size_t, json::cursor& b) {
                                   if (b.peek() != json::kind::object) return b.skip_value().has_value();
                                   std::string type, id, name, tool_use_id;
                                   std::optional<json::range> content;
                                   bool ok = b.object([&](std::string_view bk, json::cursor& bv) {
                                                if (bk == "type" && bv.peek() == json::kind::string) return bv.string_value(type);
                                                if (bk == "id" && bv.peek() == json::kind::string) return bv.string_value(id);
                                                if (bk == "name" && bv.peek() == json::kind::string) return bv.string_value(name);
                                                if (bk == "tool_use_id" && bv.peek() == json::kind::string)
                                                  return bv.string_value(tool_use_id);
                                                auto r = bv.skip_value();
                                                if (r && bk == "content") content = r;
                                                return r.has_value();
                                              }).has_value();
                                   if (!ok) return false;
                                   if (type == "tool_use") calls.declare(id, name);
                                   // Only client tool results: server tools' result blocks have other types.
                                   if (type != "tool_result" || !content) return true;
                                   json::cursor cc(body.up_to(content->end), content->begin);
                                   return collect_output_content(cc, calls.tool_of(tool_use_id), tool_use_id, true, out);
                                 });
                         return user_content.has_value();
                       }).has_value();
              if (!message) return false;
              // Opt-in: tool results some agents send as user text (collect_text_tool_results).
              if (out.text_results_from != text_results::cline || role != "user" || !user_content) return true;
              json::cursor uc(body.up_to(user_content->end), user_content->begin);
              return collect_text_tool_results(uc, out);
            });
  });
  if (!whole || !c.at_end()) return false;
  out.object_end = whole->end - 1;
  return true;
}

std::string messages_wire::read_blob_tool(std::string_view name) const {
  std::string out = R"({"name":")";
  json::escape_into(out, name);
  out += R"(","description":")";
  json::escape_into(out, read_blob_description());
  out += R"(","input_schema":)" + read_blob_parameters_schema() + "}";
  return out;
}

std::string messages_wire::image_replacement(std::string_view text) const {
  std::string out = R"({"type":"text","text":")";
  json::escape_into(out, text);
  out += R"("})";
  return out;
}

bool messages_endpoint::serves_path(std::string_view path) const { return path.ends_with("/messages"); }

std::string messages_endpoint::request_path(std::string_view) const { return "/v1/messages"; }

bool messages_endpoint::counts_tokens_at(std::string_view path) const { return path.ends_with("/messages/count_tokens"); }

namespace {

// /v1/models and /v1/files are OpenAI's too: Anthropic's SDKs always say anthropic-version.
constexpr path_claim anthropic_paths[] = {
    {"/v1/messages/"}, {"/v1/complete"}, {"/v1/models/", nullptr, claim_strength::hinted},
    {"/v1/files/", nullptr, claim_strength::hinted}};
constexpr credential_kind anthropic_credentials[] = {credential_kind::anthropic_key};
constexpr upstream_family anthropic{.name = "anthropic",
                                    .default_url = "https://api.anthropic.com",
                                    .paths = anthropic_paths,
                                    .credentials = anthropic_credentials,
                                    .gateway_mount = "/anthropic",
                                    .named_by_anthropic_version = true};

}  // namespace

const upstream_family& anthropic_family() { return anthropic; }

std::unique_ptr<stream_filter> messages_wire::make_stream_filter(std::string tool_name) const {
  return make_messages_stream_filter(*this, std::move(tool_name));
}

std::optional<nlohmann::json> messages_wire::assemble_stream(std::string_view sse_text) const {
  return assemble_messages_stream(sse_text);
}

// A top-level system prompt, anthropic_version or stop_sequences is
// Anthropic's; so are tool_use and tool_result blocks in the messages.
int messages_endpoint::request_affinity(const nlohmann::json& body) const {
  if (!body.is_object()) return 0;
  if (body.contains("system") || body.contains("anthropic_version") || body.contains("stop_sequences")) return 3;
  for (const auto& m : checked::array_at(body, "messages"))
    for (const auto& b : checked::array_at(m, "content"))
      if (checked::string_is(b, "type", "tool_use") || checked::string_is(b, "type", "tool_result")) return 2;
  return 0;
}

}  // namespace gistproxy::rewrite
