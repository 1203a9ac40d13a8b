// Hostile text through the exact tokenizer (tool outputs and page-in answers
// are counted with it): any bytes, valid UTF-8 or not, are split and merged
// without a crash, within bounds, deterministically; long pieces merge on the
// heap exactly as tiktoken's scan would; the pieces of the ASCII hand matcher
// (ascii_pretokenizer) are PCRE2's own, for both built-in patterns, and it
// decides every piece of ASCII text by itself; and a rank file built from the
// input parses or is refused, never read out of bounds.
#include <cstdint>
#include <cstdlib>
#include <iterator>
#include <memory>
#include <string>
#include <string_view>

#include "rewrite/tokens/ascii_pretokenizer.hpp"
#include "rewrite/tokens/bpe_merge.hpp"
#include "rewrite/tokens/bpe_tokenizer.hpp"
#include "rewrite/tokens/embedded_ranks.hpp"
#include "rewrite/tokens/pretokenizer.hpp"
#include "rewrite/tokens/rank_table.hpp"
#include "tests/fuzz/fuzz_input.hpp"

using namespace gistproxy::rewrite;

namespace {

const tokens::bpe_tokenizer& o200k() {
  static auto t = tokens::builtin_tokenizer("o200k_base", nullptr);
  if (!t) std::abort();
  return *t;
}

const tokens::rank_table& o200k_ranks() {
  static auto t = tokens::rank_table::parse_static(*tokens::embedded_rank_data("o200k_base", nullptr), nullptr);
  if (!t) std::abort();
  return *t;
}

// An encoding's pattern compiled twice: with the hand matcher over ASCII, and
// PCRE2 alone (the reference).
struct split_pair {
  std::unique_ptr<tokens::pretokenizer> fast, reference;
};

const split_pair& splits(bool o200k) {
  auto make = [](std::string_view name, tokens::ascii_grammar expected) {
    auto ranks = tokens::rank_table::parse_static(*tokens::embedded_rank_data(name, nullptr), nullptr);
    if (!ranks) std::abort();
    split_pair s{tokens::pretokenizer::compile(ranks->pattern(), nullptr),
                 tokens::pretokenizer::compile(ranks->pattern(), nullptr, false)};
    if (!s.fast || !s.reference || s.fast->ascii_fast_path() != expected) std::abort();
    return s;
  };
  static const split_pair o = make("o200k_base", tokens::ascii_grammar::o200k);
  static const split_pair cl = make("cl100k_base", tokens::ascii_grammar::cl100k);
  return o200k ? o : cl;
}

// The same pieces from both cursors, every byte in one; and where the rest of
// the text is ASCII the hand matcher alone gives each piece.
void same_pieces(const split_pair& s, std::string_view text) {
  std::size_t ascii_from = text.size();  // the rest of the text from here on is ASCII
  while (ascii_from > 0 && static_cast<unsigned char>(text[ascii_from - 1]) < 0x80) --ascii_from;
  tokens::pretokenizer::cursor fast(*s.fast, text), reference(*s.reference, text);
  std::string_view a, b;
  std::size_t pos = 0;
  for (;;) {
    const bool more = reference.next(b);
    if (fast.next(a) != more) std::abort();
    if (!more) break;
    if (a.data() != b.data() || a.size() != b.size() || b.data() != text.data() + pos) std::abort();
    const auto by_hand = tokens::ascii_piece(s.fast->ascii_fast_path(), text, pos);
    if (by_hand != 0 && by_hand != b.size()) std::abort();
    if (by_hand == 0 && pos >= ascii_from) std::abort();
    pos += b.size();
  }
  if (fast.failed() || reference.failed() || pos != text.size()) std::abort();
}

// The input read as a string of atoms, one per byte: the pieces the patterns'
// edges turn on (contractions of either case, runs of white space with and
// without \r \n, '/', control characters) and the non-ASCII characters that
// must leave a decision to PCRE2 ('ſ' after an apostrophe, white space, digits,
// letters and marks of other scripts, invalid UTF-8), which raw bytes reach
// only by luck.
std::string atoms(std::string_view in) {
  static constexpr std::string_view table[] = {
      "a", "s", "Z", "hello", "World", "HTTP", "'", "'s", "'S", "'t", "'re", "'RE", "'ve", "'Ve", "'m", "'ll",
      "'lL", "'d", "'D", "'r", "'v", "'l", "0", "7", "42", " ", " ", "  ", "\t", "\r", "\n", "\r\n", "\v", "\f",
      "/", "//", ".", "-", "+", "\"", "\\", std::string_view("\0", 1), "\x01", "\x1C", "\x1F", "\x7F",
      "\xC3\xA9", "\xC3\x89", "\xC5\xBF", "\xE2\x84\xAA", "\xC7\x85", "\xCA\xB0", "\xCC\x81", "\xC2\xA0",
      "\xC2\x85", "\xE2\x80\x80", "\xE2\x80\xA8", "\xE3\x80\x80", "\xE1\xA0\x8E", "\xD9\xA3", "\xC2\xB2",
      "\xE4\xB8\xAD", "\xE2\x82\xAC", "\xF0\x9F\x98\x80", "\xFF", "\x80", "\xC3", "\xED\xA0\x80"};
  std::string out;
  for (unsigned char b : in.substr(0, 4096)) out += table[b % std::size(table)];
  return out;
}

}  // namespace

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
  gistproxy::fuzz::input in(data, size);
  const auto mode = in.byte();
  const auto text = in.rest();
  if (mode % 3 == 0) {
    const auto n = o200k().estimate(text, content_kind::text);
    if (n > text.size() || (n == 0 && !text.empty())) std::abort();
    if (o200k().estimate(text, content_kind::text) != n) std::abort();
    const auto spelled = atoms(text);
    for (bool o200k : {true, false}) {
      same_pieces(splits(o200k), text);
      same_pieces(splits(o200k), spelled);
    }
  } else if (mode % 3 == 1) {
    // A piece as long as the input: heap (over 128 bytes) against scan.
    tokens::merge_scratch scratch;
    const auto piece = text.substr(0, 4096);
    const auto counted = tokens::count_piece_tokens(o200k_ranks(), piece, scratch);
    const auto split = tokens::split_piece(o200k_ranks(), piece);
    if (counted != (split.empty() ? 0 : split.size() - 1)) std::abort();
  } else {
    std::string error;
    auto t = tokens::rank_table::parse(std::string(text), &error);
    if (t) (void)t->rank_of(text.substr(0, 8));
  }
  return 0;
}
