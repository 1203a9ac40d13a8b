#include "rewrite/gist/reference.hpp"

#include <algorithm>

#include "rewrite/gist/digests.hpp"
#include "rewrite/text/utf8.hpp"

namespace gistproxy::rewrite {
namespace {

// Moves a cut point back to the start of a UTF-8 sequence.
std::size_t utf8_floor(std::string_view s, std::size_t cut) {
  while (cut > 0 && cut < s.size() && (static_cast<unsigned char>(s[cut]) & 0xC0) == 0x80) --cut;
  return cut;
}

// At most preview_tokens, and at most a quarter of the output: a reference
// must be much smaller than what it replaces. Tokens become bytes at this
// output's own ratio: a fixed 4 bytes per token would show all of a
// token-dense output (digits, symbols: ~1 byte per token) as its "preview".
std::size_t preview_bytes(const content_shape& shape, std::size_t preview_tokens) {
  if (shape.tokens == 0) return 0;
  const auto tokens = std::min<std::uint64_t>(preview_tokens, shape.tokens / 4);
  return std::size_t(tokens * shape.bytes / shape.tokens);
}

}  // namespace

std::string_view preview_slice(std::string_view bytes, std::size_t max_bytes, bool from_end, std::size_t& lines_shown) {
  lines_shown = 0;
  if (bytes.size() <= max_bytes) {
    lines_shown = count_lines(bytes);
    return bytes;
  }
  if (!from_end) {
    auto window = bytes.substr(0, max_bytes);
    auto nl = window.rfind('\n');
    if (nl == std::string_view::npos) {
      lines_shown = 1;  // one long line: cut it
      return bytes.substr(0, utf8_floor(bytes, max_bytes));
    }
    auto slice = bytes.substr(0, nl + 1);
    lines_shown = count_lines(slice);
    return slice;
  }
  auto body = bytes;
  if (!body.empty() && body.back() == '\n') body.remove_suffix(1);
  auto start = body.size() > max_bytes ? body.size() - max_bytes : 0;
  auto nl = body.find('\n', start);
  if (start == 0) nl = std::string_view::npos;
  std::size_t from = nl == std::string_view::npos ? utf8_floor(bytes, start) : nl + 1;
  if (from >= body.size()) from = utf8_floor(bytes, start);  // one long last line: cut it
  auto slice = bytes.substr(from);
  lines_shown = count_lines(slice);
  return slice;
}

namespace {
constexpr std::string_view reference_opening =
    "[gistproxy: this tool output was moved out of the context window; its exact bytes are stored]\n";
// The closing line says what the short read_blob definition leaves out,
// where the model needs it.
constexpr std::string_view reference_closing =
    "Only part of it: add query=\"<words>\" (the best lines for them), pattern=\"<regex>\" (matching lines, "
    "numbered; context_lines=N adds lines around them) or start_line=A, end_line=B.";
// The closing of references written before query (still in conversations).
constexpr std::string_view earlier_reference_closing =
    "Only part of it: add pattern=\"<regex>\" (matching lines, numbered; context_lines=N adds lines around "
    "them) or start_line=A, end_line=B.";
}  // namespace

namespace {

// `text` ends with NAME("HANDLE"), HANDLE 16..64 lowercase hex.
bool ends_with_call(std::string_view text) {
  auto open = text.rfind("(\"");
  if (open == std::string_view::npos || !text.ends_with("\")")) return false;
  auto handle = text.substr(open + 2, text.size() - open - 4);
  if (handle.size() < 16 || handle.size() > 64) return false;
  for (char c : handle)
    if (!((c >= '0' && c <= '9') || (c >= 'a' && c <= 'f'))) return false;
  return true;
}

}  // namespace

std::string_view reference_handle(std::string_view text) {
  if (!is_reference(text)) return {};
  // Its last NAME("HANDLE") ends the image line or the "Full output" line.
  auto line = text.starts_with("[image: ") ? text : text.substr(0, text.rfind("\")\n") + 2);
  const auto open = line.rfind("(\"");
  return line.substr(open + 2, line.size() - open - 4);
}

bool is_reference(std::string_view text) {
  // An image placeholder: one line, "[image: …] (from tool …; stored by gistproxy) Retrieve: NAME("HANDLE")".
  if (text.starts_with("[image: "))
    return text.find('\n') == std::string_view::npos && text.find("; stored by gistproxy) Retrieve: ") != std::string_view::npos &&
           ends_with_call(text);
  if (!text.starts_with(reference_opening)) return false;
  std::string_view closing = text.ends_with(reference_closing)           ? reference_closing
                             : text.ends_with(earlier_reference_closing) ? earlier_reference_closing
                                                                         : std::string_view();
  if (closing.empty()) return false;
  // The line before the closing one: Full output: NAME("HANDLE")
  auto body = text.substr(0, text.size() - closing.size());
  if (body.empty() || body.back() != '\n') return false;
  body.remove_suffix(1);
  auto line = body.substr(body.rfind('\n') + 1);
  return line.starts_with("Full output: ") && ends_with_call(line);
}

// The digest for an output's kind; search output is recognised by its lines
// whatever it was classified as (grep hits in code look like code).
static std::string digest_of(std::string_view bytes, content_kind kind, std::size_t budget) {
  if (kind == content_kind::log) return log_digest(bytes, budget);
  if (kind == content_kind::json) return json_digest(bytes, budget);
  auto hits = search_hits_digest(bytes, budget);
  if (!hits.empty() || kind != content_kind::source) return hits;
  return source_digest(bytes, budget);
}

// The output's tool as a reference names it: the client's name, bounded and
// valid UTF-8 (it comes from the body; the reference goes into every later turn).
static std::string shown_tool(std::string_view name) {
  constexpr std::size_t max_shown_tool = 128;
  return name.empty() ? std::string("unknown") : text::bounded_utf8(name, max_shown_tool).text;
}

std::string render_reference(std::string_view bytes, const content_shape& shape, std::string_view tool_name,
                             std::string_view full_hash, const reference_config& cfg) {
  const bool tail = shape.kind == content_kind::log;  // errors are at the end of logs
  std::size_t shown = 0;
  // A content-aware digest first (at most half the budget), the preview in the rest.
  const auto budget = preview_bytes(shape, cfg.preview_tokens);
  const std::string digest = digest_of(bytes, shape.kind, budget / 2);
  auto preview = preview_slice(bytes, budget - digest.size(), tail, shown);
  auto handle = full_hash.substr(0, cfg.handle_chars);

  std::string out;
  out.reserve(preview.size() + 512);
  out += reference_opening;
  out += "tool: ";
  out += shown_tool(tool_name);
  out += " | kind: ";
  out += kind_name(shape.kind);
  out += " | " + std::to_string(shape.lines) + " lines, " + std::to_string(shape.chars) + " characters, ~" +
         std::to_string(shape.tokens) + " tokens\n";
  out += digest;
  if (preview.size() == bytes.size()) {
    out += "preview (all " + std::to_string(shape.lines) + " lines):\n";
  } else {
    out += std::string("preview (") + (tail ? "last " : "first ") + std::to_string(shown) + " of " +
           std::to_string(shape.lines) + " lines" + (shown <= 1 && shape.lines <= 1 ? ", cut" : "") + "):\n";
  }
  out += preview;
  if (preview.empty() || preview.back() != '\n') out += '\n';
  out += "[end of preview]\n";
  out += "Full output: ";
  out += cfg.tool_name;
  out += "(\"";
  out += handle;
  out += "\")\n";
  out += reference_closing;
  return out;
}

std::string render_image_reference(std::string_view media_type, std::size_t bytes, std::string_view tool_name,
                                   std::string_view full_hash, const reference_config& cfg) {
  auto sub = media_type.substr(media_type.find('/') == std::string_view::npos ? 0 : media_type.find('/') + 1);
  std::string out = "[image: " + std::string(sub) + ", " + std::to_string(bytes) + " bytes]";
  out += " (from tool ";
  out += shown_tool(tool_name);
  out += "; stored by gistproxy) Retrieve: ";
  out += cfg.tool_name;
  out += "(\"";
  out += full_hash.substr(0, cfg.handle_chars);
  out += "\")";
  return out;
}

}  // namespace gistproxy::rewrite
