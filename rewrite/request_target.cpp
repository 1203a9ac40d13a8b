#include "rewrite/request_target.hpp"

namespace gistproxy::rewrite {
namespace {

int hex_digit(char c) {
  if (c >= '0' && c <= '9') return c - '0';
  if (c >= 'a' && c <= 'f') return c - 'a' + 10;
  if (c >= 'A' && c <= 'F') return c - 'A' + 10;
  return -1;
}

char lower(char c) { return c >= 'A' && c <= 'Z' ? char(c - 'A' + 'a') : c; }

// The byte at s[i], an escape read as its byte; `i` moves past what was read.
char decoded_at(std::string_view s, std::size_t& i) {
  if (s[i] == '%' && i + 2 < s.size() && hex_digit(s[i + 1]) >= 0 && hex_digit(s[i + 2]) >= 0) {
    const char c = char(hex_digit(s[i + 1]) * 16 + hex_digit(s[i + 2]));
    i += 3;
    return c;
  }
  return s[i++];
}

query_pair pair_of(std::string_view sent) {
  const auto eq = sent.find('=');
  if (eq == std::string_view::npos) return {sent, sent, {}, false};
  return {sent, sent.substr(0, eq), sent.substr(eq + 1), true};
}

// The next non-empty '&'-separated piece of `rest`, which moves past it; empty at the end.
std::string_view next_piece(std::string_view& rest) {
  while (!rest.empty()) {
    const auto amp = rest.find('&');
    const auto piece = rest.substr(0, amp);
    rest.remove_prefix(amp == std::string_view::npos ? rest.size() : amp + 1);
    if (!piece.empty()) return piece;
  }
  return {};
}

}  // namespace

std::string percent_decoded(std::string_view encoded) {
  std::string out;
  out.reserve(encoded.size());
  for (std::size_t i = 0; i < encoded.size();) out += decoded_at(encoded, i);
  return out;
}

// Compared as it is decoded, so a hostile name costs no allocation, and
// the first byte that differs ends the comparison.
bool query_pair::named(std::string_view wanted, name_case names) const {
  std::size_t n = 0;
  for (std::size_t i = 0; i < name.size(); ++n) {
    const char c = decoded_at(name, i);
    if (n >= wanted.size()) return false;
    if (names == name_case::any ? lower(c) != lower(wanted[n]) : c != wanted[n]) return false;
  }
  return n == wanted.size();
}

query_pairs_view::iterator::iterator(std::string_view rest) : rest_(rest), done_(false) { ++*this; }

query_pairs_view::iterator& query_pairs_view::iterator::operator++() {
  const auto piece = read_ < max_query_pairs ? next_piece(rest_) : std::string_view();
  done_ = piece.empty();
  if (!done_) {
    pair_ = pair_of(piece);
    ++read_;
  }
  return *this;
}

query_pairs_view::query_pairs_view(std::string_view query) : query_(query.substr(0, query.find('#'))) {
  // Only whole pairs: a pair cut at the bound would be a value nobody sent.
  if (query_.size() <= max_query_bytes) {
    readable_ = query_;
  } else if (const auto last_whole = query_.rfind('&', max_query_bytes); last_whole != std::string_view::npos) {
    readable_ = query_.substr(0, last_whole);
  }
}

bool query_pairs_view::complete() const {
  if (readable_.size() != query_.size()) return false;
  auto rest = query_;
  for (std::size_t pairs = 0; !next_piece(rest).empty(); ++pairs)
    if (pairs == max_query_pairs) return false;
  return true;
}

query_pairs_view query_pairs(std::string_view target) { return query_pairs_view(query_of(target)); }

std::string_view query_value(std::string_view target, std::string_view name, name_case names) {
  for (const auto& pair : query_pairs(target))
    if (!pair.value.empty() && pair.named(name, names)) return pair.value;
  return {};
}

std::optional<std::string_view> first_query_value(std::string_view target, std::string_view name) {
  for (const auto& pair : query_pairs(target))
    if (pair.named(name)) return pair.value;
  return std::nullopt;
}

}  // namespace gistproxy::rewrite
