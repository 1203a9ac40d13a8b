#include <catch2/catch.hpp>

#include "proxy/commands/wrap_toml.hpp"

using gistproxy::proxy::toml_path;
using gistproxy::proxy::toml_strings;

TEST_CASE("wrap's TOML reader finds Codex's provider settings as TOML writes them") {
  const auto doc = toml_strings(R"(# Codex
model = "gpt-5"   # trailing comment
model_provider = 'corp'
openai_base_url = "https://gw.example/v1"
sandbox_mode = "workspace-write"
model_reasoning_effort = "high"
notify = ["notify-send", "Codex"]
[tui]
animations = false
[model_providers.corp]
name = "Corp \"gateway\" \u00e9"
base_url = """
https://corp.example/v1"""
query_params = { api-version = "2025-04-01-preview" }
request_max_retries = 4
[profiles."deep work"]
model_provider = "corp"
[[mcp_servers.list]]
command = "ignored"
[model_providers]
other.base_url = 'C:\path'
)");
  REQUIRE(doc);
  auto at = [&](const toml_path& p) { return doc->count(p) ? doc->at(p) : std::string("<none>"); };
  CHECK(at({"model_provider"}) == "corp");
  CHECK(at({"openai_base_url"}) == "https://gw.example/v1");
  CHECK(at({"model_providers", "corp", "name"}) == "Corp \"gateway\" \xc3\xa9");
  CHECK(at({"model_providers", "corp", "base_url"}) == "https://corp.example/v1");
  CHECK(at({"model_providers", "corp", "query_params", "api-version"}) == "2025-04-01-preview");
  CHECK(at({"profiles", "deep work", "model_provider"}) == "corp");
  CHECK(at({"model_providers", "other", "base_url"}) == "C:\\path");
  CHECK(at({"mcp_servers", "list", "command"}) == "<none>");  // arrays of tables are not read
}

TEST_CASE("wrap's TOML reader refuses what is not TOML rather than guess") {
  for (const char* bad : {"model_provider = \"unterminated\n", "= \"no key\"\n", "[table\n", "a = \"x\" b = \"y\"\n",
                          "a = { b = \"c\"\n", "a = \"bad \\q escape\"\n"}) {
    INFO(bad);
    CHECK(!toml_strings(bad));
  }
  std::string deep = "a = ";
  for (int i = 0; i < 10000; ++i) deep += "[";
  CHECK(!toml_strings(deep));  // bounded: no recursion this deep
}
