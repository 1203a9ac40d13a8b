// --text-tool-results cline through the real binary: a Cline-style request
// (the tool's result as user text after a `[tool for 'arg'] Result:` header)
// reaches the upstream with the header and a reference in place of the
// output, and read_blob pages the exact text back.
#include <catch2/catch.hpp>

#include "tests/integration/harness.hpp"

using namespace gistproxy::testing;

namespace {

std::string config_file() {
  std::string s;
  for (int i = 0; s.size() < 120 * 1024; ++i) {
    if (i == 1200) s += "config line 1200: NEEDLE secret_port=48213\n";
    s += "config line " + std::to_string(i) + ": key_" + std::to_string(i) + " = \"value\" ü\n";
  }
  return s;
}

nlohmann::json cline_request(const std::string& ask, const std::string& output) {
  return {{"model", "claude-sonnet-4-5"},
          {"max_tokens", 100},
          {"system", "You are Cline."},
          {"messages", {{{"role", "user"}, {"content", {{{"type", "text"}, {"text", "<task>" + ask + "</task>"}}}}},
                        {{"role", "assistant"}, {"content", {{{"type", "text"}, {"text", "<read_file><path>app.conf</path></read_file>"}}}}},
                        {{"role", "user"}, {"content", {{{"type", "text"}, {"text", "[read_file for 'app.conf'] Result:"}},
                                                        {{"type", "text"}, {"text", output}},
                                                        {{"type", "text"}, {"text", "<environment_details>cwd</environment_details>"}}}}}}},
          {"tools", nlohmann::json::array({{{"name", "noop"}, {"input_schema", {{"type", "object"}}}}})}};
}

}  // namespace

TEST_CASE("Cline text tool results are offloaded by serve and paged back byte for byte") {
  const auto output = config_file();
  mock_upstream upstream;
  proxy_process proxy({"--upstream", upstream.url(), "--text-tool-results", "cline"});
  auto res = http_request(proxy.port(), "POST", "/v1/messages", cline_request("read it all", output).dump(),
                          {{"x-api-key", "sk-test"}});
  REQUIRE(res.status == 200);
  auto seen = upstream.llm_bodies();
  REQUIRE(seen.size() == 2);
  auto first = nlohmann::json::parse(seen[0]);
  const auto& parts = first["messages"][2]["content"];
  CHECK(parts[0]["text"] == "[read_file for 'app.conf'] Result:");
  CHECK(parts[1]["text"].get<std::string>().rfind("[gistproxy: this tool output was moved", 0) == 0);
  CHECK(parts[1]["text"].get<std::string>().find("tool: read_file") != std::string::npos);
  CHECK(parts[2]["text"] == "<environment_details>cwd</environment_details>");
  CHECK(seen[0].find("NEEDLE") == std::string::npos);  // the output itself stayed behind
  // The model read the handle back whole; its answer quotes the exact text.
  auto answer = nlohmann::json::parse(res.body)["content"][0]["text"].get<std::string>();
  CHECK(answer.find(output) != std::string::npos);

  // Without the flag, the same request goes upstream as sent.
  mock_upstream plain_upstream;
  proxy_process plain({"--upstream", plain_upstream.url()});
  auto body = cline_request("say hello", output).dump();
  REQUIRE(http_request(plain.port(), "POST", "/v1/messages", body, {{"x-api-key", "sk-test"}}).status == 200);
  auto plain_seen = plain_upstream.llm_bodies();
  REQUIRE(plain_seen.size() == 1);
  CHECK(nlohmann::json::parse(plain_seen[0])["messages"] == nlohmann::json::parse(body)["messages"]);
}
