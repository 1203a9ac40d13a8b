// What one tenant's offloads leave behind in the engine must not be visible to
// another: not the blobs (the store keys them by tenant) and not the derived
// text the engine caches, whose hit would make the second tenant's offload
// measurably faster and so confirm a guess of the first tenant's output.
#include <catch2/catch.hpp>

#include <atomic>
#include <string>

#include "rewrite/endpoint.hpp"
#include "rewrite/blob/memory_blob_store.hpp"
#include "rewrite/offload/engine.hpp"

using namespace gistproxy::rewrite;

namespace {

// Counts the work of making a gist: shaping and counting a reference both
// ask the estimator, a cached gist does not.
class counting_estimator final : public token_estimator {
 public:
  std::uint64_t estimate(std::string_view bytes, content_kind kind) const override {
    ++calls;
    return inner.estimate(bytes, kind);
  }
  std::uint64_t max_tokens(std::size_t bytes) const override { return inner.max_tokens(bytes); }
  std::string_view name() const override { return inner.name(); }
  bool exact() const override { return false; }
  mutable std::atomic<int> calls{0};
  char_ratio_estimator inner;
};

std::string body_with(const std::string& output) {
  return R"({"model":"gpt-4o","messages":[{"role":"user","content":"go"},)"
         R"({"role":"assistant","content":null,"tool_calls":[{"id":"c1","type":"function","function":{"name":"read_file","arguments":"{}"}}]},)"
         R"({"role":"tool","tool_call_id":"c1","content":")" + output + R"("}]})";
}

}  // namespace

TEST_CASE("a tenant offloading what another tenant offloaded does the same work, never a shared cache hit",
          "[offload]") {
  std::string output;
  for (int i = 0; i < 400; ++i) output += "secret line " + std::to_string(i) + " of tenant a's file\\n";
  const auto body = body_with(output);
  memory_blob_store store([] { return std::int64_t(1700000000); });
  counting_estimator estimator;
  offload_config cfg;
  cfg.threshold_tokens = 100;
  offload_engine engine(cfg, store, estimator);

  auto work_of = [&](const std::string& tenant, const std::string& sent) {
    const int before = estimator.calls;
    auto r = engine.rewrite(endpoint_named("chat")->wire(), sent, tenant);
    REQUIRE(r.report.outcome == rewrite_outcome::rewritten);
    return estimator.calls - before;
  };
  // What is counted once per thread (read_blob's definition) is counted here.
  work_of("warm-up", body_with(output + "another output\\n"));
  auto work = [&](const std::string& tenant) { return work_of(tenant, body); };
  const int first = work("tenant-a");
  const int again = work("tenant-a");  // the same tenant: its own cache serves
  const int other = work("tenant-b");
  CHECK(again < first);
  CHECK(other == first);
}
