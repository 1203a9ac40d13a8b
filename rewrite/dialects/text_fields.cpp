#include "rewrite/dialects/text_fields.hpp"

namespace gistproxy::rewrite {

namespace {

void append_bounded(std::string_view raw, std::string& out) {
  std::size_t room = key_text_limit > out.size() ? key_text_limit - out.size() : 0;
  out.append(raw.substr(0, room));
}

bool append_raw_string(json::cursor& c, std::string& out) {
  auto raw = c.string_raw();
  if (!raw) return false;
  append_bounded(*raw, out);
  return true;
}

}  // namespace

bool append_content_text(json::cursor& c, std::string& out, std::string_view skip) {
  switch (c.peek()) {
    case json::kind::string:
      return append_raw_string(c, out);
    case json::kind::array:
      return c
          .array([&](std::size_t, json::cursor& e) {
            if (e.peek() != json::kind::object) return e.skip_value().has_value();
            return e
                .object([&](std::string_view key, json::cursor& v) {
                  if (key == "text" && v.peek() == json::kind::string) {
                    auto raw = v.string_raw();
                    if (!raw) return false;
                    if (!skip.empty() && raw->substr(0, skip.size()) == skip) return true;
                    append_bounded(*raw, out);
                    out += '\n';
                    return true;
                  }
                  return v.skip_value().has_value();
                })
                .has_value();
          })
          .has_value();
    default:
      return c.skip_value().has_value();
  }
}

bool read_string_member(json::cursor& c, std::string_view key, std::string& out) {
  return c
      .object([&](std::string_view k, json::cursor& v) {
        if (k == key && v.peek() == json::kind::string) return v.string_value(out);
        return v.skip_value().has_value();
      })
      .has_value();
}

}  // namespace gistproxy::rewrite

namespace gistproxy::rewrite {

bool read_message(json::cursor& c, message_view& out) {
  return c
      .object([&](std::string_view key, json::cursor& v) {
        if (key == "role" && v.peek() == json::kind::string) return v.string_value(out.role);
        if (key == "type" && v.peek() == json::kind::string) return v.string_value(out.type);
        auto r = v.skip_value();
        if (r && key == "content") out.content = r;
        return r.has_value();
      })
      .has_value();
}

bool append_content_text_at(json::document doc, json::range content, std::string& out) {
  json::cursor c(doc.up_to(content.end), content.begin);
  return append_content_text(c, out);
}

}  // namespace gistproxy::rewrite
