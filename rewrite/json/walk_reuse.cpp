#include "rewrite/json/walk_reuse.hpp"

#include <algorithm>
#include <cstring>

namespace gistproxy::rewrite::json {
namespace {

thread_local reuse_scope* innermost = nullptr;

std::size_t begin_of(const range& r) { return r.begin; }
std::size_t begin_of(const hashed_value& h) { return h.at.begin; }
std::size_t end_of(const range& r) { return r.end; }
std::size_t end_of(const hashed_value& h) { return h.at.end; }

// A nested walk over bytes an outer walk just went through learns nothing new.
template <class T>
void append(std::vector<T>& v, T item) {
  if (!v.empty() && begin_of(v.back()) == begin_of(item)) return;
  v.push_back(item);
}

template <class T>
void sort_unique(std::vector<T>& v) {
  std::sort(v.begin(), v.end(), [](const T& a, const T& b) { return begin_of(a) < begin_of(b); });
  v.erase(std::unique(v.begin(), v.end(), [](const T& a, const T& b) { return begin_of(a) == begin_of(b); }), v.end());
}

}  // namespace

void walk_record::finish() {
  sort_unique(strings);
  sort_unique(containers);
  sort_unique(hashes);
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
    : doc_(doc), previous_(previous), same_(std::min(same_bytes, doc.size())), learn_(learn), outer_(innermost) {
  innermost = this;
}

reuse_scope::~reuse_scope() { innermost = outer_; }

reuse_scope* reuse_scope::active(std::string_view doc) {
  for (auto* s = innermost; s; s = s->outer_)
    if (s->doc_.data() == doc.data() && doc.size() <= s->doc_.size()) return s;
  return nullptr;
}

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

std::optional<std::size_t> reuse_scope::string_end(std::size_t begin) {
  if (!previous_ || begin >= same_) return std::nullopt;
  if (const auto* r = find(previous_->strings, string_hint_, begin)) return r->end;
  return std::nullopt;
}

void reuse_scope::saw_string(range r) {
  if (learn_ && r.size() >= walk_record::min_string) append(learn_->strings, r);
}

std::optional<std::size_t> reuse_scope::container_end(std::size_t begin) {
  if (!previous_ || begin >= same_) return std::nullopt;
  if (const auto* r = find(previous_->containers, container_hint_, begin)) return r->end;
  return std::nullopt;
}

void reuse_scope::saw_container(range r) {
  if (learn_ && r.size() >= walk_record::min_string) append(learn_->containers, r);
}

std::optional<hashed_value> reuse_scope::hash_at(std::size_t begin) {
  if (!previous_ || begin >= same_) return std::nullopt;
  if (const auto* h = find(previous_->hashes, hash_hint_, begin)) return *h;
  return std::nullopt;
}

void reuse_scope::saw_hash(range r, std::uint64_t hash) {
  if (learn_) append(learn_->hashes, hashed_value{r, hash});
}

}  // namespace gistproxy::rewrite::json
