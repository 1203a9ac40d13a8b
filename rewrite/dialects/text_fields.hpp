// Helpers the dialects share for reading request bodies with the scanner.
#pragma once

#include <optional>
#include <string>
#include <string_view>

#include "rewrite/json/scanner.hpp"

namespace gistproxy::rewrite {

// Consumes a content value and appends its text: a string, or the "text"
// members of an array of parts (other parts are skipped), so details that vary
// between turns (cache_control markers) do not show. Text is appended as the
// client escaped it (no decoding), and at most `key_text_limit` bytes of it:
// the key identifies a conversation, it need not hold all of a huge prompt.
constexpr std::size_t key_text_limit = 16 * 1024;
// A block whose text begins with `skip` (when given) is left out, before the
// limit counts it: Claude Code's billing block (messages_api.hpp).
bool append_content_text(json::cursor& c, std::string& out, std::string_view skip = {});

// Consumes an object and returns the unescaped value of a string member
// (empty if absent); other members are skipped.
bool read_string_member(json::cursor& c, std::string_view key, std::string& out);

}  // namespace gistproxy::rewrite

namespace gistproxy::rewrite {

// Consumes a message object, reading its "role" and the range of its
// "content" value (members may come in any order).
struct message_view {
  std::string role;
  std::string type;
  std::optional<json::range> content;
};
bool read_message(json::cursor& c, message_view& out);

// Appends the text of a content value found earlier at `content`.
bool append_content_text_at(json::document doc, json::range content, std::string& out);

}  // namespace gistproxy::rewrite
