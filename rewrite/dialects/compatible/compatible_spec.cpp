// --compatible NAME=PREFIX=URL, read and checked against the built-in
// families: a provider beside them must take none of their paths.
#include "rewrite/dialects/compatible/compatible_endpoint.hpp"
#include "rewrite/endpoint_registry.hpp"

namespace gistproxy::rewrite {
namespace {

constexpr std::size_t max_name = 32, max_prefix = 128;

bool name_char(char c) { return (c >= 'a' && c <= 'z') || (c >= '0' && c <= '9') || c == '-' || c == '_'; }

// RFC 3986's unreserved characters: a prefix is compared byte for byte, so
// nothing in it may have a second spelling (%XX).
bool prefix_char(char c) {
  return (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || (c >= '0' && c <= '9') || c == '-' || c == '_' ||
         c == '.' || c == '~';
}

std::optional<std::string> name_problem(std::string_view name) {
  if (name.empty() || name.size() > max_name) return "NAME must be 1 to 32 characters";
  for (char c : name)
    if (!name_char(c)) return "NAME may hold only lowercase letters, digits, '-' and '_'";
  return std::nullopt;
}

std::optional<std::string> prefix_problem(std::string_view prefix) {
  if (prefix.size() < 2 || prefix.size() > max_prefix || prefix.front() != '/')
    return "PREFIX must start with '/' and be 2 to 128 characters";
  std::string_view rest = prefix.substr(1);
  while (true) {
    const auto slash = rest.find('/');
    const auto segment = rest.substr(0, slash);
    if (segment.empty() || segment == "." || segment == "..") return "PREFIX must be '/'-separated names, no trailing '/'";
    for (char c : segment)
      if (!prefix_char(c)) return "PREFIX may hold only letters, digits, '-', '_', '.', '~' and '/'";
    if (slash == std::string_view::npos) return std::nullopt;
    rest.remove_prefix(slash + 1);
  }
}

}  // namespace

std::optional<compatible_provider> parse_compatible(std::string_view spec, std::string& error) {
  const auto first = spec.find('=');
  const auto second = first == std::string_view::npos ? first : spec.find('=', first + 1);
  if (second == std::string_view::npos) {
    error = "expected NAME=PREFIX=URL (e.g. groq=/groq/v1=https://api.groq.com/openai/v1)";
    return std::nullopt;
  }
  compatible_provider p{std::string(spec.substr(0, first)), std::string(spec.substr(first + 1, second - first - 1)),
                        std::string(spec.substr(second + 1))};
  if (auto problem = compatible_problem(p, {})) {
    error = *problem;
    return std::nullopt;
  }
  return p;
}

std::optional<std::string> compatible_problem(const compatible_provider& p, std::span<const compatible_provider> before) {
  if (auto problem = name_problem(p.name)) return problem;
  if (auto problem = prefix_problem(p.prefix)) return problem;
  if (p.url.empty()) return "URL is empty";
  const auto& builtin = endpoint_registry::builtin();
  if (builtin.family_named(p.name)) return "NAME '" + p.name + "' is a built-in provider's";
  const std::string folder = p.prefix + "/";
  for (const auto* f : builtin.families()) {
    const auto mount = f->gateway_mount;
    if (!mount.empty() && (p.prefix == mount || p.prefix.starts_with(std::string(mount) + "/")))
      return "PREFIX " + p.prefix + " lies under the gateway mount " + std::string(mount) + " of the " +
             std::string(f->name) + " APIs";
    // A prefix above a built-in folder (or the same) would take that API's paths.
    for (const auto& claim : f->paths)
      if (claim.prefix == p.prefix || claim.prefix.starts_with(folder))
        return "PREFIX " + p.prefix + " would take the " + std::string(f->name) + " APIs' paths (" +
               std::string(claim.prefix) + ")";
  }
  for (const auto& o : before) {
    if (o.name == p.name) return "NAME '" + p.name + "' is given twice";
    if (o.prefix == p.prefix) return "PREFIX " + p.prefix + " is given twice (" + o.name + ", " + p.name + ")";
  }
  return std::nullopt;
}

}  // namespace gistproxy::rewrite
