// Gemini requests: path, facts, tool outputs and tools, read with the
// position-preserving scanner (the body is never re-serialized).
#include "rewrite/dialects/gemini/gemini_api.hpp"

#include <nlohmann/json.hpp>

#include "rewrite/dialects/gemini/gemini_stream.hpp"
#include "rewrite/dialects/text_fields.hpp"
#include "rewrite/dialects/tool_scan.hpp"
#include "rewrite/json/checked.hpp"
#include "rewrite/json/scanner.hpp"
#include "rewrite/request_target.hpp"

namespace gistproxy::rewrite {
namespace {

constexpr std::string_view models_segment = "/models/";

// Consumes a Content object ({role, parts}) and appends the text of its parts.
bool append_parts_text(json::cursor& c, std::string& out, std::string* role = nullptr) {
  return c.object([&](std::string_view key, json::cursor& v) {
            if (key == "parts") return append_content_text(v, out);
            if (key == "role" && role && v.peek() == json::kind::string) return v.string_value(*role);
            return v.skip_value().has_value();
          }).has_value();
}

// Consumes a tools array: its range and every functionDeclarations[].name.
bool collect_declarations(json::cursor& c, request_scan& out) {
  auto range = c.array([&](std::size_t, json::cursor& tool) {
    if (tool.peek() != json::kind::object) return tool.skip_value().has_value();
    auto tool_range = tool.object([&](std::string_view key, json::cursor& v) {
                 if (key != "functionDeclarations" || v.peek() != json::kind::array) return v.skip_value().has_value();
                 return v.array([&](std::size_t, json::cursor& decl) {
                           if (decl.peek() != json::kind::object) return decl.skip_value().has_value();
                           std::string name;
                           if (!read_string_member(decl, "name", name)) return false;
                           if (!name.empty()) out.declared_tools.push_back(std::move(name));
                           return true;
                         })
                     .has_value();
               });
    if (tool_range) out.tool_ranges.push_back(*tool_range);
    return tool_range.has_value();
  });
  if (range) out.tools = range;
  return range.has_value();
}

// Consumes a functionResponse object; a response holding one string member
// makes that string a tool output.
bool collect_function_response(json::cursor& c, request_scan& out) {
  std::string name, id;
  std::optional<json::range> only_string;
  std::size_t members = 0;
  bool ok = c.object([&](std::string_view key, json::cursor& v) {
               if (key == "name" && v.peek() == json::kind::string) return v.string_value(name);
               if (key == "id" && v.peek() == json::kind::string) return v.string_value(id);
               if (key != "response" || v.peek() != json::kind::object) return v.skip_value().has_value();
               return v.object([&](std::string_view, json::cursor& m) {
                          ++members;
                          const bool is_string = m.peek() == json::kind::string;
                          auto r = m.skip_value();
                          if (r && is_string) only_string = r;
                          return r.has_value();
                        })
                   .has_value();
             }).has_value();
  if (!ok) return false;
  if (members != 1 || !only_string) return true;
  json::cursor value(c.doc().up_to(only_string->end), only_string->begin);
  return collect_output_content(value, name, id, false, out);
}

bool collect_parts(json::cursor& c, request_scan& out) {
  return c.array([&](std::size_t, json::cursor& part) {
            if (part.peek() != json::kind::object) return part.skip_value().has_value();
            return part.object([&](std::string_view key, json::cursor& v) {
                         if (key == "functionResponse" && v.peek() == json::kind::object)
                           return collect_function_response(v, out);
                         return v.skip_value().has_value();
                       })
                .has_value();
          })
      .has_value();
}

}  // namespace

// Whether the query of `target` has name=value: the first pair of that name
// with an '=' wins, its value compared as sent (an option's literal).
static bool has_query_pair(std::string_view target, std::string_view name, std::string_view value) {
  for (const auto& pair : rewrite::query_pairs(target))
    if (pair.has_equals && pair.named(name)) return pair.value == value;
  return false;
}

bool gemini_endpoint::serves_path(std::string_view path) const {
  auto at = path.find(models_segment);
  if (at == std::string_view::npos) return false;
  return path.ends_with(":generateContent") || path.ends_with(":streamGenerateContent");
}

bool gemini_endpoint::counts_tokens_at(std::string_view path) const {
  return (path.starts_with("/v1beta/models/") || path.starts_with("/v1/models/")) && path.ends_with(":countTokens");
}

std::optional<unwrapped_count> gemini_endpoint::unwrap_count(std::string_view model, std::string_view body) const {
  return unwrap_gemini_count(*this, model, body);
}

namespace {

// Gemini's model methods under /v1/ (/v1beta/ is Gemini's whatever the method).
// OpenAI's fine-tuned model ids hold colons too, but never end in one of these.
bool gemini_method_path(std::string_view path) {
  const auto colon = path.rfind(':');
  if (colon == std::string_view::npos || path.find('/', colon) != std::string_view::npos) return false;
  const auto method = path.substr(colon + 1);
  for (std::string_view m : {"generateContent", "streamGenerateContent", "countTokens", "embedContent",
                             "batchEmbedContents", "batchGenerateContent"})
    if (method == m) return true;
  return false;
}

constexpr path_claim gemini_paths[] = {{"/v1beta/"},
                                       {"/v1alpha/"},
                                       {"/upload/v1beta/"},
                                       {"/v1/models/", gemini_method_path},
                                       {"/v1/tunedModels/", gemini_method_path}};
// Vertex's express mode takes Google's API keys too (vertex_endpoints.cpp).
constexpr credential_kind gemini_credentials[] = {credential_kind::google_key};
constexpr upstream_family gemini{.name = "gemini",
                                 .default_url = "https://generativelanguage.googleapis.com",
                                 .paths = gemini_paths,
                                 .credentials = gemini_credentials,
                                 .gateway_mount = "/gemini"};

}  // namespace

const upstream_family& gemini_family() { return gemini; }

std::string gemini_endpoint::request_path(std::string_view model) const {
  return "/v1beta/models/" + std::string(model.empty() ? "gemini" : model) + ":generateContent";
}

void gemini_endpoint::read_gemini_target(std::string_view target, request_facts& facts) {
  auto path = path_of(target);
  auto at = path.find(models_segment);
  if (at == std::string_view::npos) return;
  auto rest = path.substr(at + models_segment.size());
  auto colon = rest.rfind(':');
  facts.model = std::string(rest.substr(0, colon));
  facts.stream = colon != std::string_view::npos && rest.substr(colon) == ":streamGenerateContent";
  // Without alt=sse, streamGenerateContent answers one JSON array written as
  // it grows, which no stream filter follows.
  if (facts.stream) facts.answer_interceptable = has_query_pair(target, "alt", "sse");
}

std::optional<request_facts> gemini_wire::inspect(json::document body) const {
  json::cursor c(body);
  request_facts facts;
  std::string system, first_user;
  bool have_user = false;
  auto ok = c.object([&](std::string_view key, json::cursor& v) {
    if ((key == "systemInstruction" || key == "system_instruction") && v.peek() == json::kind::object)
      return append_parts_text(v, system);
    if (key != "contents" || v.peek() != json::kind::array) return v.skip_value().has_value();
    return v
        .array([&](std::size_t, json::cursor& content) {
          if (have_user || content.peek() != json::kind::object) return content.skip_value().has_value();
          std::string role, text;
          if (!append_parts_text(content, text, &role)) return false;
          if (role != "user" && !role.empty()) return true;
          have_user = true;
          first_user = std::move(text);
          return true;
        })
        .has_value();
  });
  if (!ok || !c.at_end()) return std::nullopt;
  facts.conversation_key = "gemini\n" + system + '\0' + first_user;
  return facts;
}

bool gemini_wire::scan(json::document body, request_scan& out) const {
  json::cursor c(body);
  if (c.peek() != json::kind::object) return false;
  auto whole = c.object([&](std::string_view key, json::cursor& v) {
    if (key == "tools" && v.peek() == json::kind::array) return collect_declarations(v, out);
    if (key != "contents" || v.peek() != json::kind::array) return v.skip_value().has_value();
    return walk_conversation(v, out, [&](json::cursor& content, call_directory&) {
              if (content.peek() != json::kind::object) return content.skip_value().has_value();
              return content.object([&](std::string_view k, json::cursor& cv) {
                            if (k == "parts" && cv.peek() == json::kind::array) return collect_parts(cv, out);
                            return cv.skip_value().has_value();
                          })
                  .has_value();
            });
  });
  if (!whole || !c.at_end()) return false;
  out.object_end = whole->end - 1;
  return true;
}

std::string gemini_wire::read_blob_tool(std::string_view name) const {
  std::string out = R"({"functionDeclarations":[{"name":")";
  json::escape_into(out, name);
  out += R"(","description":")";
  json::escape_into(out, read_blob_description());
  out += R"(","parameters":)" + read_blob_parameters_schema() + "}]}";
  return out;
}

std::unique_ptr<stream_filter> gemini_wire::make_stream_filter(std::string tool_name) const {
  return make_gemini_stream_filter(*this, std::move(tool_name));
}

std::optional<nlohmann::json> gemini_wire::assemble_stream(std::string_view sse_text) const {
  return assemble_gemini_stream(sse_text);
}

// contents without messages is Gemini's alone.
int gemini_endpoint::request_affinity(const nlohmann::json& body) const {
  return body.is_object() && body.contains("contents") && !body.contains("messages") ? 4 : 0;
}

}  // namespace gistproxy::rewrite
