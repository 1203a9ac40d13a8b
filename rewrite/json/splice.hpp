// Editing a forwarded request body between page-in hops without
// re-serializing it: find top-level members, append to an array, set a member.
#pragma once

#include <optional>
#include <string>
#include <string_view>

#include <nlohmann/json_fwd.hpp>

#include "rewrite/json/scanner.hpp"

namespace gistproxy::rewrite {

struct top_level {
  std::size_t object_end = 0;                  // offset of the closing '}'
  std::optional<json::range> member(std::string_view key) const;
  std::vector<std::pair<std::string, json::range>> members;  // key → value range
};

// Reads the top-level members of a JSON object body; nullopt if it is not one.
std::optional<top_level> read_top_level(std::string_view body);

// read_top_level of a body several phases read: each read walks the whole
// body (1.1M instructions for a 200-turn Responses transcript). The body is
// read again when it is not the buffer (start and size) it was read from;
// forget() where a body is replaced in a way that could reuse that buffer.
class top_level_memo {
 public:
  const std::optional<top_level>& of(std::string_view body);
  void forget() { read_ = false; }

 private:
  const char* data_ = nullptr;
  std::size_t size_ = 0;
  bool read_ = false;
  std::optional<top_level> top_;
};

// Appends items (JSON texts, comma-joined) at the end of the array at `array`.
std::string append_to_array(std::string_view body, json::range array, const std::string& items);

// Sets member `key` to `value_json`: replaces its value, or adds it at the end.
std::string set_member(std::string_view body, const top_level& top, std::string_view key,
                       const std::string& value_json);

// Adds every number in `from` to the same path in `into` (usage objects of
// every API are numbers, possibly nested in *_details objects).
void add_numbers(nlohmann::json& into, const nlohmann::json& from);

}  // namespace gistproxy::rewrite
