// The position-preserving JSON scanner against nlohmann as an oracle: every
// valid document (within the scanner's depth limit) is accepted, a string
// unescapes to the same bytes, and each top-level member's byte range holds
// the same value nlohmann sees; json::parse_tree builds the same tree. The
// tree that keeps lone surrogates round-trips through checked::dump.
#include <nlohmann/json.hpp>

#include "rewrite/json/checked.hpp"
#include "rewrite/json/splice.hpp"
#include "rewrite/json/scanner.hpp"
#include "rewrite/json/tree.hpp"
#include "rewrite/json/wtf8_dump.hpp"

using namespace gistproxy::rewrite;

namespace {

// An answer's tree keeps lone surrogates (parse_checked): it accepts all
// nlohmann accepts, the same tree, and what checked::dump writes of any tree
// it builds reads back as that tree (a surrogate escaped back as it came).
void check_kept_surrogates(std::string_view doc) {
  if (!checked::within_depth(doc, 16)) return;
  auto kept = json::parse_tree(doc, 16, json::lone_surrogates::keep);
  if (nlohmann::json::accept(doc) && (!kept || *kept != nlohmann::json::parse(doc))) __builtin_trap();
  if (!kept) return;
  auto again = json::parse_tree(checked::dump(*kept), 16, json::lone_surrogates::keep);
  if (!again || *again != *kept) __builtin_trap();
}

}  // namespace

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
  std::string_view doc(reinterpret_cast<const char*>(data), size);
  json::cursor c(doc);
  auto range = c.skip_value();
  const bool scanner_ok = range && c.at_end();
  if (!checked::within_depth(doc, 500)) return 0;  // the scanner refuses past 512 by design
  // The scanner is a lenient validator by design (it skips at memchr speed
  // and does not check escapes, UTF-8 or control characters inside strings;
  // an invalid body is forwarded as it came). The property that matters: it
  // accepts every valid document, and sees the same values in it.
  // nlohmann's lexer reads a NUL byte as the end of input: not an oracle there.
  if (doc.find('\0') != std::string_view::npos) return 0;
  // parse_tree accepts exactly what nlohmann accepts (within its depth).
  if (checked::within_depth(doc, 16) && json::parse_tree(doc, 16).has_value() != nlohmann::json::accept(doc))
    __builtin_trap();
  check_kept_surrogates(doc);
  if (!nlohmann::json::accept(doc)) return 0;
  if (!scanner_ok) __builtin_trap();
  auto theirs = nlohmann::json::parse(doc);
  json::cursor s(doc);
  std::string ours;
  if (s.peek() == json::kind::string && s.string_value(ours) && theirs.get<std::string>() != ours) __builtin_trap();
  if (theirs.is_object()) {
    auto top = read_top_level(doc);
    if (!top) __builtin_trap();
    for (const auto& [key, value] : top->members) {
      std::size_t seen = 0;
      for (const auto& m : top->members) seen += m.first == key;
      auto it = theirs.find(key);
      // Keys with escapes are raw here and unescaped there; duplicates keep
      // the last value there: only unique plain keys are compared.
      if (seen != 1 || it == theirs.end()) continue;
      if (nlohmann::json::parse(doc.substr(value.begin, value.size()), nullptr, false) != *it) __builtin_trap();
    }
  }
  if (checked::within_depth(doc, 16)) {
    auto tree = json::parse_tree(doc, 16);
    if (!tree || *tree != theirs) __builtin_trap();
    // What nlohmann writes, the surrogate-keeping writer writes too.
    if (json::dump_wtf8(*tree) != theirs.dump()) __builtin_trap();
  }
  checked::parse(doc);
  return 0;
}
