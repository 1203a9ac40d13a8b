#include "rewrite/page_in/line_query.hpp"

#include <algorithm>
#include <cctype>
#include <cmath>

namespace gistproxy::rewrite {
namespace {

constexpr std::size_t max_terms = 32;
constexpr std::size_t max_term_bytes = 64;
constexpr std::size_t check_every_lines = 4096;
constexpr double k1 = 1.2, b = 0.75;

bool word_byte(unsigned char c) { return std::isalnum(c) || c >= 0x80; }
char lower(unsigned char c) { return c < 0x80 ? char(std::tolower(c)) : char(c); }

// Calls on_word(lowercased word) for each word of `s`; words over
// max_term_bytes are cut there (they can only match a query word as long).
template <class F>
void for_each_word(std::string_view s, std::string& scratch, F&& on_word) {
  std::size_t i = 0;
  while (i < s.size()) {
    while (i < s.size() && !word_byte(static_cast<unsigned char>(s[i]))) ++i;
    const std::size_t start = i;
    while (i < s.size() && word_byte(static_cast<unsigned char>(s[i]))) ++i;
    if (i == start) continue;
    scratch.assign(s.substr(start, std::min(i - start, max_term_bytes)));
    for (auto& c : scratch) c = lower(static_cast<unsigned char>(c));
    on_word(scratch);
  }
}

// Calls on_line(number, offset, text) for each line; false stops.
template <class F>
void for_each_line(std::string_view s, F&& on_line) {
  std::size_t start = 0, number = 1;
  while (start < s.size()) {
    auto end = s.find('\n', start);
    if (end == std::string_view::npos) end = s.size();
    if (!on_line(number, start, s.substr(start, end - start))) return;
    start = end + 1;
    ++number;
  }
}

// The term's index in `terms` (a short list), or terms.size().
std::size_t term_index(const std::vector<std::string>& terms, const std::string& word) {
  return std::size_t(std::find(terms.begin(), terms.end(), word) - terms.begin());
}

}  // namespace

line_query_result rank_lines(std::string_view text, std::string_view query, std::size_t max_lines,
                             const std::function<bool()>& out_of_time) {
  line_query_result r;
  std::string word;
  for_each_word(query, word, [&](const std::string& w) {
    if (r.terms.size() < max_terms && term_index(r.terms, w) == r.terms.size()) r.terms.push_back(w);
  });
  if (r.terms.empty() || max_lines == 0) return r;

  // Pass 1: each term's document frequency (lines holding it) and the mean line length in words.
  std::vector<std::size_t> df(r.terms.size(), 0), tf(r.terms.size(), 0);
  std::size_t total_words = 0, scanned = 0;
  for_each_line(text, [&](std::size_t, std::size_t, std::string_view line) {
    if (++scanned % check_every_lines == 0 && out_of_time && out_of_time()) {
      r.out_of_time = true;
      return false;
    }
    std::fill(tf.begin(), tf.end(), 0);
    for_each_word(line, word, [&](const std::string& w) {
      ++total_words;
      if (auto t = term_index(r.terms, w); t < tf.size()) ++tf[t];
    });
    for (std::size_t t = 0; t < tf.size(); ++t) df[t] += tf[t] > 0;
    ++r.lines;
    return true;
  });
  const std::size_t lines = r.lines;
  if (lines == 0) return r;
  const double mean_words = std::max(1.0, double(total_words) / double(lines));
  std::vector<double> idf(r.terms.size());
  for (std::size_t t = 0; t < idf.size(); ++t)
    idf[t] = std::log(1.0 + (double(lines) - double(df[t]) + 0.5) / (double(df[t]) + 0.5));

  // Pass 2: score each line, keep the best few in a heap with the worst kept
  // on top (ties: the earlier line is the better).
  auto better = [](const ranked_line& a, const ranked_line& x) {
    return a.score != x.score ? a.score > x.score : a.number < x.number;
  };
  std::vector<ranked_line> heap;
  for_each_line(text, [&](std::size_t number, std::size_t offset, std::string_view line) {
    if (number > lines) return false;  // pass 1 stopped early
    std::fill(tf.begin(), tf.end(), 0);
    std::size_t words = 0;
    for_each_word(line, word, [&](const std::string& w) {
      ++words;
      if (auto t = term_index(r.terms, w); t < tf.size()) ++tf[t];
    });
    double score = 0;
    for (std::size_t t = 0; t < tf.size(); ++t)
      if (tf[t]) score += idf[t] * double(tf[t]) * (k1 + 1) / (double(tf[t]) + k1 * (1 - b + b * double(words) / mean_words));
    if (score <= 0) return true;
    ++r.matching;
    ranked_line candidate{number, offset, line, score};
    if (heap.size() < max_lines) {
      heap.push_back(candidate);
      std::push_heap(heap.begin(), heap.end(), better);
    } else if (better(candidate, heap.front())) {
      std::pop_heap(heap.begin(), heap.end(), better);
      heap.back() = candidate;
      std::push_heap(heap.begin(), heap.end(), better);
    }
    return true;
  });
  std::sort(heap.begin(), heap.end(), [](const ranked_line& a, const ranked_line& x) { return a.number < x.number; });
  r.best = std::move(heap);
  return r;
}

}  // namespace gistproxy::rewrite
