// In a fleet (chains of proxies, replicas, replays of forwarded bodies) a
// request can arrive already rewritten by a gistproxy: its references are
// never offloaded again, whatever the threshold and preview size, and a
// read_blob declared exactly as ours is ours (kept, not renamed), so the
// model's calls to it are still intercepted.
#include <catch2/catch.hpp>

#include <fstream>
#include <map>
#include <nlohmann/json.hpp>
#include <sstream>

#include "rewrite/endpoint.hpp"
#include "rewrite/blob/memory_blob_store.hpp"
#include "rewrite/gist/reference.hpp"
#include "rewrite/offload/engine.hpp"
#include "tests/support/fixture_files.hpp"

using namespace gistproxy::rewrite;

namespace {

using gistproxy::testing::read_fixture;

std::string gemini_request() {
  std::string out;
  for (int i = 0; i < 600; ++i) out += "line " + std::to_string(i) + " of a long tool output\n";
  nlohmann::json body = {
      {"contents", {{{"role", "user"}, {"parts", {{{"text", "read"}}}}},
                    {{"role", "model"}, {"parts", {{{"functionCall", {{"name", "read_file"}, {"args", nlohmann::json::object()}}}}}}},
                    {{"role", "user"}, {"parts", {{{"functionResponse", {{"name", "read_file"}, {"response", {{"result", out}}}}}}}}}}},
      {"tools", {{{"functionDeclarations", {{{"name", "read_file"}}}}}}}};
  return body.dump();
}

// A second gistproxy that would offload anything: threshold 1 token, no
// minimum size, previews as large as the output.
offload_config eager() {
  offload_config cfg;
  cfg.threshold_tokens = 1;
  cfg.min_offload_bytes = 0;
  cfg.reference.preview_tokens = 1'000'000;
  return cfg;
}

}  // namespace

TEST_CASE("a body another gistproxy forwarded passes a second one byte for byte, read_blob still ours") {
  const std::map<std::string, std::pair<std::string, std::string>> cases = {
      {"chat", {"/v1/chat/completions", read_fixture("chat/tool_outputs.request.json")}},
      {"responses", {"/v1/responses", read_fixture("responses/function_call_output.request.json")}},
      {"messages", {"/v1/messages", read_fixture("messages/tool_results.request.json")}},
      {"gemini", {"/v1beta/models/gemini-2.5-pro:generateContent", gemini_request()}},
  };
  for (const auto& [name, c] : cases) {
    INFO(name);
    const auto* d = endpoint_for("POST", c.first);
    REQUIRE(d);
    memory_blob_store store_a([] { return std::int64_t(1000); }), store_b([] { return std::int64_t(1000); }),
        store_c([] { return std::int64_t(1000); });
    char_ratio_estimator estimator;
    offload_engine a(offload_config{}, store_a, estimator), b(offload_config{}, store_b, estimator),
        eager_c(eager(), store_c, estimator);
    auto first = a.rewrite(d->wire(), c.second, "t");
    REQUIRE(first.report.outcome == rewrite_outcome::rewritten);
    REQUIRE_FALSE(first.report.offloads.empty());
    REQUIRE(first.report.tool_injected);

    // The same configuration: nothing to do, byte for byte.
    auto second = b.rewrite(d->wire(), first.body, "t");
    CHECK(second.report.offloads.empty());
    CHECK(second.report.tool_already_ours);
    CHECK_FALSE(second.report.tool_injected);
    CHECK(second.report.tool_name == "read_blob");  // not renamed to the fallback
    CHECK(second.report.outcome == rewrite_outcome::unchanged);

    // One that would offload anything still leaves every reference alone.
    auto third = eager_c.rewrite(d->wire(), first.body, "t");
    std::size_t references = 0;
    for (auto fate : third.report.fates) references += fate == output_fate::already_reference;
    CHECK(references == first.report.offloads.size());
    CHECK(third.report.tool_name == "read_blob");
    for (const auto& o : third.report.offloads) {
      auto got = store_c.get("t", o.hash);
      REQUIRE(got.error == blob_error::none);
      CHECK_FALSE(is_reference(got.bytes));
    }
  }
}

TEST_CASE("a client's own read_blob (not ours byte for byte) still makes ours take the fallback name") {
  memory_blob_store store([] { return std::int64_t(1000); });
  char_ratio_estimator estimator;
  offload_engine e(offload_config{}, store, estimator);
  const auto* d = endpoint_for("POST", "/v1/chat/completions");
  auto ours = d->wire().read_blob_tool("read_blob");
  auto almost = ours;
  almost.insert(almost.size() - 1, " ");  // one byte of white space differs
  for (const auto& [def, expect_ours] : {std::pair{ours, true}, std::pair{almost, false}}) {
    std::string body = R"({"model":"m","messages":[{"role":"tool","tool_call_id":"c","content":")" + std::string(20000, 'y') +
                       R"("}],"tools":[)" + def + "]}";
    auto r = e.rewrite(d->wire(), body, "t");
    CHECK(r.report.tool_already_ours == expect_ours);
    CHECK(r.report.tool_name == (expect_ours ? "read_blob" : "gistproxy_read_blob"));
  }
}

TEST_CASE("is_reference: what render_reference wrote, not a look-alike") {
  content_shape shape;
  shape.kind = content_kind::text;
  shape.lines = 3;
  shape.chars = 12;
  shape.tokens = 3;
  reference_config cfg;
  auto ref = render_reference("a\nb\nc\n", shape, "cat", std::string(64, 'a'), cfg);
  CHECK(is_reference(ref));
  CHECK_FALSE(is_reference(ref + " "));
  CHECK_FALSE(is_reference(ref.substr(1)));
  auto bad_handle = ref;
  bad_handle.replace(bad_handle.find("(\"") + 2, 1, "Z");
  CHECK_FALSE(is_reference(bad_handle));
  CHECK_FALSE(is_reference("[gistproxy: this tool output was moved out of the context window; its exact bytes are stored]\n"));
  CHECK(ref.ends_with("Only part of it: add query=\"<words>\" (the best lines for them), pattern=\"<regex>\" (matching lines, "
                      "numbered; context_lines=N adds lines around them) or start_line=A, end_line=B."));
  // A reference written before query existed (still in long conversations) is one too:
  // never offloaded again as if it were an output.
  const std::string earlier = ref.substr(0, ref.rfind("Only part of it")) +
                              "Only part of it: add pattern=\"<regex>\" (matching lines, numbered; context_lines=N adds "
                              "lines around them) or start_line=A, end_line=B.";
  CHECK(is_reference(earlier));
  CHECK_FALSE(is_reference(earlier.substr(0, earlier.size() - 1)));
}

TEST_CASE("is_reference: image placeholders too") {
  reference_config cfg;
  auto ref = render_image_reference("image/png", 66, "Screenshot", std::string(64, 'b'), cfg);
  CHECK(is_reference(ref));
  CHECK_FALSE(is_reference(ref + "\nmore"));
  CHECK_FALSE(is_reference("[image: png, 66 bytes] (from tool x) Retrieve: read_blob(\"bbbbbbbbbbbbbbbb\")"));
}
