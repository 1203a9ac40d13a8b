// The mock upstream's reading of a request's target and header names.
#pragma once

#include <cctype>
#include <map>
#include <string>
#include <string_view>

#include "rewrite/request_target.hpp"

namespace gistproxy::testing {

// The query's parameters (no %-decoding: the tests' own queries need none).
inline std::map<std::string, std::string> query_of(std::string_view target) {
  std::map<std::string, std::string> q;
  std::string_view rest = rewrite::query_of(target);
  while (!rest.empty()) {
    auto amp = rest.find('&');
    auto pair = rest.substr(0, amp);
    auto eq = pair.find('=');
    q[std::string(pair.substr(0, eq))] = eq == std::string_view::npos ? "" : std::string(pair.substr(eq + 1));
    if (amp == std::string_view::npos) break;
    rest = rest.substr(amp + 1);
  }
  return q;
}

// A numeric parameter, or `fallback` when absent.
inline long q_int(const std::map<std::string, std::string>& q, const char* key, long fallback) {
  auto it = q.find(key);
  return it == q.end() ? fallback : std::stol(it->second);
}

// Header names as the mock records them.
inline std::string lowercase(std::string_view s) {
  std::string out(s);
  for (auto& c : out) c = char(std::tolower(static_cast<unsigned char>(c)));
  return out;
}


}  // namespace gistproxy::testing
