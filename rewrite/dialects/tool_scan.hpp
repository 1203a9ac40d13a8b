// Scanning helpers the dialects share to find tool outputs and tools.
#pragma once

#include <forward_list>
#include <unordered_map>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

#include "rewrite/wire_format.hpp"
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

// Tool names by call id, as the conversation's calls declare them (a later
// declaration of an id wins; an unknown id names no tool). What each item
// declares is logged while it is walked, so a remembered item can declare it
// again without being walked.
//
// Declarations are kept in order and looked up from the newest: a tool result
// names a call made just before it. Only a lookup that misses the newest
// `recent` declarations indexes them all, so a long conversation replayed from
// the turn memory costs one append per call, not a map insertion.
class call_directory {
 public:
  // Walked now: the directory keeps the strings.
  void declare(std::string id, std::string tool);
  // A remembered item's strings, which outlive the walk (replay_item).
  void declare_remembered(std::string_view id, std::string_view tool);
  std::string_view tool_of(std::string_view id) const;
  void log_to(std::vector<std::pair<std::string, std::string>>* log) { log_ = log; }

 private:
  static constexpr std::size_t recent = 64;
  std::forward_list<std::pair<std::string, std::string>> owned_;  // nodes never move; empty costs nothing
  std::vector<std::pair<std::string_view, std::string_view>> declared_;  // oldest first
  mutable std::unordered_map<std::string_view, std::string_view> index_;  // declared_[0, indexed_), the latest wins
  mutable std::size_t indexed_ = 0;
  std::vector<std::pair<std::string, std::string>>* log_ = nullptr;
};

// The previous turn's record of the item at `begin`, when the previous scan
// looked for the same things and the item lies wholly within the bytes both
// bodies share; `hint` speeds up the forward walk.
const std::shared_ptr<const remembered_item>* known_item(const request_scan& out, std::size_t begin,
                                                         std::size_t& hint);
// How many of the previous turn's items, from the list's first, lie wholly
// within the bytes both turns share, when its first item began at `begin`.
// They are the list's first items now: a walk records a list's items in
// order and stops at its first failure, and these bytes are the same.
std::size_t known_leading_items(const request_scan& out, std::size_t begin);
// Adds a remembered item's outputs (pointing into `doc`) and declarations.
void replay_item(const remembered_item& item, std::string_view doc, request_scan& out, call_directory& calls);
// Records what walking one item found: outputs from index `first` on.
void record_item(request_scan& out, std::string_view doc, json::range at, std::size_t first,
                 std::vector<std::pair<std::string, std::string>> calls);

// Walks the conversation list (messages, input, contents) at `v`, noting in
// `out` its range and where its second item starts, and calls
// on_item(cursor, calls) for each item (which must consume it). An item the
// previous turn had at the same offset, within the bytes both turns share,
// is stepped over and what it held is taken from that turn's record.
template <class F>
bool walk_conversation(json::cursor& v, request_scan& out, F&& on_item) {
  call_directory calls;
  std::size_t hint = 0;
  if (out.learn_items) {
    out.learn_items->text_results_from = out.text_results_from;
    out.learn_items->items.clear();
  }
  // A turn holds about as many outputs as the previous one had items: one
  // allocation, instead of a vector of outputs regrown (and moved) while replaying.
  if (out.previous_items) out.outputs.reserve(out.outputs.size() + out.previous_items->items.size());
  std::size_t index = 0;  // of the list's items; the array's callbacks count less where items were taken whole
  auto list = v.array([&](std::size_t, json::cursor& item) {
    item.peek();  // past whitespace: the item starts here
    const std::size_t begin = item.pos();
    if (index == 0)
      if (const std::size_t taken = known_leading_items(out, begin)) {
        // The shared start of the conversation, replayed item by item but stepped over in one go.
        const auto& items = out.previous_items->items;
        for (std::size_t i = 0; i < taken; ++i) {
          replay_item(*items[i], v.doc(), out, calls);
          if (out.learn_items) out.learn_items->items.push_back(items[i]);
        }
        if (taken > 1) out.second_item_begin = items[1]->at.begin;
        index = taken;
        hint = taken;
        return item.step_to(items[taken - 1]->at.end);
      }
    if (index++ == 1) out.second_item_begin = begin;
    if (const auto* known = known_item(out, begin, hint)) {
      auto r = item.skip_value();  // the same bytes: the same extent
      if (!r || r->end != (*known)->at.end) return false;
      replay_item(**known, v.doc(), out, calls);
      if (out.learn_items) out.learn_items->items.push_back(*known);
      return true;
    }
    const std::size_t first = out.outputs.size();
    std::vector<std::pair<std::string, std::string>> declared;
    calls.log_to(out.learn_items ? &declared : nullptr);
    const bool ok = on_item(item, calls);
    calls.log_to(nullptr);
    if (ok && out.learn_items) record_item(out, v.doc(), {begin, item.pos()}, first, std::move(declared));
    return ok;
  });
  if (list) out.conversation = list;
  return list.has_value();
}

// The JSON text of the read_blob tool's parameters (a JSON Schema object).
std::string read_blob_parameters_schema();
std::string read_blob_description();

}  // namespace gistproxy::rewrite
