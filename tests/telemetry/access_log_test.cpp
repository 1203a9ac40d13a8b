#include "telemetry/access_log.hpp"

#include <catch2/catch.hpp>
#include <nlohmann/json.hpp>

using namespace gistproxy::telemetry;

TEST_CASE("log strings copied from outside stay valid JSON and UTF-8: invalid bytes become U+FFFD") {
  const std::string model = std::string("gpt-\xFF\xFE-") + "\xED\xA0\x80" + "\xC0\xAF" + "caf\xC3\xA9 \xF0\x9F\x99\x82 \x01\"\\";
  std::string out;
  append_json_string(out, model);
  auto parsed = nlohmann::json::parse(out);  // strict: throws on invalid UTF-8 (it did)
  CHECK(parsed.get<std::string>() ==
        "gpt-\xEF\xBF\xBD\xEF\xBF\xBD-\xEF\xBF\xBD\xEF\xBF\xBD\xEF\xBF\xBD\xEF\xBF\xBD\xEF\xBF\xBD"
        "caf\xC3\xA9 \xF0\x9F\x99\x82 \x01\"\\");
  std::string cut;
  append_json_string(cut, "abc\xE2\x82");  // a sequence cut short at the end
  CHECK(nlohmann::json::parse(cut) == "abc\xEF\xBF\xBD\xEF\xBF\xBD");
}
