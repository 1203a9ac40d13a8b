#include "rewrite/dialect.hpp"
#include "rewrite/dialects/chat.hpp"
#include "rewrite/dialects/messages.hpp"
#include "rewrite/dialects/responses.hpp"
#include "rewrite/json/scanner.hpp"

#include <nlohmann/json.hpp>

#include "rewrite/json/checked.hpp"

namespace gistproxy::rewrite {
namespace {

bool ends_with(std::string_view s, std::string_view suffix) {
  return s.size() >= suffix.size() && s.substr(s.size() - suffix.size()) == suffix;
}

}  // namespace

std::string dialect::image_replacement(std::string_view text) const {
  std::string out = "\"";
  json::escape_into(out, text);
  out += '"';
  return out;
}

token_usage dialect::usage_from_response(std::string_view body) const {
  // Responses can be large (long completions); find "usage" with the scanner
  // and parse only that small object.
  json::cursor c(body);
  std::optional<json::range> usage;
  if (c.peek() != json::kind::object) return {};
  bool ok = c.object([&](std::string_view key, json::cursor& v) {
                auto r = v.skip_value();
                if (r && key == "usage") usage = r;
                return r.has_value();
              }).has_value();
  if (!ok || !usage) return {};
  auto parsed = checked::parse(body.substr(usage->begin, usage->size()));
  if (parsed.is_discarded()) return {};
  return usage_from_response(nlohmann::json{{"usage", std::move(parsed)}});
}

const dialect* dialect_for(std::string_view method, std::string_view target) {
  static const chat_dialect chat;
  static const responses_dialect responses;
  static const messages_dialect messages;
  if (method != "POST") return nullptr;
  auto path = target.substr(0, target.find('?'));
  while (path.size() > 1 && path.back() == '/') path.remove_suffix(1);
  if (ends_with(path, "/chat/completions")) return &chat;
  if (ends_with(path, "/responses")) return &responses;
  if (ends_with(path, "/messages")) return &messages;
  return nullptr;
}

}  // namespace gistproxy::rewrite
