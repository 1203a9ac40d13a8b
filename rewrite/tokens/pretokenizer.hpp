// Splits text into the pieces BPE merges within, with the encoding's own
// pre-tokenisation regex run by PCRE2 (JIT-compiled, UTF + Unicode
// properties). The pattern comes from the rank file, never from the outside;
// the text is hostile, so matching is bounded and a failure is reported, not
// thrown.
//
// tiktoken runs the pattern with Rust's regex engines, where \s is Unicode
// White_Space; PCRE2's \s also matches U+180E (Mongolian vowel separator), so
// \s and \S are rewritten to White_Space's explicit ranges before compiling.
//
// The built-in encodings' patterns (o200k_base, cl100k_base, byte for byte)
// are matched by hand over ASCII text (ascii_pretokenizer.hpp), with the same
// pieces as PCRE2 gives; PCRE2 matches wherever a non-ASCII byte would decide.
#pragma once

#include <cstddef>
#include <memory>
#include <string>
#include <string_view>

#include "rewrite/tokens/ascii_pretokenizer.hpp"

namespace gistproxy::rewrite::tokens {

// The pattern with \s / \S replaced by explicit White_Space ranges (inside and
// outside character classes). Exposed for tests.
std::string with_explicit_white_space(std::string_view pattern);

class pretokenizer {
 public:
  // Compiles the pattern; returns nullptr and says why in *error if it does not.
  // ascii_fast_path false: PCRE2 matches every piece, whatever the pattern
  // (the reference the fast path is tested against).
  static std::unique_ptr<pretokenizer> compile(std::string_view pattern, std::string* error,
                                               bool ascii_fast_path = true);
  ~pretokenizer();
  pretokenizer(const pretokenizer&) = delete;
  pretokenizer& operator=(const pretokenizer&) = delete;

  // The hand matcher used over ASCII (none: PCRE2 alone).
  ascii_grammar ascii_fast_path() const { return grammar_; }

  // Walks one text's pieces. Every byte lands in exactly one piece: bytes no
  // match covers (invalid UTF-8 only, with this pattern family) come out as
  // their own piece. One cursor per thread at a time; the pretokenizer itself
  // is shared.
  class cursor {
   public:
    cursor(const pretokenizer& p, std::string_view text);
    ~cursor();
    cursor(const cursor&) = delete;
    cursor& operator=(const cursor&) = delete;

    // The next piece; false at the end or when matching failed (failed()).
    bool next(std::string_view& piece);
    bool failed() const { return failed_; }
    // Bytes not yet returned (after a failure: what was left unsplit).
    std::string_view rest() const { return text_.substr(pos_); }
    // Where the next piece starts, and whether matching starts afresh there
    // (no match found past a gap is pending): a place counting may resume.
    std::size_t offset() const { return pos_; }
    bool between_matches() const { return !have_match_ && !failed_; }

   private:
    const pretokenizer& p_;
    std::string_view text_;
    std::size_t pos_ = 0;
    std::size_t match_begin_ = 0, match_end_ = 0;  // the pending match after a gap
    bool have_match_ = false;
    bool failed_ = false;
    void* match_data_ = nullptr;  // pcre2_match_data_8
  };

 private:
  pretokenizer() = default;
  void* code_ = nullptr;     // pcre2_code_8
  void* context_ = nullptr;  // pcre2_match_context_8
  bool jit_ = false;
  ascii_grammar grammar_ = ascii_grammar::none;
};

}  // namespace gistproxy::rewrite::tokens
