// Inside config: the option table's row and the value parsers its rows
// share, so a coherent group of options can live in its own file
// (config_listeners.cpp) while config.cpp keeps the one table and parser.
#pragma once

#include <cstdlib>
#include <functional>
#include <optional>
#include <string>
#include <vector>

#include "proxy/runtime/config.hpp"

namespace gistproxy::proxy {

struct option {
  std::string name;
  const char* value_name;  // nullptr for a boolean switch
  std::string help;
  std::function<bool(config&, const std::string&)> set;
  // What a message says of a bad value (default: the value itself); the
  // egress proxy's says why, and never shows its credentials.
  std::function<std::string(const std::string&)> explain = {};
};

// strtoull would take " 5", "+5" and "-1" (as 2^64-1): digits only.
template <class T>
bool set_uint(T& field, const std::string& v, unsigned long long lo, unsigned long long hi) {
  auto n = whole_number(v);
  if (!n || *n < lo || *n > hi) return false;
  field = T(*n);
  return true;
}

inline bool set_bytes(std::uint64_t& field, const std::string& v) {
  auto b = parse_bytes(v);
  if (b) field = *b;
  return b.has_value();
}

template <class T>
bool set_duration(T& field, const std::string& v) {
  auto d = parse_duration(v);
  if (d) field = *d;
  return d.has_value();
}

// "on" / "off" (or "true" / "false"); false on anything else.
inline bool set_switch(bool& field, const std::string& v) {
  if (v != "on" && v != "off" && v != "true" && v != "false") return false;
  field = v == "on" || v == "true";
  return true;
}

// The store's options (config_store.cpp) and offloading's (config_offload.cpp).
std::vector<option> store_options();
std::vector<option> offload_options();

// The listeners' options: --listen, --threads, --max-body, the client
// timeouts, --max-connections, and the admin listener's (--admin-*).
std::vector<option> listener_options();

// "a,b,c" into `out` (names or addresses, no ports); false when malformed.
bool parse_host_list(std::vector<std::string>& out, const std::string& v);

// What the listeners' options must satisfy together, after every source was
// read: why not, or nullopt.
std::optional<std::string> listeners_problem(const config& c);

}  // namespace gistproxy::proxy
