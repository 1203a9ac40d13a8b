#include "rewrite/dialects/tool_scan.hpp"

#include "rewrite/dialects/text_fields.hpp"

#include <algorithm>
#include <utility>

namespace gistproxy::rewrite {
namespace {

bool is_text_type(std::string_view t) { return t == "text" || t == "input_text" || t == "output_text"; }

// One element of a content array.
bool collect_part(json::cursor& e, std::string_view tool_name, std::string_view call_id, bool images,
                  request_scan& out) {
  if (e.peek() != json::kind::object) return e.skip_value().has_value();
  std::string type;
  std::optional<json::range> text;
  std::optional<json::range> source;
  auto block = e.object([&](std::string_view key, json::cursor& v) {
    if (key == "type" && v.peek() == json::kind::string) return v.string_value(type);
    auto r = v.skip_value();
    if (r && key == "text" && v.doc()[r->begin] == '"') text = r;
    if (r && key == "source") source = r;
    return r.has_value();
  });
  if (!block) return false;
  auto doc = e.doc();
  if (is_text_type(type) && text) {
    tool_output o;
    o.order = out.outputs.size();
    o.tool_name = out.keep(tool_name);
    o.call_id = out.keep(call_id);
    o.value = *text;
    o.raw = doc.substr(text->begin + 1, text->size() - 2);
    out.outputs.push_back(std::move(o));
  } else if (images && type == "image" && source) {
    std::string source_type, media_type;
    std::optional<json::range> data;
    json::cursor s(doc.up_to(source->end), source->begin);
    bool ok = s.object([&](std::string_view key, json::cursor& v) {
                 if (key == "type" && v.peek() == json::kind::string) return v.string_value(source_type);
                 if (key == "media_type" && v.peek() == json::kind::string) return v.string_value(media_type);
                 auto r = v.skip_value();
                 if (r && key == "data" && doc[r->begin] == '"') data = r;
                 return r.has_value();
               }).has_value();
    if (ok && source_type == "base64" && data) {
      tool_output o;
      o.order = out.outputs.size();
      o.tool_name = out.keep(tool_name);
      o.call_id = out.keep(call_id);
      o.value = *block;
      o.raw = doc.substr(data->begin + 1, data->size() - 2);
      o.image = true;
      o.media_type = out.keep(media_type);
      out.outputs.push_back(std::move(o));
    }
  }
  return true;
}

// A text part: its escaped contents and range, when the part is a string.
struct text_part {
  json::range value;
  std::string_view raw;
};

std::optional<text_part> string_at(std::string_view doc, const json::range& r) {
  if (r.size() < 2 || doc[r.begin] != '"') return std::nullopt;
  return text_part{r, doc.substr(r.begin + 1, r.size() - 2)};
}

void add_text_output(request_scan& out, std::string tool, const json::range& value, std::string_view raw, bool inner) {
  tool_output o;
  o.order = out.outputs.size();
  o.tool_name = out.keep(tool);
  o.value = value;
  o.raw = raw;
  o.inner = inner;
  out.outputs.push_back(std::move(o));
}

// Where the first escaped newline (\n) starts in raw JSON string text, or
// npos. Escapes are read pair by pair: in C:\\Users\\me\\node_modules the
// "\\n" is an escaped backslash followed by 'n', not a newline.
std::size_t first_escaped_newline(std::string_view raw) {
  for (std::size_t i = 0; i + 1 < raw.size(); ++i) {
    if (raw[i] != '\\') continue;
    if (raw[i + 1] == 'n') return i;
    ++i;  // the escaped character: never the start of another escape
  }
  return std::string_view::npos;
}

// A text that starts with a header line: the output is what follows the
// newline, inside the same JSON string. The header is matched on its decoded
// text and must be escaped exactly as we would escape it (else it stays inline).
void try_header_and_output(request_scan& out, const text_part& t) {
  auto nl = first_escaped_newline(t.raw);
  if (nl == std::string_view::npos || nl > 4096) return;
  std::string header;
  if (!json::unescape(t.raw.substr(0, nl), header)) return;
  auto tool = cline_header_tool(header);
  if (tool.empty()) return;
  std::string escaped;
  json::escape_into(escaped, header);
  if (escaped != t.raw.substr(0, nl)) return;
  const auto start = nl + 2;  // after the escaped newline
  if (start >= t.raw.size()) return;
  add_text_output(out, std::move(tool), {t.value.begin + 1 + start, t.value.end - 1}, t.raw.substr(start), true);
}

// One element of a user message's content array: false when it does not
// parse; `text` set when it is a text part whose text is a string.
bool read_text_part(json::cursor& e, std::optional<text_part>& text) {
  if (e.peek() != json::kind::object) return e.skip_value().has_value();
  std::string type;
  std::optional<json::range> value;
  bool ok = e.object([&](std::string_view key, json::cursor& v) {
               if (key == "type" && v.peek() == json::kind::string) return v.string_value(type);
               auto r = v.skip_value();
               if (r && key == "text") value = r;
               return r.has_value();
             }).has_value();
  if (ok && is_text_type(type) && value) text = string_at(e.doc(), *value);
  return ok;
}

// The tool named when a whole text part is exactly a header, else empty.
std::string whole_text_header(const text_part& t) {
  std::string whole;
  if (t.raw.size() > 4096 || !json::unescape(t.raw, whole)) return {};
  return cline_header_tool(whole);
}

}  // namespace

std::string cline_header_tool(std::string_view line) {
  if (line.size() < 11 || line.front() != '[' || !line.ends_with("] Result:")) return {};
  std::size_t n = 1;
  while (n < line.size() && ((line[n] >= 'a' && line[n] <= 'z') || line[n] == '_')) ++n;
  if (n == 1) return {};
  const auto name = line.substr(1, n - 1);
  const auto rest = line.substr(n, line.size() - n - 9);  // between the name and "] Result:"
  if (!rest.empty() && !(rest.starts_with(" for '") && rest.size() >= 7 && rest.ends_with("'"))) return {};
  if (line.find('\n') != std::string_view::npos || line.find('\r') != std::string_view::npos) return {};
  return std::string(name);
}

bool collect_text_tool_results(json::cursor& c, request_scan& out) {
  const auto doc = c.doc();
  if (c.peek() == json::kind::string) {
    auto r = c.skip_value();
    if (!r) return false;
    if (auto t = string_at(doc, *r)) try_header_and_output(out, *t);
    return true;
  }
  if (c.peek() != json::kind::array) return c.skip_value().has_value();
  std::string pending_tool;  // a part that was only a header: the next text part is its output
  return c.array([&](std::size_t, json::cursor& e) {
            std::optional<text_part> t;
            if (!read_text_part(e, t)) return false;
            const auto tool = std::exchange(pending_tool, {});
            if (!t) return true;
            if (!tool.empty()) {
              add_text_output(out, tool, t->value, t->raw, false);
              return true;
            }
            pending_tool = whole_text_header(*t);
            if (pending_tool.empty()) try_header_and_output(out, *t);
            return true;
          })
      .has_value();
}

bool collect_output_content(json::cursor& c, std::string_view tool_name, std::string_view call_id, bool images,
                            request_scan& out) {
  switch (c.peek()) {
    case json::kind::string: {
      auto r = c.skip_value();
      if (!r) return false;
      tool_output o;
      o.order = out.outputs.size();
      o.tool_name = out.keep(tool_name);
      o.call_id = out.keep(call_id);
      o.value = *r;
      o.raw = c.doc().substr(r->begin + 1, r->size() - 2);
      out.outputs.push_back(std::move(o));
      return true;
    }
    case json::kind::array:
      return c.array([&](std::size_t, json::cursor& e) { return collect_part(e, tool_name, call_id, images, out); })
          .has_value();
    default:
      return c.skip_value().has_value();
  }
}

void call_directory::declare(std::string id, std::string tool) {
  if (log_) log_->emplace_back(id, tool);
  const auto& kept = owned_.emplace_front(std::move(id), std::move(tool));
  declared_.emplace_back(kept.first, kept.second);
}

void call_directory::declare_remembered(std::string_view id, std::string_view tool) {
  if (log_) log_->emplace_back(id, tool);
  declared_.emplace_back(id, tool);
}

std::string_view call_directory::tool_of(std::string_view id) const {
  const std::size_t newest = declared_.size();
  for (std::size_t i = newest; i > indexed_ && newest - i < recent; --i)
    if (declared_[i - 1].first == id) return declared_[i - 1].second;
  if (newest - indexed_ > recent) {  // older declarations not yet indexed: index them, in order
    for (; indexed_ < newest; ++indexed_) index_[declared_[indexed_].first] = declared_[indexed_].second;
  }
  auto it = index_.find(id);
  return it == index_.end() ? std::string_view{} : it->second;
}

const std::shared_ptr<const remembered_item>* known_item(const request_scan& out, std::size_t begin,
                                                         std::size_t& hint) {
  const auto* prev = out.previous_items;
  if (!prev || prev->text_results_from != out.text_results_from || begin >= out.same_bytes) return nullptr;
  const auto& items = prev->items;
  if (hint >= items.size() || items[hint]->at.begin != begin) {
    auto it = std::lower_bound(items.begin(), items.end(), begin,
                               [](const auto& i, std::size_t b) { return i->at.begin < b; });
    if (it == items.end() || (*it)->at.begin != begin) return nullptr;
    hint = std::size_t(it - items.begin());
  }
  const auto& item = items[hint++];
  return item->at.end <= out.same_bytes ? &item : nullptr;
}

std::size_t known_leading_items(const request_scan& out, std::size_t begin) {
  const auto* prev = out.previous_items;
  if (!prev || prev->text_results_from != out.text_results_from || begin >= out.same_bytes) return 0;
  const auto& items = prev->items;
  if (items.empty() || items.front()->at.begin != begin) return 0;
  return std::size_t(std::upper_bound(items.begin(), items.end(), out.same_bytes,
                                      [](std::size_t same, const auto& i) { return same < i->at.end; }) -
                     items.begin());
}

void replay_item(const remembered_item& item, std::string_view doc, request_scan& out, call_directory& calls) {
  for (const auto& [id, tool] : item.calls) calls.declare_remembered(id, tool);
  for (const auto& r : item.outputs) {
    tool_output o;
    o.order = out.outputs.size();
    o.tool_name = r.tool_name;
    o.call_id = r.call_id;
    o.value = r.value;
    o.raw = doc.substr(r.raw_begin, r.raw_size);
    o.image = r.image;
    o.media_type = r.media_type;
    o.inner = r.inner;
    out.outputs.push_back(std::move(o));
  }
}

void record_item(request_scan& out, std::string_view doc, json::range at, std::size_t first,
                 std::vector<std::pair<std::string, std::string>> calls) {
  remembered_item item{at, {}, std::move(calls)};
  for (std::size_t i = first; i < out.outputs.size(); ++i) {
    const auto& o = out.outputs[i];
    item.outputs.push_back({o.value, std::size_t(o.raw.data() - doc.data()), o.raw.size(), std::string(o.tool_name),
                            std::string(o.call_id), std::string(o.media_type), o.image, o.inner});
  }
  item.bytes = sizeof(item) + item.outputs.capacity() * sizeof(remembered_output);
  for (const auto& o : item.outputs) item.bytes += o.tool_name.capacity() + o.call_id.capacity() + o.media_type.capacity();
  for (const auto& [id, tool] : item.calls) item.bytes += id.capacity() + tool.capacity() + sizeof(id) * 2;
  out.learn_items->items.push_back(std::make_shared<const remembered_item>(std::move(item)));
}

bool collect_tools(json::cursor& c, request_scan& out) {
  if (c.peek() != json::kind::array) return c.skip_value().has_value();
  auto r = c.array([&](std::size_t, json::cursor& t) {
    if (t.peek() != json::kind::object) return t.skip_value().has_value();
    std::string name;
    auto range = t.object([&](std::string_view key, json::cursor& v) {
      if (key == "name" && v.peek() == json::kind::string) return v.string_value(name);
      if (key == "function" && v.peek() == json::kind::object) return read_string_member(v, "name", name);
      return v.skip_value().has_value();
    });
    if (range) out.tool_ranges.push_back(*range);
    if (range && !name.empty()) out.declared_tools.push_back(std::move(name));
    return range.has_value();
  });
  if (!r) return false;
  out.tools = r;
  return true;
}

// Short: it is sent with every request that offers read_blob (72-78 o200k
// tokens per API, down from ~220). How to narrow a read is in each reference,
// where the model meets it; the handle is always in the reference's call, so
// "required" is left out (a call without one gets an error it can act on);
// context_lines is still accepted.
std::string read_blob_description() { return "Read a stored tool output, as its reference says."; }

std::string read_blob_parameters_schema() {
  return R"J({"type":"object","properties":{"handle":{"type":"string"},"query":{"type":"string"},)J"
         R"J("pattern":{"type":"string"},"start_line":{"type":"integer"},"end_line":{"type":"integer"},)J"
         R"J("offset":{"type":"integer"}}})J";
}

}  // namespace gistproxy::rewrite
