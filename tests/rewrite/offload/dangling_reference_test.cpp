// A request that already carries a gistproxy reference (made by /v1/offload,
// another replica, or quoted by a model) must be able to follow it: read_blob
// is offered whenever such a reference resolves in the tenant's store, in
// every offer mode, even when nothing new is offloaded.
#include <catch2/catch.hpp>

#include <nlohmann/json.hpp>
#include <string>

#include "rewrite/endpoint.hpp"
#include "rewrite/blob/digest.hpp"
#include "rewrite/blob/memory_blob_store.hpp"
#include "rewrite/gist/reference.hpp"
#include "rewrite/offload/engine.hpp"
#include "rewrite/page_in/page_in.hpp"

using namespace gistproxy::rewrite;

namespace {

std::string stored_output() {
  std::string out;
  for (int i = 0; i < 300; ++i) out += "row " + std::to_string(i) + ": a line of an earlier tool output\n";
  return out;
}

// A chat body whose one tool output is the reference to `bytes` (no tools
// array: nothing else would bring read_blob).
std::string body_referencing(const std::string& bytes) {
  char_ratio_estimator e;
  const auto reference = render_reference(bytes, shape_of(bytes, e), "read_file", sha256_hex(bytes), {});
  nlohmann::json call = {{"id", "c1"}, {"type", "function"}, {"function", {{"name", "read_file"}, {"arguments", "{}"}}}};
  nlohmann::json messages = nlohmann::json::array();
  messages.push_back({{"role", "user"}, {"content", "go"}});
  messages.push_back({{"role", "assistant"}, {"content", nullptr}, {"tool_calls", nlohmann::json::array({call})}});
  messages.push_back({{"role", "tool"}, {"tool_call_id", "c1"}, {"content", reference}});
  nlohmann::json body = {{"model", "gpt-4o"}, {"messages", messages}};
  return body.dump();
}

// A shared store (S3) that cannot be reached: every call is an I/O error,
// and each lookup is counted (an unreachable store answers slowly).
struct unreachable_store final : blob_store {
  int gets = 0;
  put_result put(std::string_view, const blob_meta&) override { return {blob_error::io, false, "connection refused"}; }
  bool contains(std::string_view, std::string_view) override { return false; }
  get_result get(std::string_view, std::string_view) override {
    ++gets;
    return {blob_error::io, {}, {}, "cannot reach the store: connection refused"};
  }
  verify_report verify() override { return {}; }
  std::uint64_t gc(std::uint64_t) override { return 0; }
  store_stats stats() override { return {}; }
};

}  // namespace

TEST_CASE("a reference the request carries in is followable: read_blob is offered when the tenant's store resolves it",
          "[offload]") {
  const auto mode = GENERATE(inject_mode::always, inject_mode::when_referenced, inject_mode::cost);
  CAPTURE(int(mode));
  memory_blob_store store([] { return std::int64_t(1700000000); });
  char_ratio_estimator estimator;
  offload_config cfg;
  cfg.inject = mode;
  offload_engine engine(cfg, store, estimator);
  const auto bytes = stored_output();
  const auto body = body_referencing(bytes);
  const auto& chat = *endpoint_named("chat");

  SECTION("stored for this tenant: offered, nothing offloaded again") {
    REQUIRE(store.put(bytes, blob_meta{sha256_hex(bytes), bytes.size(), "text", 0, "tenant-a", "read_file"}).error ==
            blob_error::none);
    auto r = engine.rewrite(chat.wire(), body, "tenant-a");
    CHECK(r.report.tool_injected);
    CHECK(r.report.offloads.empty());
    CHECK(r.report.fates == std::vector<output_fate>{output_fate::already_reference});
    CHECK(r.body.find("\"read_blob\"") != std::string::npos);
  }
  SECTION("stored only for another tenant, or nowhere: not offered (it could not be followed)") {
    REQUIRE(store.put(bytes, blob_meta{sha256_hex(bytes), bytes.size(), "text", 0, "tenant-b", "read_file"}).error ==
            blob_error::none);
    auto r = engine.rewrite(chat.wire(), body, "tenant-a");
    CHECK_FALSE(r.report.tool_injected);
  }
  SECTION("a pass that may not block asks to be run where it may") {
    auto r = engine.rewrite(chat.wire(), body, "tenant-a", std::nullopt, std::nullopt, output_reuse{.may_store = false});
    CHECK(r.report.store_needed);
  }
}

TEST_CASE("with the store unreachable a carried reference is still offered read_blob, whose call is a clear tool error",
          "[offload]") {
  const auto mode = GENERATE(inject_mode::always, inject_mode::when_referenced, inject_mode::cost);
  CAPTURE(int(mode));
  unreachable_store store;
  char_ratio_estimator estimator;
  offload_config cfg;
  cfg.inject = mode;
  offload_engine engine(cfg, store, estimator);
  const auto bytes = stored_output();
  // Several references, as a long conversation from another replica carries.
  auto body = nlohmann::json::parse(body_referencing(bytes));
  for (int i = 0; i < 5; ++i) body["messages"].push_back(body["messages"][2]);
  auto r = engine.rewrite(endpoint_named("chat")->wire(), body.dump(), "tenant-a");
  CHECK(r.report.tool_injected);  // was: not offered, the model could never learn the reference dangles
  CHECK(r.body.find("\"read_blob\"") != std::string::npos);
  CHECK(store.gets == 1);  // the store could not say: one lookup decides, not one per reference
  std::string error;
  auto req = parse_page_request(R"({"handle":")" + sha256_hex(bytes).substr(0, 16) + R"(","pattern":"row 7"})", error);
  REQUIRE(req);
  auto page = page_in(store, "tenant-a", *req, page_limits{});
  CHECK_FALSE(page.ok);
  CHECK(page.text.find("could not be reached") != std::string::npos);
  CHECK(page.text.find(sha256_hex(bytes).substr(0, 16)) != std::string::npos);  // names the reference it cannot follow
}
