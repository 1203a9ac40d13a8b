#include "rewrite/dialects/responses/responses_socket.hpp"

#include <vector>

#include <nlohmann/json.hpp>

#include "rewrite/json/checked.hpp"
#include "rewrite/json/scanner.hpp"
#include "rewrite/text/utf8.hpp"

namespace gistproxy::rewrite {
namespace {

struct member {
  std::string_view raw_key;  // between the quotes, as written (escapes and all)
  std::string key;           // unescaped: the name a server reads
  json::range value;
};

// The members of the one JSON object `text` holds, in their order; nullopt
// when it holds anything else. The scanner walks nesting with a bounded
// stack (512 levels), never recursion.
std::optional<std::vector<member>> object_members(std::string_view text) {
  json::cursor c(text);
  if (c.peek() != json::kind::object) return std::nullopt;
  std::vector<member> members;
  auto whole = c.object([&](std::string_view raw_key, json::cursor& v) {
    member m{raw_key, {}, {}};
    // A key may spell `type` with escapes ("\u0074ype"): compare what it means.
    if (!json::unescape(raw_key, m.key)) return false;
    auto value = v.skip_value();
    if (!value) return false;
    m.value = *value;
    members.push_back(std::move(m));
    return true;
  });
  if (!whole || !c.at_end()) return std::nullopt;
  return members;
}

// The only member named `key`; nullopt when there is none or more than one.
std::optional<json::range> only_member(const std::vector<member>& members, std::string_view key) {
  std::optional<json::range> found;
  for (const auto& m : members) {
    if (m.key != key) continue;
    if (found) return std::nullopt;
    found = m.value;
  }
  return found;
}

std::size_t count_members(const std::vector<member>& members, std::string_view key) {
  std::size_t n = 0;
  for (const auto& m : members) n += m.key == key;
  return n;
}

// The string a value holds, unescaped; nullopt when it is not a string.
std::optional<std::string> string_of(std::string_view text, json::range value) {
  if (value.size() < 2 || text[value.begin] != '"') return std::nullopt;
  std::string out;
  if (!json::unescape(text.substr(value.begin + 1, value.size() - 2), out)) return std::nullopt;
  return out;
}

void append_member(std::string& out, std::string_view raw_key, std::string_view value) {
  out += '"';
  out.append(raw_key);
  out += "\":";
  out.append(value);
}

std::string_view bytes_of(std::string_view text, json::range r) { return text.substr(r.begin, r.size()); }

client_frame refused(std::string_view why) {
  client_frame f;
  f.refusal = why;
  return f;
}

// The frame's members but `type`, every `stream` set to true (added when absent).
std::string request_body_of(std::string_view frame, const std::vector<member>& members) {
  std::string body = "{";
  body.reserve(frame.size() + 16);
  bool streamed = false;
  for (const auto& m : members) {
    if (m.key == "type") continue;
    if (body.size() > 1) body += ',';
    const bool stream = m.key == "stream";
    append_member(body, m.raw_key, stream ? std::string_view("true") : bytes_of(frame, m.value));
    streamed = streamed || stream;
  }
  if (!streamed) body += body.size() > 1 ? ",\"stream\":true" : "\"stream\":true";
  body += '}';
  return body;
}

bool ends_response(std::string_view type) {
  return type == "response.completed" || type == "response.failed" || type == "response.incomplete" ||
         type == "error";
}

bool has_control_character(std::string_view s) {
  for (char c : s)
    if (static_cast<unsigned char>(c) < 0x20) return true;
  return false;
}

// One `data:` line per line of the frame (CRLF, CR or LF, as SSE splits
// them): a line of its own would be read as a field, not as data.
void append_data_lines(std::string& sse, std::string_view frame) {
  for (std::size_t at = 0;;) {
    const std::size_t eol = frame.find_first_of("\r\n", at);
    sse += "data: ";
    sse.append(frame.substr(at, eol == std::string_view::npos ? std::string_view::npos : eol - at));
    sse += '\n';
    if (eol == std::string_view::npos) break;
    at = eol + 1;
    if (frame[eol] == '\r' && at < frame.size() && frame[at] == '\n') ++at;
  }
}

// The body's `error` object, byte for byte, when the body is a JSON object
// with exactly one `error` member that is an object and strictly valid JSON
// (the scanner is lenient; a client must be able to parse what it is sent).
std::optional<std::string_view> error_object_of(std::string_view body, std::size_t max_bytes) {
  if (body.size() > max_bytes || !text::is_valid_utf8(body)) return std::nullopt;
  auto members = object_members(body);
  if (!members) return std::nullopt;
  auto error = only_member(*members, "error");
  if (!error || body[error->begin] != '{') return std::nullopt;
  const auto bytes = bytes_of(body, *error);
  if (!checked::within_depth(bytes) || !nlohmann::json::accept(bytes)) return std::nullopt;
  return bytes;
}

}  // namespace

client_frame read_client_frame(std::string_view frame, std::size_t max_bytes) {
  if (frame.size() > max_bytes) return refused("message over the size limit");
  if (!text::is_valid_utf8(frame)) return refused("message is not UTF-8");
  auto members = object_members(frame);
  if (!members) return refused("message is not one well-formed JSON object");
  if (count_members(*members, "type") > 1) return refused("message has more than one type");
  auto type_value = only_member(*members, "type");
  if (!type_value) return refused("message has no type");
  auto type = string_of(frame, *type_value);
  if (!type) return refused("message type is not a string");
  client_frame f;
  f.kind = *type == "response.create" ? client_frame_kind::create : client_frame_kind::other;
  if (f.kind == client_frame_kind::create) f.request_body = request_body_of(frame, *members);
  return f;
}

std::optional<std::string> response_create_frame(std::string_view request_body) {
  auto members = object_members(request_body);
  if (!members) return std::nullopt;
  std::string frame = "{\"type\":\"response.create\"";
  frame.reserve(request_body.size() + frame.size() + 1);
  for (const auto& m : *members) {
    if (m.key == "type") continue;
    frame += ',';
    append_member(frame, m.raw_key, bytes_of(request_body, m.value));
  }
  frame += '}';
  return frame;
}

std::optional<upstream_event> sse_of_upstream_frame(std::string_view frame, std::size_t max_bytes) {
  if (frame.size() > max_bytes || !text::is_valid_utf8(frame)) return std::nullopt;
  auto members = object_members(frame);
  if (!members) return std::nullopt;
  auto type_value = only_member(*members, "type");
  if (!type_value) return std::nullopt;
  auto type = string_of(frame, *type_value);
  if (!type) return std::nullopt;
  upstream_event e;
  e.ends_response = ends_response(*type);
  e.sse.reserve(frame.size() + type->size() + 16);
  // The stream reader takes the type from the data; the name is for people.
  if (!has_control_character(*type)) e.sse.append("event: ").append(*type).append("\n");
  append_data_lines(e.sse, frame);
  e.sse += '\n';
  return e;
}

void sse_to_client_frames::feed(std::string_view sse_bytes,
                                const std::function<void(std::string_view frame)>& on_frame) {
  if (overflowed_) return;
  parser_.feed(sse_bytes, [&](const sse::event& e) {
    if (overflowed_ || e.raw.size() > max_event_bytes_) {
      overflowed_ = true;
      return;
    }
    // Keep-alives and [DONE] are SSE's own: a socket has pings and no end marker.
    if (e.comment_only || e.data.empty() || e.data == "[DONE]") return;
    on_frame(e.data);
  });
  if (parser_.pending().size() > max_event_bytes_) overflowed_ = true;
}

std::string error_event_frame(int status, std::string_view body, std::size_t max_bytes) {
  std::string frame = "{\"type\":\"error\",\"status\":" + std::to_string(status) + ",\"error\":";
  if (auto error = error_object_of(body, max_bytes))
    frame.append(*error);
  else
    frame += "{\"type\":\"upstream_error\",\"message\":\"the answer was not a stream and held no JSON error\"}";
  frame += '}';
  return frame;
}

}  // namespace gistproxy::rewrite
