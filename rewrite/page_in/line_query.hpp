// read_blob's `query`: the model knows what it wants but not the regex. The
// blob's lines are ranked by BM25 against the query's words and the best few
// come back with their line numbers. Deterministic (ties go to the earlier
// line), linear in the blob (two passes), memory bounded by the query and the
// number of lines returned, never by the blob.
#pragma once

#include <cstddef>
#include <functional>
#include <string>
#include <string_view>
#include <vector>

namespace gistproxy::rewrite {

struct ranked_line {
  std::size_t number = 0;  // 1-based
  std::size_t offset = 0;  // of its first byte in the blob
  std::string_view text;   // without the newline
  double score = 0;
};

struct line_query_result {
  std::vector<std::string> terms;  // the query's words used (lowercased, deduplicated, at most 32)
  std::vector<ranked_line> best;   // at most `max_lines`, in line order
  std::size_t lines = 0;           // lines in the blob
  std::size_t matching = 0;        // lines holding at least one term
  bool out_of_time = false;        // stopped early: `best` ranks the lines seen
};

// Words: runs of ASCII letters and digits (and any byte >= 0x80, so
// non-English words stay whole), compared lowercased; '_' separates, so
// "cosmology" finds test_cosmology.py.
line_query_result rank_lines(std::string_view text, std::string_view query, std::size_t max_lines,
                             const std::function<bool()>& out_of_time = {});

}  // namespace gistproxy::rewrite
