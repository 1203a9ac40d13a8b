#include "rewrite/dialects/text_fields.hpp"

namespace gistproxy::rewrite {

bool append_content_text(json::cursor& c, std::string& out) {
  std::string piece;
  switch (c.peek()) {
    case json::kind::string:
      if (!c.string_value(piece)) return false;
      out += piece;
      return true;
    case json::kind::array:
      return c
          .array([&](std::size_t, json::cursor& e) {
            if (e.peek() != json::kind::object) return e.skip_value().has_value();
            return e
                .object([&](std::string_view key, json::cursor& v) {
                  if (key == "text" && v.peek() == json::kind::string) {
                    if (!v.string_value(piece)) return false;
                    out += piece;
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

bool append_content_text_at(std::string_view doc, json::range content, std::string& out) {
  json::cursor c(doc.substr(0, content.end), content.begin);
  return append_content_text(c, out);
}

}  // namespace gistproxy::rewrite
