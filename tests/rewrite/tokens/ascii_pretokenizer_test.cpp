// The hand matcher for ASCII (rewrite/tokens/ascii_pretokenizer) against
// PCRE2 running the same pattern: the same pieces, byte for byte, for both
// built-in encodings, on each alternative's edges and on random text weighted
// toward them (letters of both cases, contractions, digit runs, white space
// runs with and without \r \n, '/', control characters) mixed with the
// non-ASCII characters that must leave the decision to PCRE2.
#include <catch2/catch.hpp>

#include <random>
#include <string>
#include <tuple>
#include <vector>

#include "rewrite/tokens/ascii_pretokenizer.hpp"
#include "rewrite/tokens/embedded_ranks.hpp"
#include "rewrite/tokens/pretokenizer.hpp"
#include "rewrite/tokens/rank_table.hpp"

using namespace gistproxy::rewrite::tokens;

namespace {

struct encoding {
  std::unique_ptr<rank_table> ranks;
  std::unique_ptr<pretokenizer> fast;       // hand matcher over ASCII, PCRE2 elsewhere
  std::unique_ptr<pretokenizer> reference;  // PCRE2 for every piece
};

const encoding& load(std::string_view name) {
  auto make = [](std::string_view n) {
    encoding e;
    e.ranks = rank_table::parse_static(*embedded_rank_data(n, nullptr), nullptr);
    if (!e.ranks) return e;
    e.fast = pretokenizer::compile(e.ranks->pattern(), nullptr);
    e.reference = pretokenizer::compile(e.ranks->pattern(), nullptr, false);
    return e;
  };
  static const encoding o200k = make("o200k_base"), cl100k = make("cl100k_base");
  return name == "o200k_base" ? o200k : cl100k;
}

std::vector<std::string> pieces(const pretokenizer& p, std::string_view text) {
  std::vector<std::string> out;
  pretokenizer::cursor c(p, text);
  std::string_view piece;
  std::size_t guard = 0;
  while (c.next(piece) && guard++ <= text.size()) out.emplace_back(piece);
  REQUIRE_FALSE(c.failed());
  return out;
}

// Printable, for failure messages: bytes outside 0x20-0x7E as \xNN.
std::string shown(std::string_view s) {
  static const char hex[] = "0123456789ABCDEF";
  std::string out;
  for (unsigned char c : s) {
    if (c >= 0x20 && c < 0x7F && c != '\\') out += char(c);
    else out += std::string("\\x") + hex[c >> 4] + hex[c & 15];
  }
  return out;
}

std::string shown(const std::vector<std::string>& ps) {
  std::string out;
  for (const auto& p : ps) out += "[" + shown(p) + "]";
  return out;
}

// The fast cursor's pieces are the reference's, and cover the text.
void same_pieces(const encoding& e, std::string_view text) {
  const auto fast = pieces(*e.fast, text);
  const auto reference = pieces(*e.reference, text);
  INFO(e.ranks->name() << " text " << shown(text) << "\n  fast      " << shown(fast) << "\n  reference "
                       << shown(reference));
  CHECK(fast == reference);
  std::string joined;
  for (const auto& p : fast) joined += p;
  CHECK(joined == text);
}

// Pure ASCII is decided by the hand matcher alone, at every piece, and the
// pieces are PCRE2's. (Without this, a matcher that always deferred to PCRE2
// would pass the comparison above.)
void decided_by_hand(const encoding& e, std::string_view text) {
  const auto reference = pieces(*e.reference, text);
  std::size_t pos = 0;
  for (const auto& expected : reference) {
    const auto n = ascii_piece(e.fast->ascii_fast_path(), text, pos);
    if (n != expected.size()) {  // the message only then: texts are long, pieces many
      FAIL(e.ranks->name() << " text " << shown(text) << " at " << pos << ": PCRE2 " << shown(expected)
                           << ", by hand " << shown(text.substr(pos, n)));
    }
    pos += n;
  }
  CHECK(pos == text.size());
}

// Weighted toward the patterns' edges.
const std::vector<std::string> ascii_atoms = {
    // letters, both cases; words in mixed case
    "a", "b", "s", "t", "e", "l", "z", "A", "B", "S", "T", "L", "Z", "hello", "World", "HTTP", "Server", "iOS",
    // contractions of every kind, both cases, and near misses
    "'s", "'S", "'t", "'T", "'re", "'RE", "'rE", "'Re", "'ve", "'VE", "'vE", "'m", "'M", "'ll", "'LL", "'lL", "'d",
    "'D", "'r", "'v", "'l", "'x", "'", "''",
    // digits
    "0", "1", "7", "42", "1234",
    // white space: each byte and runs, with and without \r \n
    " ", " ", " ", "  ", "   ", "\t", "\t\t", "\r", "\n", "\n", "\r\n", "\n\n", "\v", "\f", " \n", "\n ",
    // the slash (o200k's trailing class) and punctuation
    "/", "//", ".", ",", ";", ":", "!", "?", "-", "+", "*", "(", ")", "[", "]", "{", "}", "<", ">", "\"", "#", "$",
    "%", "&", "=", "@", "\\", "^", "_", "`", "|", "~", "...", "->", "://",
    // control characters: in no class of letters, numbers or white space
    std::string(1, '\0'), "\x01", "\x08", "\x0E", "\x1B", "\x1C", "\x1F", "\x7F"};

const std::vector<std::string> non_ascii_atoms = {
    "\xC3\xA9",          // é (Ll)
    "\xC3\x89",          // É (Lu)
    "\xC5\xBF",          // ſ U+017F: caselessly 's'
    "\xE2\x84\xAA",      // U+212A Kelvin sign: caselessly 'k'
    "\xC7\x85",          // ǅ (Lt)
    "\xCA\xB0",          // ʰ (Lm)
    "\xCC\x81",          // combining acute (Mn)
    "\xC2\xA0",          // NBSP: white space
    "\xC2\x85",          // NEL: white space
    "\xE2\x80\x80",      // U+2000: white space
    "\xE2\x80\xA8",      // U+2028: white space
    "\xE3\x80\x80",      // U+3000: white space
    "\xE1\xA0\x8E",      // U+180E: not White_Space (PCRE2's own \s has it)
    "\xD9\xA3",          // Arabic-Indic three (Nd)
    "\xC2\xB2",          // superscript two (No)
    "\xE2\x85\xA2",      // Roman numeral three (Nl)
    "\xE4\xB8\xAD",      // 中 (Lo)
    "\xE2\x82\xAC",      // € (Sc)
    "\xF0\x9F\x98\x80",  // 😀 (So)
    "\xFF",              // invalid UTF-8 from here on
    "\x80",
    "\xC3",
    "\xE2\x80",
    "\xED\xA0\x80",  // a surrogate
    "\xC0\xAF",      // overlong '/'
};

std::string random_text(std::mt19937& rng, std::size_t atoms, int non_ascii_percent) {
  std::string text;
  for (std::size_t i = 0; i < atoms; ++i) {
    if (int(rng() % 100) < non_ascii_percent) text += non_ascii_atoms[rng() % non_ascii_atoms.size()];
    else text += ascii_atoms[rng() % ascii_atoms.size()];
  }
  return text;
}

}  // namespace

TEST_CASE("the hand matcher is chosen for the two built-in patterns only, byte for byte", "[tokens]") {
  for (auto name : {"o200k_base", "cl100k_base"}) {
    const auto& e = load(name);
    REQUIRE(e.fast);
    REQUIRE(e.reference);
    CHECK(e.fast->ascii_fast_path() ==
          (std::string_view(name) == "o200k_base" ? ascii_grammar::o200k : ascii_grammar::cl100k));
    CHECK(e.reference->ascii_fast_path() == ascii_grammar::none);
  }
  CHECK(ascii_grammar_of(o200k_pattern) == ascii_grammar::o200k);
  CHECK(ascii_grammar_of(cl100k_pattern) == ascii_grammar::cl100k);
  // Any other pattern, however close, is PCRE2's alone.
  CHECK(ascii_grammar_of(std::string(o200k_pattern) + "|x") == ascii_grammar::none);
  CHECK(ascii_grammar_of(std::string(cl100k_pattern).substr(1)) == ascii_grammar::none);
  auto no_slash = std::string(o200k_pattern);
  no_slash.replace(no_slash.find("[\\r\\n/]*"), 8, "[\\r\\n]*");
  CHECK(ascii_grammar_of(no_slash) == ascii_grammar::none);
  CHECK(ascii_grammar_of("\\S+|\\s+") == ascii_grammar::none);
  auto toy = pretokenizer::compile("\\S+|\\s+", nullptr);
  REQUIRE(toy);
  CHECK(toy->ascii_fast_path() == ascii_grammar::none);
  CHECK(ascii_piece(ascii_grammar::none, "abc", 0) == 0);
  CHECK(ascii_piece(ascii_grammar::o200k, "abc", 3) == 0);
}

TEST_CASE("each alternative's edges split as PCRE2 splits them", "[tokens]") {
  const auto& o200k = load("o200k_base");
  const auto& cl100k = load("cl100k_base");
  using v = std::vector<std::string>;
  // Expected pieces, worked out from the patterns (and equal to PCRE2's).
  const std::vector<std::tuple<std::string, v, v>> cases = {
      // white space: up to the run's last \r or \n; else one byte given back before a non-space
      {"a  b", {"a", " ", " b"}, {"a", " ", " b"}},
      {"a \n\n  b", {"a", " \n\n", " ", " b"}, {"a", " \n\n", " ", " b"}},
      {"x\n \r\n \ty", {"x", "\n \r\n", " ", "\ty"}, {"x", "\n \r\n", " ", "\ty"}},
      {"x   ", {"x", "   "}, {"x", "   "}},  // at the end of the text nothing is given back
      {"x\n  ", {"x", "\n", "  "}, {"x", "\n", "  "}},
      {" 1", {" ", "1"}, {" ", "1"}},  // a single space before a non-space: \s+
      {"\t\tx", {"\t", "\tx"}, {"\t", "\tx"}},
      {"\v\fA", {"\v", "\fA"}, {"\v", "\fA"}},
      // symbols: an optional space, the run, then [\r\n/]* (o200k) or [\r\n]* (cl100k)
      {"+\n/x", {"+\n/", "x"}, {"+\n", "/x"}},
      {" ///\r\n//\n", {" ///\r\n//\n"}, {" ///\r\n", "//\n"}},
      {"  +", {" ", " +"}, {" ", " +"}},
      {"\x01\x02" "a", {"\x01\x02", "a"}, {"\x01\x02", "a"}},
      {"\x1C\x7F", {"\x1C\x7F"}, {"\x1C\x7F"}},  // 0x1C-0x1F are not White_Space
      // digits: at most three
      {"1234567", {"123", "456", "7"}, {"123", "456", "7"}},
      {"ab12", {"ab", "12"}, {"ab", "12"}},
      // letters: o200k splits case runs, cl100k does not
      {"helloWorld", {"hello", "World"}, {"helloWorld"}},
      {"HTTPServer", {"HTTPServer"}, {"HTTPServer"}},
      {"HTTP2", {"HTTP", "2"}, {"HTTP", "2"}},
      {"+A", {"+A"}, {"+A"}},
      {"(x)", {"(x", ")"}, {"(x", ")"}},
      // contractions: o200k's trail a word (any case), cl100k's stand alone
      {"don't", {"don't"}, {"don", "'t"}},
      {"DON'T", {"DON'T"}, {"DON", "'T"}},
      {"we'Re they'VE I'lL", {"we'Re", " they'VE", " I'lL"}, {"we", "'Re", " they", "'VE", " I", "'lL"}},
      {"x'sa", {"x's", "a"}, {"x", "'s", "a"}},
      {"'sa", {"'sa"}, {"'s", "a"}},
      {"it'r", {"it", "'r"}, {"it", "'r"}},
      {"it'x", {"it", "'x"}, {"it", "'x"}},
      {"a'", {"a", "'"}, {"a", "'"}},
      {" 's", {" '", "s"}, {" '", "s"}},
  };
  for (const auto& [text, o, cl] : cases) {
    INFO(shown(text));
    CHECK(shown(pieces(*o200k.reference, text)) == shown(o));
    CHECK(shown(pieces(*cl100k.reference, text)) == shown(cl));
    CHECK(shown(pieces(*o200k.fast, text)) == shown(o));
    CHECK(shown(pieces(*cl100k.fast, text)) == shown(cl));
    decided_by_hand(o200k, text);
    decided_by_hand(cl100k, text);
  }
}

TEST_CASE("a non-ASCII byte that decides a piece leaves it to PCRE2", "[tokens]") {
  const std::vector<std::string> texts = {
      "caf\xC3\xA9",                  // the lower-case run goes on
      "AB\xC3\x89" "c",               // the upper-case run goes on
      "x'\xC5\xBF",                   // o200k: 'ſ is a contraction
      "'\xC5\xBF" "a",                // cl100k: 'ſ is a contraction
      "x'\xE2\x84\xAA",               // Kelvin sign after an apostrophe
      "it'r\xC3\xA9",                 // the third byte of 're
      "x\xC2\xA0y",                   // NBSP: a prefix byte, not a letter
      "x  \xC2\xA0y",                 // the space run goes on through NBSP
      "x \xC2\x85\ny",                // NEL then a newline: the last \n is past it
      "x  \xE2\x80\x80",              // U+2000 at the end
      "x  \xE1\xA0\x8E",              // U+180E is \S: one space given back
      "x  \xFF",                      // invalid UTF-8 is not \S: the lookahead holds
      "12\xC2\xB2",                   // superscript two is \p{N}
      "1\xD9\xA3\xD9\xA3",            // Arabic-Indic digits
      "+\xE2\x82\xAC",                // a symbol run goes on
      " \xE4\xB8\xAD",                // a space before a letter
      "+\n\xC0\xAF",                  // the trailing class ends at a non-ASCII byte
      "a\xCC\x81" "b",                // a combining mark in a word
      "\xFF\xFE" "abc \x80 def",      // gaps of invalid bytes
      "\xC3",                         // truncated at the end
  };
  for (const auto& text : texts) {
    same_pieces(load("o200k_base"), text);
    same_pieces(load("cl100k_base"), text);
  }
}

TEST_CASE("random text: the hand matcher's pieces are PCRE2's, both encodings", "[tokens]") {
  std::mt19937 rng(20240611);
  for (auto name : {"o200k_base", "cl100k_base"}) {
    const auto& e = load(name);
    REQUIRE(e.fast);
    // Pure ASCII: decided by hand, every piece.
    for (int i = 0; i < 20000; ++i) decided_by_hand(e, random_text(rng, rng() % 24, 0));
    for (int i = 0; i < 1000; ++i) decided_by_hand(e, random_text(rng, 100 + rng() % 400, 0));
    // Mixed: the cursor, handing pieces back and forth, gives PCRE2's pieces.
    for (int percent : {3, 15, 50}) {
      for (int i = 0; i < 10000; ++i) same_pieces(e, random_text(rng, rng() % 24, percent));
      for (int i = 0; i < 300; ++i) same_pieces(e, random_text(rng, 100 + rng() % 400, percent));
    }
    // Any bytes at all.
    for (int i = 0; i < 5000; ++i) {
      std::string bytes(rng() % 40, '\0');
      for (auto& c : bytes) c = char(rng() % 2 ? rng() % 128 : rng());
      same_pieces(e, bytes);
    }
  }
}

TEST_CASE("long runs: one piece each, decided by hand", "[tokens]") {
  for (auto name : {"o200k_base", "cl100k_base"}) {
    const auto& e = load(name);
    for (const auto& text : {std::string(100000, ' ') + "x", std::string(100000, 'A') + "b",
                             std::string(100000, '/') + "\n\n", std::string(50000, '\n') + std::string(50000, ' '),
                             std::string(100000, '7')}) {
      decided_by_hand(e, text);
    }
    same_pieces(e, std::string(100000, ' ') + "\xC2\xA0" + "x");
  }
}
