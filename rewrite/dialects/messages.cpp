#include "rewrite/dialects/messages.hpp"

#include <nlohmann/json.hpp>

#include "rewrite/dialects/text_fields.hpp"

namespace gistproxy::rewrite {
namespace {

std::int64_t as_int(const nlohmann::json& o, const char* key) {
  auto it = o.find(key);
  return it != o.end() && it->is_number_integer() ? it->get<std::int64_t>() : 0;
}

// Per the GenAI conventions, Anthropic input tokens include cache reads and writes.
token_usage from_usage_object(const nlohmann::json& u) {
  token_usage out;
  if (!u.is_object()) return out;
  if (u.contains("input_tokens"))
    out.input_tokens = as_int(u, "input_tokens") + as_int(u, "cache_read_input_tokens") +
                       as_int(u, "cache_creation_input_tokens");
  if (u.contains("output_tokens")) out.output_tokens = as_int(u, "output_tokens");
  return out;
}

}  // namespace

std::optional<request_facts> messages_dialect::inspect(std::string_view body) const {
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
    if (key == "system") return append_content_text(v, system);
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

token_usage messages_dialect::usage_from_response(const nlohmann::json& body) const {
  if (!body.is_object() || !body.contains("usage")) return {};
  return from_usage_object(body["usage"]);
}

void messages_dialect::usage_from_event(std::string_view event, std::string_view data, token_usage& usage) const {
  if (event != "message_start" && event != "message_delta") return;
  auto j = nlohmann::json::parse(data, nullptr, false);
  if (!j.is_object()) return;
  // message_start carries input tokens; message_delta's usage is cumulative.
  const auto& u = event == "message_start" ? j.value("message", nlohmann::json::object()).value("usage", nlohmann::json())
                                           : j.value("usage", nlohmann::json());
  auto got = from_usage_object(u);
  if (got.input_tokens >= 0 && (event == "message_start" || got.input_tokens > 0)) usage.input_tokens = got.input_tokens;
  if (got.output_tokens >= 0) usage.output_tokens = got.output_tokens;
}

}  // namespace gistproxy::rewrite
