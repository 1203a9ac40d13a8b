// Tool results carried as user text (Cline, Roo Code, Kilo Code), opt-in with
// --text-tool-results cline: the header grammar, both layouts (header part +
// output part, header line + output in one text), both APIs, exact page-back,
// and everything that must stay untouched.
#include <catch2/catch.hpp>

#include <nlohmann/json.hpp>

#include "rewrite/endpoint.hpp"
#include "rewrite/blob/memory_blob_store.hpp"
#include "rewrite/dialects/tool_scan.hpp"
#include "rewrite/offload/engine.hpp"
#include "rewrite/page_in/page_in.hpp"

using namespace gistproxy::rewrite;
using J = nlohmann::json;

namespace {

std::string big_text() {
  std::string s;
  for (int i = 0; s.size() < 30000; ++i) s += "line " + std::to_string(i) + ": const x = \"quoted\"; // ünïcode\n";
  return s;
}

struct env {
  memory_blob_store store{[] { return std::int64_t(1); }};
  char_ratio_estimator estimator;
  offload_engine engine;
  explicit env(text_results mode) : engine(config(mode), store, estimator) {}
  static offload_config config(text_results mode) {
    offload_config c;
    c.text_tool_results = mode;
    return c;
  }
  rewrite_result run(const char* path, const std::string& body) {
    return engine.rewrite(endpoint_for("POST", path)->wire(), body, "t");
  }
  std::string page(const offload_record& o) {
    page_request req;
    req.handle = o.hash.substr(0, 16);
    return page_in(store, "t", req, {}).text;
  }
};

J anthropic(J user_content) {
  return {{"model", "claude-sonnet-4-5"}, {"max_tokens", 1000},
          {"tools", J::array({{{"name", "x"}, {"input_schema", {{"type", "object"}}}}})},
          {"messages", J::array({{{"role", "user"}, {"content", "<task>fix</task>"}},
                                 {{"role", "assistant"}, {"content", "<read_file><path>a.ts</path></read_file>"}},
                                 {{"role", "user"}, {"content", user_content}}})}};
}

}  // namespace

TEST_CASE("the Cline header grammar: exact lines only") {
  CHECK(cline_header_tool("[read_file for 'src/x.ts'] Result:") == "read_file");
  CHECK(cline_header_tool("[execute_command for 'echo 'hi' && make'] Result:") == "execute_command");
  CHECK(cline_header_tool("[attempt_completion] Result:") == "attempt_completion");
  for (const char* no : {"[Read_file] Result:", "[read-file] Result:", "[] Result:", "[read_file for src] Result:",
                         "[read_file for 'x'] Result", "[read_file] Result: more", " [read_file] Result:",
                         "read_file Result:", "[read_file for 'a\nb'] Result:", "[read_file for ''x] Result:",
                         "[read_file]Result:", "[read_file for 'x'] result:"}) {
    INFO(no);
    CHECK(cline_header_tool(no).empty());
  }
}

TEST_CASE("Anthropic: a header part and the next text part are offloaded as that tool's output, byte-exact") {
  const auto big = big_text();
  const auto body = anthropic(J::array({{{"type", "text"}, {"text", "[read_file for 'a.ts'] Result:"}},
                                        {{"type", "text"}, {"text", big}},
                                        {{"type", "text"}, {"text", "<environment_details>x</environment_details>"}}}))
                        .dump();
  env e(text_results::cline);
  auto r = e.run("/v1/messages", body);
  REQUIRE(r.report.offloads.size() == 1);
  CHECK(r.report.offloads[0].tool_name == "read_file");
  auto sent = J::parse(r.body);
  const auto& parts = sent["messages"][2]["content"];
  CHECK(parts[0]["text"] == "[read_file for 'a.ts'] Result:");  // the header stays
  CHECK(parts[1]["text"].get<std::string>().rfind("[gistproxy: this tool output was moved", 0) == 0);
  CHECK(parts[2]["text"] == "<environment_details>x</environment_details>");
  CHECK(sent["messages"][1] == J::parse(body)["messages"][1]);
  CHECK(e.page(r.report.offloads[0]) == big);

  // Off by default: the same body is not touched (no tool output at all).
  env off(text_results::none);
  auto untouched = off.run("/v1/messages", body);
  CHECK(untouched.report.offloads.empty());
  CHECK(untouched.report.outputs_seen == 0);
}

TEST_CASE("OpenAI chat: a header line and its output in one user string, and the header line stays") {
  const auto big = big_text();
  J body = {{"model", "gpt-4o"},
            {"messages", J::array({{{"role", "system"}, {"content", "You are Cline."}},
                                   {{"role", "user"}, {"content", "[execute_command for 'make'] Result:\n" + big}}})}};
  env e(text_results::cline);
  auto r = e.run("/v1/chat/completions", body.dump());
  REQUIRE(r.report.offloads.size() == 1);
  CHECK(r.report.offloads[0].tool_name == "execute_command");
  auto text = J::parse(r.body)["messages"][1]["content"].get<std::string>();
  CHECK(text.rfind("[execute_command for 'make'] Result:\n[gistproxy: this tool output was moved", 0) == 0);
  CHECK(e.page(r.report.offloads[0]) == big);
  // Deterministic: the next turn forwards the same bytes.
  CHECK(e.run("/v1/chat/completions", body.dump()).body == r.body);
}

TEST_CASE("look-alikes stay untouched: other roles, other lines, other escapes") {
  const auto big = big_text();
  env e(text_results::cline);
  // The header followed by more words on its line is not a header.
  J words = {{"model", "gpt-4o"}, {"messages", J::array({{{"role", "user"}, {"content", "[read_file] Result: see below\n" + big}}})}};
  CHECK(e.run("/v1/chat/completions", words.dump()).report.offloads.empty());
  // An assistant quoting a header is not a tool result.
  J quoted = {{"model", "gpt-4o"}, {"messages", J::array({{{"role", "assistant"}, {"content", "[read_file] Result:\n" + big}}})}};
  CHECK(e.run("/v1/chat/completions", quoted.dump()).report.offloads.empty());
  // A header escaped differently from how we would escape it stays inline
  // (its bytes could not be matched exactly): \u0027 for the apostrophe.
  std::string escaped = J{{"model", "gpt-4o"}, {"messages", J::array({{{"role", "user"}, {"content", "[read_file for 'a'] Result:\nBIG"}}})}}.dump();
  escaped.replace(escaped.find("'a'"), 3, "\\u0027a\\u0027");
  escaped.replace(escaped.find("BIG"), 3, J(big).dump().substr(1, J(big).dump().size() - 2));
  REQUIRE(J::accept(escaped));
  CHECK(e.run("/v1/chat/completions", escaped).report.offloads.empty());
  // A header part followed by a non-text part: nothing is taken.
  auto image_next = anthropic(J::array({{{"type", "text"}, {"text", "[read_file for 'a.ts'] Result:"}},
                                        {{"type", "image"}, {"source", {{"type", "url"}, {"url", "http://x"}}}},
                                        {{"type", "text"}, {"text", big}}}));
  CHECK(e.run("/v1/messages", image_next.dump()).report.offloads.empty());
}

TEST_CASE("a header whose ARG is a Windows path (a backslash before n) matches in the same-text form") {
  const auto big = big_text();
  const std::string header = "[read_file for 'C:\\Users\\me\\node_modules\\next\\index.js'] Result:";
  J body = {{"model", "gpt-4o"}, {"messages", J::array({{{"role", "user"}, {"content", header + "\n" + big}}})}};
  env e(text_results::cline);
  auto r = e.run("/v1/chat/completions", body.dump());
  REQUIRE(r.report.offloads.size() == 1);  // was: the "\\n" of "\node_modules" taken for the newline, no match
  CHECK(r.report.offloads[0].tool_name == "read_file");
  auto text = J::parse(r.body)["messages"][0]["content"].get<std::string>();
  CHECK(text.rfind(header + "\n[gistproxy:", 0) == 0);
  CHECK(e.page(r.report.offloads[0]) == big);
}
