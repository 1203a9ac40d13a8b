// Scanning helpers the dialects share to find tool outputs and tools.
#pragma once

#include <map>
#include <string>
#include <string_view>

#include "rewrite/dialect.hpp"
#include "rewrite/json/scanner.hpp"

namespace gistproxy::rewrite {

// Consumes a tool output's content value. A string is one candidate; in an
// array, each text part's "text" string is one (types text, input_text,
// output_text); Anthropic image blocks with base64 data become image
// candidates when `images` is set. Other parts are left alone.
bool collect_output_content(json::cursor& c, std::string_view tool_name, std::string_view call_id, bool images,
                            request_scan& out);

// Cline (and Roo Code, Kilo Code) put a tool's result in the user message as
// text: a header line `[NAME] Result:` or `[NAME for 'ARG'] Result:` (NAME is
// lowercase letters and underscores; ARG anything up to the line's final
// `'] Result:`), then the output, either in the next text part or after a
// newline in the same text. Consumes a user message's content value and adds
// each such output (the header stays; only what follows it is a candidate).
bool collect_text_tool_results(json::cursor& c, request_scan& out);

// The tool name if `line` is exactly a Cline tool-result header, else empty.
std::string cline_header_tool(std::string_view line);

// Consumes a "tools" array value, recording its range and the declared names
// (a tool's "name", or "function.name" for Chat Completions).
bool collect_tools(json::cursor& c, request_scan& out);

// Walks the conversation list (messages, input, contents) at `v`, noting in
// `out` its range and where its second item starts, and calls on_item(cursor)
// for each item (which must consume it).
template <class F>
bool walk_conversation(json::cursor& v, request_scan& out, F&& on_item) {
  auto list = v.array([&](std::size_t index, json::cursor& item) {
    if (index == 1) out.second_item_begin = item.pos();
    return on_item(item);
  });
  if (list) out.conversation = list;
  return list.has_value();
}

// The JSON text of the read_blob tool's parameters (a JSON Schema object).
std::string read_blob_parameters_schema();
std::string read_blob_description();

}  // namespace gistproxy::rewrite
