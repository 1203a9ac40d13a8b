// Content-aware summaries at the top of a reference: the question a reader
// asks first, answered from the whole output, not only from its preview.
//   log   — counts per level, then the problem lines (errors, failures,
//           tracebacks) with their line numbers;
//   json  — the shape: top-level type, item count, keys and their types,
//           the first and last items (cut);
//   source — an outline: the definitions (functions, classes, types) with
//           their line numbers (outline_digests.cpp);
//   search hits (grep -n, rg -n output) — the files and their hit counts.
// Deterministic (a pure function of the bytes and the budget), linear in the
// output, no DOM: a 16 MiB output costs one scan. Empty when there is nothing
// worth saying; never longer than `budget_bytes`.
#pragma once

#include <cstddef>
#include <string>
#include <string_view>

namespace gistproxy::rewrite {

std::string log_digest(std::string_view bytes, std::size_t budget_bytes);
std::string json_digest(std::string_view bytes, std::size_t budget_bytes);
std::string source_digest(std::string_view bytes, std::size_t budget_bytes);
std::string search_hits_digest(std::string_view bytes, std::size_t budget_bytes);

}  // namespace gistproxy::rewrite
