// Bedrock Converse requests: path, facts, tool outputs and tools, read with
// the position-preserving scanner (the body is never re-serialized).
#include "rewrite/dialects/bedrock/converse_api.hpp"

#include <map>

#include <nlohmann/json.hpp>

#include "rewrite/dialects/bedrock/converse_stream.hpp"
#include "rewrite/dialects/cloud_path.hpp"
#include "rewrite/dialects/text_fields.hpp"
#include "rewrite/dialects/tool_scan.hpp"
#include "rewrite/json/checked.hpp"
#include "rewrite/json/scanner.hpp"
#include "rewrite/request_target.hpp"

namespace gistproxy::rewrite {
namespace {

constexpr std::string_view model_segment = "/model/";
constexpr std::string_view converse_suffix = "/converse";
constexpr std::string_view stream_suffix = "/converse-stream";

struct converse_target {
  std::string_view model;  // still percent-encoded
  bool stream = false;
};

// /model/{modelId}/converse or …/converse-stream, under any prefix (gateways
// put one in front). The model id is what lies between: a client that did
// not encode an ARN's '/' still names it whole.
std::optional<converse_target> parse_target(std::string_view path) {
  auto at = path.find(model_segment);
  if (at == std::string_view::npos) return std::nullopt;
  auto rest = path.substr(at + model_segment.size());
  converse_target t;
  if (rest.ends_with(stream_suffix)) {
    t.stream = true;
    rest.remove_suffix(stream_suffix.size());
  } else if (rest.ends_with(converse_suffix)) {
    rest.remove_suffix(converse_suffix.size());
  } else {
    return std::nullopt;
  }
  if (rest.empty()) return std::nullopt;
  t.model = rest;
  return t;
}

// Consumes a toolConfig value: the tools array's range, each element's range
// and every toolSpec.name. False for what Bedrock itself refuses (a
// toolConfig that is not an object, tools that are not a list): such a body
// is forwarded as the client sent it.
bool collect_tool_config(json::cursor& c, request_scan& out) {
  if (c.peek() != json::kind::object) return false;
  auto holder = c.object([&](std::string_view key, json::cursor& v) {
    if (key != "tools") return v.skip_value().has_value();
    if (v.peek() != json::kind::array) return false;
    auto tools = v.array([&](std::size_t, json::cursor& tool) {
      if (tool.peek() != json::kind::object) return tool.skip_value().has_value();
      std::string name;
      auto range = tool.object([&](std::string_view k, json::cursor& tv) {
        if (k == "toolSpec" && tv.peek() == json::kind::object) return read_string_member(tv, "name", name);
        return tv.skip_value().has_value();  // cachePoint blocks, system tools
      });
      if (range) out.tool_ranges.push_back(*range);
      if (range && !name.empty()) out.declared_tools.push_back(std::move(name));
      return range.has_value();
    });
    if (tools) out.tools = tools;
    return tools.has_value();
  });
  if (holder) out.tools_holder = holder;
  return holder.has_value();
}

// A toolResult's content list (found at `items`): each {"text": "…"} item's
// string is one output. json, image and document items stay inline.
bool collect_result_items(json::document doc, json::range items, std::string_view tool_name,
                          std::string_view call_id, request_scan& out) {
  json::cursor c(doc.up_to(items.end), items.begin);
  if (c.peek() != json::kind::array) return c.skip_value().has_value();
  return c.array([&](std::size_t, json::cursor& item) {
            if (item.peek() != json::kind::object) return item.skip_value().has_value();
            return item.object([&](std::string_view key, json::cursor& v) {
                         if (key == "text" && v.peek() == json::kind::string)
                           return collect_output_content(v, tool_name, call_id, false, out);
                         return v.skip_value().has_value();
                       })
                .has_value();
          })
      .has_value();
}

// Consumes a toolResult object. Its members may come in any order, so the
// content is read once the toolUseId (and with it the tool's name) is known.
bool collect_tool_result(json::cursor& c, const call_directory& calls, request_scan& out) {
  std::string id;
  std::optional<json::range> content;
  bool ok = c.object([&](std::string_view key, json::cursor& v) {
               if (key == "toolUseId" && v.peek() == json::kind::string) return v.string_value(id);
               auto r = v.skip_value();
               if (r && key == "content") content = r;
               return r.has_value();
             }).has_value();
  if (!ok) return false;
  if (!content) return true;
  return collect_result_items(c.doc(), *content, calls.tool_of(id), id, out);
}

// Consumes one content block: a toolUse names its call, a toolResult holds outputs.
bool collect_block(json::cursor& b, call_directory& calls, request_scan& out) {
  if (b.peek() != json::kind::object) return b.skip_value().has_value();
  return b.object([&](std::string_view key, json::cursor& v) {
              if (key == "toolResult" && v.peek() == json::kind::object) return collect_tool_result(v, calls, out);
              if (key != "toolUse" || v.peek() != json::kind::object) return v.skip_value().has_value();
              std::string id, name;
              bool ok = v.object([&](std::string_view k, json::cursor& tv) {
                           if (k == "toolUseId" && tv.peek() == json::kind::string) return tv.string_value(id);
                           if (k == "name" && tv.peek() == json::kind::string) return tv.string_value(name);
                           return tv.skip_value().has_value();
                         }).has_value();
              if (ok) calls.declare(id, name);
              return ok;
            })
      .has_value();
}

bool collect_message(json::cursor& m, call_directory& calls, request_scan& out) {
  if (m.peek() != json::kind::object) return m.skip_value().has_value();
  return m.object([&](std::string_view key, json::cursor& v) {
              if (key != "content" || v.peek() != json::kind::array) return v.skip_value().has_value();
              return v.array([&](std::size_t, json::cursor& b) { return collect_block(b, calls, out); }).has_value();
            })
      .has_value();
}

}  // namespace

std::string converse_model_of(std::string_view path) {
  auto t = parse_target(path);
  return t ? cloud_path::model_id(t->model) : std::string();
}

bool converse_endpoint::serves_path(std::string_view path) const { return parse_target(path).has_value(); }

bool converse_endpoint::counts_tokens_at(std::string_view path) const {
  return path.starts_with(model_segment) && path.ends_with("/count-tokens");
}

std::optional<unwrapped_count> converse_endpoint::unwrap_count(std::string_view, std::string_view body) const {
  return unwrap_bedrock_count(*this, invoke_, body);
}

std::string converse_endpoint::request_path(std::string_view model) const {
  return std::string(model_segment) + cloud_path::percent_encoded(model.empty() ? std::string_view("bedrock") : model) +
         std::string(converse_suffix);
}

void converse_endpoint::inspect_target(std::string_view target, request_facts& facts) const {
  auto path = path_of(target);
  auto t = parse_target(path);
  if (!t) return;
  facts.model = converse_model_of(path);
  facts.stream = t->stream;
}

std::optional<request_facts> converse_wire::inspect(json::document body) const {
  json::cursor c(body);
  request_facts facts;
  std::string system, first_user;
  bool have_user = false;
  auto ok = c.object([&](std::string_view key, json::cursor& v) {
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
  facts.conversation_key = "bedrock-converse\n" + system + '\0' + first_user;
  return facts;
}

bool converse_wire::scan(json::document body, request_scan& out) const {
  json::cursor c(body);
  if (c.peek() != json::kind::object) return false;
  auto whole = c.object([&](std::string_view key, json::cursor& v) {
    if (key == "toolConfig") return collect_tool_config(v, out);
    if (key != "messages" || v.peek() != json::kind::array) return v.skip_value().has_value();
    return walk_conversation(v, out, [&](json::cursor& m, call_directory& calls) { return collect_message(m, calls, out); });
  });
  if (!whole || !c.at_end()) return false;
  out.object_end = whole->end - 1;
  return true;
}

std::string converse_wire::read_blob_tool(std::string_view name) const {
  std::string out = R"({"toolSpec":{"name":")";
  json::escape_into(out, name);
  out += R"(","description":")";
  json::escape_into(out, read_blob_description());
  out += R"(","inputSchema":{"json":)" + read_blob_parameters_schema() + "}}}";
  return out;
}

// The tools array lives in toolConfig: inside the client's toolConfig when it
// has one (its other members stay as they are), else a new toolConfig.
wire_format::insertion converse_wire::tools_insertion(std::string_view body, const request_scan& scan,
                                                     std::string_view definition) const {
  const std::string tools = "\"tools\":[" + std::string(definition) + "]";
  if (!scan.tools_holder) return {scan.object_end, ",\"toolConfig\":{" + tools + "}"};
  const auto& holder = *scan.tools_holder;
  const bool empty = body.substr(holder.begin + 1, holder.size() - 2).find_first_not_of(" \t\r\n") == std::string_view::npos;
  return {holder.end - 1, (empty ? "" : ",") + tools};
}

std::unique_ptr<stream_filter> converse_wire::make_stream_filter(std::string tool_name) const {
  return make_converse_stream_filter(*this, std::move(tool_name));
}

std::optional<nlohmann::json> converse_wire::assemble_stream(std::string_view sse_text) const {
  return assemble_converse_stream(sse_text);
}

// Converse's own members (toolConfig, inferenceConfig, …) and content blocks
// keyed by shape (toolUse, toolResult, cachePoint, or text without a "type")
// are Bedrock's; a body without messages is not (Gemini has a toolConfig too).
int converse_endpoint::request_affinity(const nlohmann::json& body) const {
  if (!checked::member(body, "messages").is_array()) return 0;
  for (const char* key : {"toolConfig", "inferenceConfig", "additionalModelRequestFields"})
    if (body.contains(key)) return 5;
  auto converse_block = [](const nlohmann::json& b) {
    return b.is_object() && (b.contains("toolUse") || b.contains("toolResult") || b.contains("cachePoint") ||
                             (checked::member(b, "text").is_string() && !b.contains("type")));
  };
  for (const auto& b : checked::array_at(body, "system"))
    if (converse_block(b)) return 4;
  for (const auto& m : checked::array_at(body, "messages"))
    for (const auto& b : checked::array_at(m, "content"))
      if (converse_block(b)) return 4;
  return 0;
}

}  // namespace gistproxy::rewrite
