// A reference goes into the forwarded body on this turn and every later one:
// whatever an output holds, every cut the gist makes (digest keys, shown
// lines, previews, the tool's name) falls on a character boundary, and every
// digest stays within its budget.
#include <catch2/catch.hpp>

#include <string>

#include "rewrite/blob/digest.hpp"
#include "rewrite/gist/digests.hpp"
#include "rewrite/gist/reference.hpp"
#include "rewrite/text/utf8.hpp"

using namespace gistproxy::rewrite;

namespace {

// Characters of each UTF-8 length but one, and an escape of each kind.
const std::string planted[] = {"\xc3\xa9", "\xe2\x82\xac", "\xf0\x9f\x98\x80", "\\u00e9", "\\\"", "\\ud83d\\ude00"};

std::string reference_of(const std::string& bytes, std::string_view tool, std::size_t preview_tokens) {
  char_ratio_estimator e;
  reference_config cfg;
  cfg.preview_tokens = preview_tokens;
  return render_reference(bytes, shape_of(bytes, e), tool, sha256_hex(bytes), cfg);
}

}  // namespace

TEST_CASE("a JSON digest never cuts a key inside a character or an escape, wherever the key puts one", "[gist]") {
  for (const auto& c : planted)
    for (std::size_t at = 30; at <= 44; ++at) {
      const std::string key = std::string(at, 'k') + c + "tail";
      INFO("planted " << c.size() << " bytes at " << at);
      const std::string object = "{\"" + key + "\": 1, \"other\": [1, 2]}";
      const std::string rows = "[{\"" + key + "\": \"x\"}, {\"" + key + "\": \"y\"}]";
      for (const auto* doc : {&object, &rows}) {
        const auto digest = json_digest(*doc, 4000);
        REQUIRE(!digest.empty());
        CHECK(text::is_valid_utf8(digest));
        // The key's text never ends in a lone backslash or half an escape.
        CHECK(digest.find("\\u00 ") == std::string::npos);
        CHECK(digest.find("\\:") == std::string::npos);
      }
    }
}

TEST_CASE("every cut of a reference falls on a character boundary, for outputs of every kind", "[gist]") {
  for (const auto& c : planted) {
    if (c[0] == '\\') continue;  // escapes are raw JSON only: a decoded output holds characters
    for (std::size_t at = 0; at < 8; ++at) {
      INFO("planted " << c.size() << " bytes, shifted " << at);
      const std::string pad(at, 'x');
      std::string log, source, json, grep;
      for (int i = 0; i < 300; ++i) {
        log += "2024-01-01 ERROR " + pad + std::string(190, 'e') + c + c + "\n";
        source += "def f" + std::to_string(i) + "(" + pad + std::string(150, 'a') + c + c + "):\n    pass\n";
        grep += "src/" + pad + c + ".py:" + std::to_string(i) + ": hit " + c + "\n";
      }
      json = "{\"" + pad + std::string(38, 'k') + c + "\": [" + std::string(3000, '1') + "]}";
      for (const auto* bytes : {&log, &source, &json, &grep})
        for (std::size_t preview : {40u, 120u, 1000u}) CHECK(text::is_valid_utf8(reference_of(*bytes, "run", preview)));
    }
  }
}

TEST_CASE("a tool name from the client is shown bounded and as valid UTF-8", "[gist]") {
  const std::string bytes(5000, 'z');
  const auto huge = reference_of(bytes, std::string(1 << 20, 'n'), 100);
  CHECK(huge.size() < 2000);
  CHECK(text::is_valid_utf8(reference_of(bytes, "bad\xff\xfe name", 100)));
  CHECK(text::is_valid_utf8(reference_of(bytes, std::string(127, 'n') + "\xe2\x82\xac", 100)));
}

TEST_CASE("a source outline fits every budget it is given, its header and its last line included", "[gist]") {
  std::string file;
  for (int i = 0; i < 400; ++i) file += "def function_number_" + std::to_string(i) + "(argument):\n    return 1\n";
  std::size_t empty = 0;
  for (std::size_t budget = 60; budget <= 2000; ++budget) {
    const auto outline = source_digest(file, budget);
    REQUIRE(outline.size() <= budget);
    // Once the header and the "… N more" line fit, the outline is given.
    if (budget >= 120 && outline.empty()) ++empty;
  }
  CHECK(empty == 0);
}

TEST_CASE("a log digest fits every budget it is given, its levels and header included", "[gist]") {
  std::string log;
  for (int i = 0; i < 40; ++i) log += "2024-01-01 ERROR something failed in step " + std::to_string(i) + "\n";
  for (std::size_t budget = 8; budget <= 600; ++budget) {
    CAPTURE(budget);
    REQUIRE(log_digest(log, budget).size() <= budget);
  }
}
