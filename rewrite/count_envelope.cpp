#include "rewrite/count_envelope.hpp"

#include "rewrite/json/scanner.hpp"
#include "rewrite/offload/base64.hpp"

namespace gistproxy::rewrite {
namespace {

// The ranges of a JSON object's one member named `name` and of the object
// itself, when `doc` is exactly such an object; nullopt when it has any other
// member, or is not one.
struct sole_member {
  json::range object, value;
};
std::optional<sole_member> sole(std::string_view doc, std::string_view name) {
  json::cursor c(doc);
  if (c.peek() != json::kind::object) return std::nullopt;
  std::optional<json::range> value;
  bool other = false;
  auto object = c.object([&](std::string_view key, json::cursor& v) {
    auto r = v.skip_value();
    if (key == name && !value) value = r;
    else other = true;
    return r.has_value();
  });
  if (!object || other || !value || !c.at_end()) return std::nullopt;
  return sole_member{*object, *value};
}

bool is_object(std::string_view doc, json::range r) {
  json::cursor c(doc, r.begin);
  return c.peek() == json::kind::object;
}

std::optional<unwrapped_count> around(std::string_view doc, json::range r, const endpoint& reader) {
  return unwrapped_count{{std::string(doc.substr(0, r.begin)), std::string(doc.substr(r.end)), false},
                         std::string(doc.substr(r.begin, r.size())), &reader};
}

}  // namespace

std::optional<unwrapped_count> unwrap_gemini_count(const endpoint& gemini, std::string_view model, std::string_view body) {
  if (auto wrapped = sole(body, "generateContentRequest"); wrapped && is_object(body, wrapped->value))
    return around(body, wrapped->value, gemini);
  // Only contents: the turn's request names its model and will carry
  // read_blob's definition, so it is counted as a generateContentRequest.
  auto contents = sole(body, "contents");
  if (!contents || model.empty() || model.size() > 256) return std::nullopt;
  std::string request = "{\"model\":\"";
  json::escape_into(request, "models/" + std::string(model));
  request += "\",";
  request.append(body.substr(contents->object.begin + 1, contents->object.size() - 1));
  return unwrapped_count{{"{\"generateContentRequest\":", "}", false}, std::move(request), &gemini};
}

std::optional<unwrapped_count> unwrap_bedrock_count(const endpoint& converse_reader, const endpoint& invoke_reader,
                                                    std::string_view body) {
  auto input = sole(body, "input");
  if (!input) return std::nullopt;
  const auto inner = body.substr(0, input->value.end);  // the input object ends the document here
  if (auto converse = sole(inner.substr(input->value.begin), "converse")) {
    const json::range r{input->value.begin + converse->value.begin, input->value.begin + converse->value.end};
    if (is_object(body, r)) return around(body, r, converse_reader);
    return std::nullopt;
  }
  auto invoke = sole(inner.substr(input->value.begin), "invokeModel");
  if (!invoke) return std::nullopt;
  const auto invoke_at = input->value.begin + invoke->value.begin;
  auto payload = sole(body.substr(invoke_at, invoke->value.size()), "body");
  if (!payload) return std::nullopt;
  const json::range r{invoke_at + payload->value.begin, invoke_at + payload->value.end};
  json::cursor c(body, r.begin);
  std::string encoded, decoded;
  if (c.peek() != json::kind::string || !c.string_value(encoded) || !base64_decode(encoded, decoded)) return std::nullopt;
  json::cursor d(decoded);
  if (d.peek() != json::kind::object) return std::nullopt;
  return unwrapped_count{{std::string(body.substr(0, r.begin)), std::string(body.substr(r.end)), true},
                         std::move(decoded), &invoke_reader};
}

std::string rewrap_count(const count_envelope& envelope, std::string_view request) {
  std::string out = envelope.before;
  if (envelope.base64) out += '"' + base64_encode(request) + '"';
  else out.append(request);
  return out + envelope.after;
}

}  // namespace gistproxy::rewrite
