#include "rewrite/tokens/ascii_pretokenizer.hpp"

#include <array>
#include <cstdint>

namespace gistproxy::rewrite::tokens {

// As the rank files carry them (rewrite/tokens/data, from npm tiktoken 1.0.22).
const std::string_view o200k_pattern =
    R"re([^\r\n\p{L}\p{N}]?[\p{Lu}\p{Lt}\p{Lm}\p{Lo}\p{M}]*[\p{Ll}\p{Lm}\p{Lo}\p{M}]+(?i:'s|'t|'re|'ve|'m|'ll|'d)?|[^\r\n\p{L}\p{N}]?[\p{Lu}\p{Lt}\p{Lm}\p{Lo}\p{M}]+[\p{Ll}\p{Lm}\p{Lo}\p{M}]*(?i:'s|'t|'re|'ve|'m|'ll|'d)?|\p{N}{1,3}| ?[^\s\p{L}\p{N}]+[\r\n/]*|\s*[\r\n]+|\s+(?!\S)|\s+)re";
const std::string_view cl100k_pattern =
    R"re((?i:'s|'t|'re|'ve|'m|'ll|'d)|[^\r\n\p{L}\p{N}]?\p{L}+|\p{N}{1,3}| ?[^\s\p{L}\p{N}]+[\r\n]*|\s*[\r\n]+|\s+(?!\S)|\s+)re";

ascii_grammar ascii_grammar_of(std::string_view pattern) {
  if (pattern == o200k_pattern) return ascii_grammar::o200k;
  if (pattern == cl100k_pattern) return ascii_grammar::cl100k;
  return ascii_grammar::none;
}

namespace {

// What the patterns' classes are over ASCII, one bit each, so that one table
// load answers any test. A byte is in exactly one of upper, lower, digit,
// space, symbol, high.
enum : std::uint8_t {
  upper = 1,     // A-Z: \p{Lu}. ASCII has no Lt, Lm, Lo or M.
  lower = 2,     // a-z: \p{Ll}.
  digit = 4,     // 0-9: \p{N} (ASCII has no other Nd, Nl or No).
  space = 8,     // \t \n \v \f \r and ' ': Unicode White_Space, which the pretokenizer
                 // writes \s as (so not \x1C-\x1F, which are no White_Space).
  newline = 16,  // \r \n (also space).
  symbol = 32,   // [^\s\p{L}\p{N}]: punctuation, symbols, and the control characters
                 // 0x00-0x08, 0x0E-0x1F and 0x7F (neither white space, letter nor number).
  prefix = 64,   // [^\r\n\p{L}\p{N}]: a symbol, or white space other than \r and \n.
  high = 128,    // 0x80-0xFF: part of a non-ASCII character or invalid UTF-8. Such a
                 // character may be a letter, a mark, a number, white space (U+0085,
                 // U+00A0, U+2000...) or a symbol, and U+017F 'ſ' matches 's' caselessly:
                 // whenever one would decide anything, PCRE2 decides.
};

constexpr std::array<std::uint8_t, 256> make_classes() {
  std::array<std::uint8_t, 256> c{};
  for (int b = 0; b < 256; ++b) {
    std::uint8_t k = 0;
    if (b >= 0x80) k = high;
    else if (b >= 'A' && b <= 'Z') k = upper;
    else if (b >= 'a' && b <= 'z') k = lower;
    else if (b >= '0' && b <= '9') k = digit;
    else if (b == '\r' || b == '\n') k = space | newline;
    else if ((b >= 0x09 && b <= 0x0D) || b == ' ') k = space | prefix;
    else k = symbol | prefix;
    c[std::size_t(b)] = k;
  }
  return c;
}
constexpr auto classes = make_classes();

class ascii_text {
 public:
  explicit ascii_text(std::string_view t) : bytes_(reinterpret_cast<const unsigned char*>(t.data())), size_(t.size()) {}
  std::size_t size() const { return size_; }
  // The class bits of the byte at i; none past the end (the end is in no class).
  std::uint8_t at(std::size_t i) const { return i < size_ ? classes[bytes_[i]] : 0; }
  // The byte at i; 0 past the end (callers compare it with printable bytes only).
  unsigned char byte(std::size_t i) const { return i < size_ ? bytes_[i] : 0; }
  // Where the run of bytes in any of the classes `in` that starts at i ends.
  std::size_t run(std::size_t i, std::uint8_t in) const {
    while (i < size_ && (classes[bytes_[i]] & in)) ++i;
    return i;
  }

 private:
  const unsigned char* bytes_;
  std::size_t size_;
};

// The answer "PCRE2 decides": no piece is empty, so 0 is free.
constexpr std::size_t undecided = 0;
// A helper's "this alternative fails here" (the next one is tried).
constexpr std::size_t no_match = SIZE_MAX;

// (?i:'s|'t|'re|'ve|'m|'ll|'d) at i: the length matched, 0 if no alternative
// matches, -1 if the answer turns on a non-ASCII byte (caselessly, under UCP,
// 's' also matches U+017F: the byte after the apostrophe must be ASCII to
// know). The alternatives differ in their second character, so at most one
// can match and their order does not matter.
int contraction(const ascii_text& t, std::size_t i) {
  if (i >= t.size() || t.byte(i) != '\'') return 0;
  if (t.at(i + 1) & high) return -1;
  // b | 0x20 is a lower-case letter x only for x and its upper case.
  const auto second = t.byte(i + 1) | 0x20;
  auto third_is = [&](unsigned char want) {
    // No non-ASCII character matches 'e' or 'l' caselessly; PCRE2 is asked
    // all the same (a rare case), so no rule here rests on case tables.
    if (t.at(i + 2) & high) return -1;
    return (t.byte(i + 2) | 0x20) == want ? 3 : 0;
  };
  switch (second) {
    case 's': case 't': case 'm': case 'd': return 2;
    case 'r': case 'v': return third_is('e');
    case 'l': return third_is('l');
    default: return 0;
  }
}

// \p{N}{1,3} at a digit: greedy, up to three. A fourth byte is never looked
// at; a non-ASCII byte within the first three could be a number (Arabic-Indic
// digits, superscripts), so it leaves the piece to PCRE2.
std::size_t digits(const ascii_text& t, std::size_t p) {
  std::size_t d = p + 1;
  while (d < p + 3 && (t.at(d) & digit)) ++d;
  if (d < p + 3 && (t.at(d) & high)) return undecided;
  return d - p;
}

// ` ?[^\s\p{L}\p{N}]+` followed by the pattern's trailing class
// ([\r\n/]* for o200k, [\r\n]* for cl100k), at p; no_match when p is
// neither a symbol nor a space before one.
//
// The optional space is taken first; if no symbol follows it, ` ?` gives it
// back and the symbol run must start at p itself, where the space is not a
// symbol: the alternative fails. The symbol run is greedy and nothing after
// it can fail, so it is never given back; it ends at a byte that is not a
// symbol, which must be ASCII to know that. The trailing class is a set of
// ASCII bytes: a non-ASCII byte is never in it, whatever character it starts,
// so the trailing run may end at one without asking PCRE2. ('/' is a symbol,
// so o200k's trailing run starts at \r or \n, and may take '/' after one.)
std::size_t symbols(const ascii_text& t, std::size_t p, bool slash_trails) {
  const auto o = p + (t.byte(p) == ' ' ? 1 : 0);
  const auto first = t.at(o);
  if (first & high) return undecided;  // after a space: a non-ASCII symbol would follow it
  if (!(first & symbol)) return no_match;
  auto e = t.run(o, symbol);
  if (t.at(e) & high) return undecided;
  while (e < t.size() && ((t.at(e) & newline) || (slash_trails && t.byte(e) == '/'))) ++e;
  return e - p;
}

// The last three alternatives, the same in both patterns, at a white space
// byte p, over the whole white space run [p, w). The run must end at an ASCII
// byte or the end of the text: a non-ASCII character may be white space
// (U+0085, U+00A0, U+2000-U+200A, U+3000...) and would extend the run.
//
// `\s*[\r\n]+`: \s* first takes the whole run; [\r\n]+ then fails at w (not
// white space), so \s* gives back one byte at a time until [\r\n]+ can start,
// i.e. at the run's LAST \r or \n; [\r\n]+ takes it and stops at the byte after
// it (a later \r or \n would have been found first). So the piece ends just
// after the last \r or \n of the run. No \r or \n in the run: it fails.
//
// `\s+(?!\S)`: \s+ takes the whole run. At the end of the text the lookahead
// holds (there is no \S to see). Otherwise w is an ASCII non-white-space
// byte, which \S matches: \s+ gives back one byte, and the lookahead then
// sees the run's last byte, white space: it holds. So the piece is the run
// less its last byte, if that leaves one byte; a run of one byte fails.
//
// `\s+`: what is left, a run of one byte before a non-white-space byte.
std::size_t white_space(const ascii_text& t, std::size_t p) {
  std::size_t w = p, after_newline = 0;
  while (w < t.size()) {
    const auto k = t.at(w);
    if (!(k & space)) break;
    ++w;
    if (k & newline) after_newline = w;
  }
  if (t.at(w) & high) return undecided;
  if (after_newline) return after_newline - p;  // \s*[\r\n]+
  if (w == t.size()) return w - p;               // \s+(?!\S) at the end of the text
  if (w - p >= 2) return w - 1 - p;              // \s+(?!\S), one byte given back
  return 1;                                      // \s+
}

// o200k_base:
//   1 [^\r\n\p{L}\p{N}]?[\p{Lu}\p{Lt}\p{Lm}\p{Lo}\p{M}]*[\p{Ll}\p{Lm}\p{Lo}\p{M}]+(?i:'s|'t|'re|'ve|'m|'ll|'d)?
//   2 [^\r\n\p{L}\p{N}]?[\p{Lu}\p{Lt}\p{Lm}\p{Lo}\p{M}]+[\p{Ll}\p{Lm}\p{Lo}\p{M}]*(?i:'s|'t|'re|'ve|'m|'ll|'d)?
//   3 \p{N}{1,3}
//   4  ?[^\s\p{L}\p{N}]+[\r\n/]*
//   5 \s*[\r\n]+   6 \s+(?!\S)   7 \s+
std::size_t o200k_piece(const ascii_text& t, std::size_t p) {
  const auto first = t.at(p);
  if (first & high) return undecided;
  if (first & (upper | lower | prefix)) {
    // Alternatives 1 and 2 over ASCII: an optional prefix byte, upper-case
    // letters, lower-case letters. The prefix class holds no letter, so the
    // prefix is taken exactly when p is in it (giving it back cannot help:
    // then the letters would have to start at p, which is not a letter).
    const auto s = p + ((first & prefix) ? 1 : 0);
    const auto u = t.run(s, upper);
    // Upper-case letters end at u. Were u a non-ASCII letter or mark, either
    // class could go on: PCRE2 decides.
    if (t.at(u) & high) return undecided;
    if (t.at(u) & lower) {
      // 1: the lower-case run that follows, greedy. Giving back upper-case
      // letters cannot help (the lower-case run cannot start at one), and a
      // lower-case run found is never given back (only the optional
      // contraction follows).
      const auto l = t.run(u, lower);
      if (t.at(l) & high) return undecided;
      const auto c = contraction(t, l);
      return c < 0 ? undecided : l + std::size_t(c) - p;
    }
    if (u > s) {
      // 1 failed (no lower-case letter after the upper-case ones); 2: at
      // least one upper-case letter, then no lower-case one (u is none), then
      // the optional contraction.
      const auto c = contraction(t, u);
      return c < 0 ? undecided : u + std::size_t(c) - p;
    }
    // A prefix byte with no letter after it: 1 and 2 fail.
  }
  if (first & digit) return digits(t, p);
  if (const auto n = symbols(t, p, true); n != no_match) return n;
  // Every ASCII byte not taken above is white space (the test is a guard).
  return (first & space) ? white_space(t, p) : undecided;
}

// cl100k_base:
//   1 (?i:'s|'t|'re|'ve|'m|'ll|'d)
//   2 [^\r\n\p{L}\p{N}]?\p{L}+
//   3 \p{N}{1,3}
//   4  ?[^\s\p{L}\p{N}]+[\r\n]*
//   5 \s*[\r\n]+   6 \s+(?!\S)   7 \s+
std::size_t cl100k_piece(const ascii_text& t, std::size_t p) {
  const auto first = t.at(p);
  if (first & high) return undecided;
  if (t.byte(p) == '\'') {
    const auto c = contraction(t, p);
    if (c < 0) return undecided;
    if (c > 0) return std::size_t(c);
  }
  if (first & (upper | lower | prefix)) {
    // 2: the prefix is taken exactly when p is in its class (which holds no
    // letter, so giving it back cannot help), then the letter run, greedy and
    // never given back. It ends at a byte that must be ASCII to know it is no
    // letter or mark.
    const auto s = p + ((first & prefix) ? 1 : 0);
    if (t.at(s) & high) return undecided;
    if (t.at(s) & (upper | lower)) {
      const auto e = t.run(s, upper | lower);
      if (t.at(e) & high) return undecided;
      return e - p;
    }
  }
  if (first & digit) return digits(t, p);
  if (const auto n = symbols(t, p, false); n != no_match) return n;
  // Every ASCII byte not taken above is white space (the test is a guard).
  return (first & space) ? white_space(t, p) : undecided;
}

}  // namespace

std::size_t ascii_piece(ascii_grammar g, std::string_view text, std::size_t pos) {
  if (pos >= text.size()) return undecided;
  const ascii_text t(text);
  switch (g) {
    case ascii_grammar::o200k: return o200k_piece(t, pos);
    case ascii_grammar::cl100k: return cl100k_piece(t, pos);
    case ascii_grammar::none: break;
  }
  return undecided;
}

}  // namespace gistproxy::rewrite::tokens
