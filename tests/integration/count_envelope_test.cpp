// Token counts whose body wraps the request they count (Gemini :countTokens,
// Bedrock CountTokens): the wrapped request reaches the provider rewritten
// exactly as its turn is, so an agent's own context accounting counts what
// gistproxy really sends; a shape it cannot take apart goes as sent.
#include <catch2/catch.hpp>

#include "rewrite/offload/base64.hpp"
#include "tests/integration/harness.hpp"
#include "tests/support/api_scenarios.hpp"
#include "tests/support/raw_upstream.hpp"

using namespace gistproxy::testing;
using njson = nlohmann::json;

namespace {

const std::string gemini_answer =
    R"({"candidates":[{"content":{"role":"model","parts":[{"text":"ok"}]},"finishReason":"STOP","index":0}],)"
    R"("usageMetadata":{"promptTokenCount":1,"candidatesTokenCount":1,"totalTokenCount":2}})";
const std::string converse_answer =
    R"({"output":{"message":{"role":"assistant","content":[{"text":"ok"}]}},"stopReason":"end_turn",)"
    R"("usage":{"inputTokens":1,"outputTokens":1,"totalTokens":2}})";
const std::string messages_answer =
    R"({"id":"msg_1","type":"message","role":"assistant","model":"claude","content":[{"type":"text","text":"ok"}],)"
    R"("stop_reason":"end_turn","usage":{"input_tokens":1,"output_tokens":1}})";

std::string count_path(const std::string& api) {
  const auto turn = path_for(api);
  if (api == "gemini") return turn.substr(0, turn.rfind(':')) + ":countTokens";
  return turn.substr(0, turn.rfind('/')) + "/count-tokens";
}

struct wrapped_row {
  std::string name, api, family, answer;
  // The count's body around the turn's body, and the wrapped request out of
  // what reached the provider.
  std::function<njson(const njson&)> wrap;
  std::function<njson(const njson&)> unwrap;
};

const std::vector<wrapped_row>& wrapped_rows() {
  static const std::vector<wrapped_row> rows = {
      {"gemini generateContentRequest", "gemini", "gemini", gemini_answer,
       [](const njson& turn) {
         auto r = turn;
         r["model"] = "models/gemini-2.5-flash";
         return njson{{"generateContentRequest", r}};
       },
       [](const njson& sent) {
         auto r = sent.at("generateContentRequest");
         r.erase("model");
         return r;
       }},
      {"bedrock converse", "bedrock-converse", "bedrock", converse_answer,
       [](const njson& turn) { return njson{{"input", {{"converse", turn}}}}; },
       [](const njson& sent) { return sent.at("input").at("converse"); }},
      {"bedrock invokeModel", "bedrock-messages", "bedrock", messages_answer,
       [](const njson& turn) {
         return njson{{"input", {{"invokeModel", {{"body", gistproxy::rewrite::base64_encode(turn.dump())}}}}}};
       },
       [](const njson& sent) {
         std::string body;
         REQUIRE(gistproxy::rewrite::base64_decode(sent.at("input").at("invokeModel").at("body").get<std::string>(), body));
         return njson::parse(body);
       }},
  };
  return rows;
}

}  // namespace

TEST_CASE("count envelope: a wrapped token count carries the request its turn sends, rewritten alike") {
  const auto i = GENERATE(range(std::size_t(0), wrapped_rows().size()));
  const auto& row = wrapped_rows()[i];
  CAPTURE(row.name);
  raw_upstream own({{raw_upstream::response(R"({"totalTokens":1234,"inputTokens":1234})")}, {raw_upstream::response(row.answer)}});
  proxy_process proxy({"--threads", "1", "--" + row.family + "-upstream", own.url()});
  const auto turn = request_for(row.api, "find the needle", haystack());
  const auto headers = key_header(row.api);

  const auto count = http_request(proxy.port(), "POST", count_path(row.api), row.wrap(turn).dump(), headers);
  REQUIRE(count.status == 200);
  CHECK(count.body == R"({"totalTokens":1234,"inputTokens":1234})");  // the provider's answer as it came
  REQUIRE(http_request(proxy.port(), "POST", path_for(row.api), turn.dump(), headers).status == 200);

  const auto bodies = own.bodies();
  REQUIRE(bodies.size() == 2);
  CHECK(bodies[0].size() < turn.dump().size() / 2);  // the output offloaded inside its wrapping
  const auto counted = row.unwrap(njson::parse(bodies[0]));
  CHECK(counted == njson::parse(bodies[1]));  // counted exactly what the turn sends
}

TEST_CASE("count envelope: Gemini's contents-only count is sent as a generateContentRequest with the turn's contents and read_blob") {
  raw_upstream own({{raw_upstream::response(R"({"totalTokens":1234})")}, {raw_upstream::response(gemini_answer)}});
  proxy_process proxy({"--threads", "1", "--gemini-upstream", own.url()});
  const auto turn = request_for("gemini", "find the needle", haystack());
  const auto headers = key_header("gemini");
  REQUIRE(http_request(proxy.port(), "POST", count_path("gemini"), njson{{"contents", turn.at("contents")}}.dump(), headers)
              .status == 200);
  REQUIRE(http_request(proxy.port(), "POST", path_for("gemini"), turn.dump(), headers).status == 200);
  const auto bodies = own.bodies();
  REQUIRE(bodies.size() == 2);
  const auto counted = njson::parse(bodies[0]);
  const auto sent = njson::parse(bodies[1]);
  REQUIRE(counted.contains("generateContentRequest"));
  CHECK(counted.size() == 1);
  const auto& request = counted["generateContentRequest"];
  CHECK(request["model"] == "models/gemini-2.5-flash");
  CHECK(request["contents"] == sent["contents"]);
  CHECK(request.at("tools").dump().find("read_blob") != std::string::npos);
}

TEST_CASE("count envelope: a count of a shape gistproxy cannot take apart goes to its provider as sent") {
  // One upstream per family: a raw_upstream serves one connection at a time.
  raw_upstream gemini({{raw_upstream::response(R"({"totalTokens":1})")}});
  raw_upstream bedrock({{raw_upstream::response(R"({"inputTokens":1})")}});
  proxy_process proxy({"--threads", "1", "--gemini-upstream", gemini.url(), "--bedrock-upstream", bedrock.url()});
  const auto turn = request_for("gemini", "find the needle", haystack());
  struct sent_as_is {
    std::string api, body;
  };
  const std::vector<sent_as_is> cases = {
      // both forms at once: which the provider reads is its business
      {"gemini", njson{{"contents", turn.at("contents")}, {"generateContentRequest", turn}}.dump()},
      {"bedrock-converse", R"({"input":{"invokeModel":{"body":"not base64!"}}})"},
      {"bedrock-converse", R"({"input":{"converse":{"messages":[]},"other":1}})"},
      {"gemini", "{\"contents\": [ not json"},
  };
  for (const auto& c : cases) {
    CAPTURE(c.api, c.body.substr(0, 80));
    auto& own = c.api == "gemini" ? gemini : bedrock;
    const auto before = own.bodies().size();
    const auto res = http_request(proxy.port(), "POST", count_path(c.api), c.body, key_header(c.api));
    CHECK(res.status == 200);
    const auto bodies = own.bodies();
    REQUIRE(bodies.size() == before + 1);
    CHECK(bodies.back() == c.body);
  }
}
