#include "rewrite/cache/prefix_fingerprint.hpp"

#include <functional>

#include "rewrite/json/scanner.hpp"

namespace gistproxy::rewrite {
namespace {

// Beyond this depth a value is hashed as its raw bytes (markers included):
// still deterministic, and no recursion the other side can deepen.
constexpr int max_depth = 32;

std::uint64_t mix(std::uint64_t h, std::uint64_t v) {
  // A 64-bit combine (boost::hash_combine's, widened): order matters.
  return h ^ (v + 0x9e3779b97f4a7c15ull + (h << 12) + (h >> 4));
}

std::uint64_t bytes_hash(std::string_view s) { return std::hash<std::string_view>{}(s); }

// Hashes one JSON value, without any "cache_control" member at any depth.
// Returns false on malformed JSON.
bool hash_value(json::cursor& c, int depth, std::uint64_t& h) {
  const auto k = c.peek();
  if (depth < max_depth && k == json::kind::object) {
    h = mix(h, '{');
    const bool ok = c.object([&](std::string_view key, json::cursor& v) {
                       if (key == "cache_control") return v.skip_value().has_value();
                       h = mix(h, bytes_hash(key));
                       return hash_value(v, depth + 1, h);
                     }).has_value();
    h = mix(h, '}');
    return ok;
  }
  if (depth < max_depth && k == json::kind::array) {
    h = mix(h, '[');
    const bool ok = c.array([&](std::size_t, json::cursor& v) { return hash_value(v, depth + 1, h); }).has_value();
    h = mix(h, ']');
    return ok;
  }
  auto r = c.skip_value();
  if (!r) return false;
  h = mix(h, bytes_hash(c.doc().substr(r->begin, r->size())));
  return true;
}

}  // namespace

std::optional<prefix_fingerprint> fingerprint_prefix(std::string_view body) {
  json::cursor c(body);
  if (c.peek() != json::kind::object) return std::nullopt;
  prefix_fingerprint fp;
  std::uint64_t tools = 0, system = 0, running = 0;
  bool server_side = false;
  auto ok = c.object([&](std::string_view key, json::cursor& v) {
    if (key == "tools") return hash_value(v, 0, tools);
    if (key == "system" || key == "instructions" || key == "systemInstruction") return hash_value(v, 0, system);
    if (key == "previous_response_id") {
      server_side = v.peek() != json::kind::null;
      return v.skip_value().has_value();
    }
    if (key == "messages" || key == "input" || key == "contents") {
      if (v.peek() != json::kind::array) {  // Responses' input may be one string: one message
        std::uint64_t one = 0;
        if (!hash_value(v, 0, one)) return false;
        fp.cumulative.push_back(running = mix(running, one));
        return true;
      }
      return v.array([&](std::size_t, json::cursor& m) {
                std::uint64_t one = 0;
                if (!hash_value(m, 0, one)) return false;
                fp.cumulative.push_back(running = mix(running, one));
                return true;
              })
          .has_value();
    }
    return v.skip_value().has_value();
  });
  if (!ok || server_side) return std::nullopt;
  fp.head = mix(mix(1, tools), system);
  return fp;
}

prefix_summary summary_of(const prefix_fingerprint& fp) {
  return {fp.head, std::uint32_t(fp.cumulative.size()), fp.cumulative.empty() ? 0 : fp.cumulative.back()};
}

bool extends(const prefix_summary& prev, const prefix_fingerprint& cur) {
  if (prev.head != cur.head) return false;
  if (prev.messages == 0) return true;
  return cur.cumulative.size() >= prev.messages && cur.cumulative[prev.messages - 1] == prev.all;
}

}  // namespace gistproxy::rewrite
