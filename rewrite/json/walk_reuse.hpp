// Walking a document that starts with the same bytes as one walked before:
// turn N+1 of a conversation re-sends turn N's body, and every walk of it
// (inspect, scan, the prefix check) would otherwise scan and hash the same
// megabytes again.
//
// A walk_record is what walks of one document learned: where its long
// strings end, and the hashes of the values the prefix check hashed. A
// reuse_scope, handed to the cursors that walk a new document (as a
// json::document: the bytes and their reuse), answers from the previous
// document's record for any value that lies wholly within the bytes both
// documents share (`same_bytes`, found by memcmp): a value's extent and hash
// depend on its own bytes only, so the answer is exactly what scanning would
// find. Nothing is reused past those bytes. A cursor handed plain bytes, or a
// scope made for another buffer, scans as always.
#pragma once

#include <cstddef>
#include <cstdint>
#include <optional>
#include <string_view>
#include <vector>

#include "rewrite/json/scanner.hpp"

namespace gistproxy::rewrite::json {

struct hashed_value {
  range at;
  std::uint64_t hash = 0;
};

// Values in ascending order of where they begin. A walk goes forward and
// appends; a later walk over the same bytes finds what an earlier one
// recorded (binary search) and sets aside what that one did not see, merged
// in by finish(): no walk order costs more than a sort.
template <class T>
struct ordered_values {
  std::vector<T> items, late;
  void add(const T& item);
  void finish();
  std::size_t size() const { return items.size() + late.size(); }
};

// What walks of one document learned; finish() once its walks are over,
// before the next document's walks look anything up in it.
struct walk_record {
  static constexpr std::size_t min_string = 64;
  ordered_values<range> strings;        // strings of at least min_string bytes
  ordered_values<range> containers;     // objects and arrays a walk skipped whole (as long)
  ordered_values<hashed_value> hashes;  // values the prefix check hashed
  void finish();
  std::size_t bytes() const {
    return (strings.size() + containers.size()) * sizeof(range) + hashes.size() * sizeof(hashed_value);
  }
};

class reuse_scope {
 public:
  // `previous` may be null (nothing to reuse, only learn); `learn` may be
  // null (nothing recorded). Both must outlive the scope.
  reuse_scope(std::string_view doc, const walk_record* previous, std::size_t same_bytes, walk_record* learn);
  reuse_scope(const reuse_scope&) = delete;
  reuse_scope& operator=(const reuse_scope&) = delete;

  // Whether this scope answers for `doc`: its bytes or a prefix of them
  // (the same first byte address and no more bytes).
  bool covers(std::string_view doc) const { return doc.data() == doc_.data() && doc.size() <= doc_.size(); }
  // The scope's bytes, handed to the cursors that walk them.
  document bytes() { return document(doc_, this); }

  // Where the string opening at `begin` ends (after its closing quote), when
  // the previous document had it and both documents share all its bytes.
  std::optional<std::size_t> string_end(std::size_t begin);
  void saw_string(range r);
  // The same for an object or array skipped whole.
  std::optional<std::size_t> container_end(std::size_t begin);
  void saw_container(range r);
  // The hash of the value at `begin`, under the same conditions.
  std::optional<hashed_value> hash_at(std::size_t begin);
  void saw_hash(range r, std::uint64_t hash);

 private:
  template <class T>
  const T* find(const std::vector<T>& v, std::size_t& hint, std::size_t begin) const;
  std::optional<std::size_t> end_in(const ordered_values<range>& values, std::size_t& hint, std::size_t begin) const;

  std::string_view doc_;
  const walk_record* previous_;
  std::size_t same_;
  walk_record* learn_;
  std::size_t string_hint_ = 0, container_hint_ = 0, hash_hint_ = 0;
};

// Bytes two documents share at their start.
std::size_t common_prefix(std::string_view a, std::string_view b);

}  // namespace gistproxy::rewrite::json
