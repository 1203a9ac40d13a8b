#define PCRE2_CODE_UNIT_WIDTH 8
#include "rewrite/tokens/pretokenizer.hpp"

#include <pcre2.h>

namespace gistproxy::rewrite::tokens {
namespace {

// Unicode White_Space (PropList.txt), as Rust's regex \s.
constexpr std::string_view white_space_ranges =
    "\\x{9}-\\x{D}\\x{20}\\x{85}\\x{A0}\\x{1680}\\x{2000}-\\x{200A}\\x{2028}\\x{2029}\\x{202F}\\x{205F}\\x{3000}";

// The work one match may do. The pattern backtracks at most over one run of a
// character class, so real pieces stay far below; a failure is reported and
// the caller falls back to an estimate for the rest.
constexpr std::uint32_t match_limit = 100'000'000;

pcre2_code* code(void* p) { return static_cast<pcre2_code*>(p); }

}  // namespace

std::string with_explicit_white_space(std::string_view pattern) {
  std::string out;
  bool in_class = false;
  for (std::size_t i = 0; i < pattern.size(); ++i) {
    char c = pattern[i];
    if (c == '\\' && i + 1 < pattern.size()) {
      char e = pattern[++i];
      if (e == 's') {
        out += in_class ? std::string(white_space_ranges) : "[" + std::string(white_space_ranges) + "]";
      } else if (e == 'S') {
        // Outside a class only (a negated set cannot be nested in a class
        // without set operations; the tiktoken patterns never do it).
        out += in_class ? std::string("\\S") : "[^" + std::string(white_space_ranges) + "]";
      } else {
        out += c;
        out += e;
      }
      continue;
    }
    if (c == '[' && !in_class) {
      in_class = true;
      out += c;
      if (i + 1 < pattern.size() && pattern[i + 1] == '^') out += pattern[++i];
      if (i + 1 < pattern.size() && pattern[i + 1] == ']') out += pattern[++i];  // a literal ] first
      continue;
    }
    if (c == ']' && in_class) in_class = false;
    out += c;
  }
  return out;
}

std::unique_ptr<pretokenizer> pretokenizer::compile(std::string_view pattern, std::string* error,
                                                   bool ascii_fast_path) {
  const auto translated = with_explicit_white_space(pattern);
  int code_error = 0;
  PCRE2_SIZE offset = 0;
  auto* compiled = pcre2_compile(reinterpret_cast<PCRE2_SPTR>(translated.data()), translated.size(),
                                 PCRE2_UTF | PCRE2_UCP | PCRE2_MATCH_INVALID_UTF, &code_error, &offset, nullptr);
  if (!compiled) {
    if (error) {
      PCRE2_UCHAR message[256];
      pcre2_get_error_message(code_error, message, sizeof message);
      *error = "pattern does not compile at " + std::to_string(offset) + ": " + reinterpret_cast<char*>(message);
    }
    return nullptr;
  }
  std::unique_ptr<pretokenizer> p(new pretokenizer);
  p->code_ = compiled;
  p->jit_ = pcre2_jit_compile(compiled, PCRE2_JIT_COMPLETE) == 0;
  auto* context = pcre2_match_context_create(nullptr);
  if (context) pcre2_set_match_limit(context, match_limit);
  p->context_ = context;
  // The hand matcher is chosen by the pattern as written (before \s is made
  // explicit): only the exact built-in patterns it reproduces.
  p->grammar_ = ascii_fast_path ? ascii_grammar_of(pattern) : ascii_grammar::none;
  return p;
}

pretokenizer::~pretokenizer() {
  pcre2_match_context_free(static_cast<pcre2_match_context*>(context_));
  pcre2_code_free(code(code_));
}

pretokenizer::cursor::cursor(const pretokenizer& p, std::string_view text)
    : p_(p), text_(text), match_data_(pcre2_match_data_create_from_pattern(code(p.code_), nullptr)) {
  failed_ = match_data_ == nullptr;
}

pretokenizer::cursor::~cursor() { pcre2_match_data_free(static_cast<pcre2_match_data*>(match_data_)); }

bool pretokenizer::cursor::next(std::string_view& piece) {
  if (failed_ || pos_ >= text_.size()) return false;
  if (!have_match_) {
    // ASCII where the hand matcher can decide: the piece PCRE2 would match
    // here (which starts here: every ASCII byte starts a match). Else PCRE2.
    if (const auto n = ascii_piece(p_.grammar_, text_, pos_)) {
      piece = text_.substr(pos_, n);
      pos_ += n;
      return true;
    }
    auto* md = static_cast<pcre2_match_data*>(match_data_);
    auto* context = static_cast<pcre2_match_context*>(p_.context_);
    auto subject = reinterpret_cast<PCRE2_SPTR>(text_.data());
    int rc = p_.jit_ ? pcre2_jit_match(code(p_.code_), subject, text_.size(), pos_, 0, md, context)
                     : pcre2_match(code(p_.code_), subject, text_.size(), pos_, 0, md, context);
    if (rc == PCRE2_ERROR_NOMATCH) {
      match_begin_ = match_end_ = text_.size();  // the rest is one gap
    } else if (rc < 0) {
      failed_ = true;
      return false;
    } else {
      const auto* ovector = pcre2_get_ovector_pointer(md);
      match_begin_ = ovector[0];
      match_end_ = ovector[1];
      if (match_end_ <= match_begin_) match_end_ = match_begin_ + 1;  // never loop on an empty match
      if (match_end_ > text_.size()) match_end_ = text_.size();
    }
    have_match_ = true;
  }
  if (pos_ < match_begin_) {  // bytes no match covered: their own piece
    piece = text_.substr(pos_, match_begin_ - pos_);
    pos_ = match_begin_;
    return true;
  }
  piece = text_.substr(match_begin_, match_end_ - match_begin_);
  pos_ = match_end_;
  have_match_ = false;
  return !piece.empty();
}

}  // namespace gistproxy::rewrite::tokens
