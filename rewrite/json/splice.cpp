#include "rewrite/json/splice.hpp"

#include <nlohmann/json.hpp>

namespace gistproxy::rewrite {

std::optional<json::range> top_level::member(std::string_view key) const {
  for (const auto& [k, r] : members)
    if (k == key) return r;
  return std::nullopt;
}

std::optional<top_level> read_top_level(std::string_view body) {
  json::cursor c(body);
  if (c.peek() != json::kind::object) return std::nullopt;
  top_level t;
  auto whole = c.object([&](std::string_view key, json::cursor& v) {
    auto r = v.skip_value();
    if (r) t.members.emplace_back(std::string(key), *r);
    return r.has_value();
  });
  if (!whole || !c.at_end()) return std::nullopt;
  t.object_end = whole->end - 1;
  return t;
}

const std::optional<top_level>& top_level_memo::of(std::string_view body) {
  if (!read_ || body.data() != data_ || body.size() != size_) {
    top_ = read_top_level(body);
    data_ = body.data();
    size_ = body.size();
    read_ = true;
  }
  return top_;
}

std::string append_to_array(std::string_view body, json::range array, const std::string& items) {
  auto inner = body.substr(array.begin + 1, array.size() - 2);
  bool empty = inner.find_first_not_of(" \t\r\n") == std::string_view::npos;
  std::string out;
  out.reserve(body.size() + items.size() + 1);
  out.append(body.substr(0, array.end - 1));
  if (!empty) out += ',';
  out += items;
  out.append(body.substr(array.end - 1));
  return out;
}

std::string set_member(std::string_view body, const top_level& top, std::string_view key,
                       const std::string& value_json) {
  std::string out;
  if (auto r = top.member(key)) {
    out.append(body.substr(0, r->begin));
    out += value_json;
    out.append(body.substr(r->end));
    return out;
  }
  out.append(body.substr(0, top.object_end));
  out += top.members.empty() ? "\"" : ",\"";
  json::escape_into(out, key);
  out += "\":";
  out += value_json;
  out.append(body.substr(top.object_end));
  return out;
}

void add_numbers(nlohmann::json& into, const nlohmann::json& from) {
  if (!from.is_object()) return;
  if (!into.is_object()) into = nlohmann::json::object();
  for (auto it = from.begin(); it != from.end(); ++it) {
    auto& target = into[it.key()];
    if (it->is_number_integer() && (target.is_null() || target.is_number_integer())) {
      // Saturating: counts from the upstream are not trusted to stay small.
      std::int64_t sum = 0;
      if (__builtin_add_overflow(target.is_null() ? 0 : target.get<std::int64_t>(), it->get<std::int64_t>(), &sum))
        sum = INT64_MAX;
      target = sum;
    }
    else if (it->is_object())
      add_numbers(target, *it);
    else if (target.is_null())
      target = *it;
  }
}

}  // namespace gistproxy::rewrite
