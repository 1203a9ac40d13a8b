#include "rewrite/json/walk_reuse.hpp"

#include <algorithm>
#include <cstring>

namespace gistproxy::rewrite::json {
namespace {

std::size_t begin_of(const range& r) { return r.begin; }
std::size_t begin_of(const hashed_value& h) { return h.at.begin; }
std::size_t end_of(const range& r) { return r.end; }
std::size_t end_of(const hashed_value& h) { return h.at.end; }

template <class T>
bool before(const T& x, std::size_t b) {
  return begin_of(x) < b;
}

}  // namespace

template <class T>
void ordered_values<T>::add(const T& item) {
  const auto b = begin_of(item);
  if (items.empty() || begin_of(items.back()) < b) return items.push_back(item);
  auto it = std::lower_bound(items.begin(), items.end(), b, before<T>);
  if (it == items.end() || begin_of(*it) != b) late.push_back(item);
}

template <class T>
void ordered_values<T>::finish() {
  if (late.empty()) return;
  auto by_begin = [](const T& x, const T& y) { return begin_of(x) < begin_of(y); };
  std::sort(late.begin(), late.end(), by_begin);
  const auto middle = items.size();
  items.insert(items.end(), late.begin(), late.end());
  std::inplace_merge(items.begin(), items.begin() + std::ptrdiff_t(middle), items.end(), by_begin);
  items.erase(std::unique(items.begin(), items.end(), [](const T& x, const T& y) { return begin_of(x) == begin_of(y); }),
              items.end());
  late.clear();
}

template struct ordered_values<range>;
template struct ordered_values<hashed_value>;

void walk_record::finish() {
  strings.finish();
  containers.finish();
  hashes.finish();
}

std::size_t common_prefix(std::string_view a, std::string_view b) {
  const std::size_t n = std::min(a.size(), b.size());
  std::size_t i = 0;
  // Large blocks at memcmp speed; the block that differs is narrowed after.
  for (constexpr std::size_t block = 4096; i + block <= n && std::memcmp(a.data() + i, b.data() + i, block) == 0;)
    i += block;
  for (constexpr std::size_t step = 64; i + step <= n && std::memcmp(a.data() + i, b.data() + i, step) == 0;) i += step;
  while (i < n && a[i] == b[i]) ++i;
  return i;
}

reuse_scope::reuse_scope(std::string_view doc, const walk_record* previous, std::size_t same_bytes, walk_record* learn)
    : doc_(doc), previous_(previous), same_(std::min(same_bytes, doc.size())), learn_(learn) {}

template <class T>
const T* reuse_scope::find(const std::vector<T>& v, std::size_t& hint, std::size_t begin) const {
  // Walks go forward: the next answer is usually at or just after the last one.
  if (hint < v.size() && begin_of(v[hint]) < begin && hint + 1 < v.size() && begin_of(v[hint + 1]) == begin) ++hint;
  if (hint >= v.size() || begin_of(v[hint]) != begin) {
    auto it = std::lower_bound(v.begin(), v.end(), begin, [](const T& x, std::size_t b) { return begin_of(x) < b; });
    if (it == v.end() || begin_of(*it) != begin) return nullptr;
    hint = std::size_t(it - v.begin());
  }
  const T& found = v[hint];
  // Only what both documents share, byte for byte, is reused.
  return end_of(found) <= same_ ? &found : nullptr;
}

std::optional<std::size_t> reuse_scope::end_in(const ordered_values<range>& values, std::size_t& hint,
                                                std::size_t begin) const {
  if (!previous_ || begin >= same_) return std::nullopt;
  if (const auto* r = find(values.items, hint, begin)) return r->end;
  return std::nullopt;
}

std::optional<std::size_t> reuse_scope::string_end(std::size_t begin) {
  return previous_ ? end_in(previous_->strings, string_hint_, begin) : std::nullopt;
}

void reuse_scope::saw_string(range r) {
  if (learn_ && r.size() >= walk_record::min_string) learn_->strings.add(r);
}

std::optional<std::size_t> reuse_scope::container_end(std::size_t begin) {
  return previous_ ? end_in(previous_->containers, container_hint_, begin) : std::nullopt;
}

void reuse_scope::saw_container(range r) {
  if (learn_ && r.size() >= walk_record::min_string) learn_->containers.add(r);
}

std::optional<hashed_value> reuse_scope::hash_at(std::size_t begin) {
  if (!previous_ || begin >= same_) return std::nullopt;
  if (const auto* h = find(previous_->hashes.items, hash_hint_, begin)) return *h;
  return std::nullopt;
}

void reuse_scope::saw_hash(range r, std::uint64_t hash) {
  if (learn_) learn_->hashes.add(hashed_value{r, hash});
}

}  // namespace gistproxy::rewrite::json
