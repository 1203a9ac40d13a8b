// A request target's parts as sent (origin-form "/path?query"; nothing
// decoded): every layer that routes, names or logs a request reads them here,
// and every reader of the query string reads it through query_pairs().
#pragma once

#include <cstddef>
#include <cstdint>
#include <iterator>
#include <optional>
#include <string>
#include <string_view>

namespace gistproxy::rewrite {

inline std::string_view path_of(std::string_view target) { return target.substr(0, target.find('?')); }

// What follows the '?' (empty without one: no query and an empty one read alike).
inline std::string_view query_of(std::string_view target) {
  const auto q = target.find('?');
  return q == std::string_view::npos ? std::string_view() : target.substr(q + 1);
}

enum class name_case : std::uint8_t { exact, any };

// The bytes, each %XX read as its byte; a '%' that starts no escape ("%zz",
// a '%' at the end) stands for itself, as AWS and Google read it. '+' is
// itself (a form's space is the reader's to decide).
std::string percent_decoded(std::string_view encoded);

// One name=value pair of a query, every byte as sent. Names are read
// %XX-decoded (named(), decoded_name()): "%6Bey" is "key" to the API that owns
// the parameter, so it is to every reader here. Values stay as sent, and each
// reader says what it does with them: a credential is kept as sent (it names a
// tenant byte for byte), a control compares its literal ("alt=sse"), SigV4
// decodes it to encode it again, gistproxy's own service API form-decodes it.
struct query_pair {
  std::string_view sent;   // "name=value", "name" or "name=", exactly as sent
  std::string_view name;   // as sent, before the first '='
  std::string_view value;  // as sent, after the first '=' (empty without one)
  bool has_equals = false;

  // Whether the name, %XX-decoded, is `wanted`. Nothing is allocated however
  // long a hostile name is.
  bool named(std::string_view wanted, name_case names = name_case::exact) const;
  std::string decoded_name() const { return percent_decoded(name); }
  std::string decoded_value() const { return percent_decoded(value); }
};

// The query of a target as its pairs, in order, every occurrence kept ("?a=1&a=2"
// is two pairs); empty pieces ("&&") are no pair. What a fragment holds is no
// part of the query. Bounded for hostile input: only whole pairs within the
// first max_query_bytes of the query, and at most max_query_pairs of them, are
// read; complete() says whether that was all of it (the transport refuses a
// request whose query is not, so past it no reader works on a part).
// Allocates nothing: a view over the target, which must outlive it.
class query_pairs_view {
 public:
  static constexpr std::size_t max_query_bytes = 64 * 1024;
  static constexpr std::size_t max_query_pairs = 1000;

  class iterator {
   public:
    using value_type = query_pair;
    using difference_type = std::ptrdiff_t;
    iterator() = default;
    const query_pair& operator*() const { return pair_; }
    const query_pair* operator->() const { return &pair_; }
    iterator& operator++();
    iterator operator++(int) {
      auto before = *this;
      ++*this;
      return before;
    }
    bool operator==(std::default_sentinel_t) const { return done_; }

   private:
    friend class query_pairs_view;
    explicit iterator(std::string_view rest);
    std::string_view rest_;
    query_pair pair_;
    std::size_t read_ = 0;
    bool done_ = true;
  };

  explicit query_pairs_view(std::string_view query);
  iterator begin() const { return iterator(readable_); }
  std::default_sentinel_t end() const { return {}; }
  bool complete() const;

 private:
  std::string_view query_;     // up to a fragment
  std::string_view readable_;  // the whole pairs within max_query_bytes
};

// The pairs of `target`'s query (see query_pairs_view).
query_pairs_view query_pairs(std::string_view target);
inline query_pairs_view query_pairs(const char* target) { return query_pairs(std::string_view(target)); }
// A temporary string would be gone before the first pair was read.
query_pairs_view query_pairs(std::string&& target) = delete;

// The value of the query parameter `name`, as sent (not decoded), read as the
// API that owns a credential reads it: the first non-empty value counts
// ("?key=&key=K" is K). Empty when no parameter of that name has a value.
// Every reader of a credential or a token in the query string reads it here,
// so no two of them can disagree about which value a request carries.
std::string_view query_value(std::string_view target, std::string_view name, name_case names = name_case::exact);

// The value of the first parameter named `name` (exact case), as sent, empty
// or not ("?stream" and "?stream=" are present and empty); none when no
// parameter has that name. How gistproxy's controls and the APIs' options
// (Responses' stream, limit) are read.
std::optional<std::string_view> first_query_value(std::string_view target, std::string_view name);

}  // namespace gistproxy::rewrite
