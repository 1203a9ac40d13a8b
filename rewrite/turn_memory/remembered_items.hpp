// What the turn memory keeps of each conversation item between turns: the
// answers a scan found in it, reused when the next turn re-sends the item
// unchanged (turn_memory.hpp). The scan asks for them and records them
// through request_scan (wire_format.hpp); nothing else reads them.
#pragma once

#include <cstddef>
#include <cstdint>
#include <memory>
#include <string>
#include <utility>
#include <vector>

#include "rewrite/json/scanner.hpp"

namespace gistproxy::rewrite {

// Tool results some agents carry as user text instead of tool-result blocks.
enum class text_results : std::uint8_t { none, cline };

// What scanning each conversation item found: its outputs (offsets in the
// body) and the tool names its calls declared. A conversation's next turn
// re-sends the same items at the same offsets; an item wholly within the
// bytes both turns share gives the same answers, so it is not walked again
// (walk_conversation, tool_scan.hpp).
struct remembered_output {
  json::range value;
  std::size_t raw_begin = 0, raw_size = 0;
  std::string tool_name, call_id, media_type;
  bool image = false, inner = false;
};
struct remembered_item {
  json::range at;
  std::vector<remembered_output> outputs;
  std::vector<std::pair<std::string, std::string>> calls;  // call id → tool name, in the order declared
  std::size_t bytes = 0;  // its memory, counted once when recorded (the turn memory's bound)
};
struct conversation_items {
  text_results text_results_from = text_results::none;  // what the scan was asked to find
  // Ascending order of at.begin; shared, since a turn's items are mostly the previous turn's.
  std::vector<std::shared_ptr<const remembered_item>> items;
};

}  // namespace gistproxy::rewrite
