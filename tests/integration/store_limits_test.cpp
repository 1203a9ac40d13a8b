// The store as a shared resource, through the real binary: past
// --store-max-bytes new offloads stay inline (fail-open, counted), and the
// offload service refuses callers without an API key unless the operator
// lets them share one anonymous tenant.
#include <catch2/catch.hpp>

#include "tests/integration/harness.hpp"
#include "tests/support/api_scenarios.hpp"

using namespace gistproxy::testing;
namespace fs = std::filesystem;

namespace {

std::size_t stored_blobs(const fs::path& store) {
  std::size_t n = 0;
  if (!fs::exists(store)) return 0;
  for (const auto& e : fs::recursive_directory_iterator(store)) n += e.path().extension() == ".blob";
  return n;
}

std::string error_type(const http_result& r) {
  auto j = nlohmann::json::parse(r.body, nullptr, false);
  return j.is_object() && j.contains("error") && j["error"].is_object() ? j["error"].value("type", "") : "";
}

}  // namespace

TEST_CASE("past --store-max-bytes an output stays inline: forwarded as sent and counted as store_full") {
  mock_upstream upstream;
  proxy_process proxy({"--upstream", upstream.url(), "--store-max-bytes", "1KiB"});
  auto res = http_request(proxy.port(), "POST", path_for("chat"), request_for("chat", "hello", haystack()).dump(),
                          key_header("chat"));
  REQUIRE(res.status == 200);  // fail-open: the client never hears of it
  REQUIRE(upstream.llm_bodies().size() == 1);
  CHECK(upstream.llm_bodies()[0].find("NEEDLE secret_port=48213") != std::string::npos);  // was: offloaded past any bound
  CHECK(stored_blobs(proxy.store_dir()) == 0);
  const std::string counted = "gistproxy_rewrite_failures_total{api=\"chat\",reason=\"store_full\"} 1";
  CHECK(metrics_with(proxy.admin_port(), {counted}).find(counted) != std::string::npos);
}

TEST_CASE("the offload service refuses a caller without an API key with a 401 unless --offload-service-anonymous on") {
  mock_upstream upstream;
  const auto body = request_for("chat", "hello", haystack()).dump();
  const std::string handle(64, 'a');
  SECTION("refused by default: nothing stored, nothing read") {
    proxy_process proxy({"--upstream", upstream.url()});
    auto offload = http_request(proxy.port(), "POST", "/v1/offload/chat", body, {});
    CHECK(offload.status == 401);  // was: 200, stored under the shared "anonymous" tenant
    CHECK(error_type(offload) == "unauthorized");
    CHECK(http_request(proxy.port(), "GET", "/v1/blobs/" + handle + "?raw=1", {}, {}).status == 401);
    CHECK(stored_blobs(proxy.store_dir()) == 0);
    // With a key the same body is served.
    CHECK(http_request(proxy.port(), "POST", "/v1/offload/chat", body, key_header("chat")).status == 200);
    CHECK(stored_blobs(proxy.store_dir()) == 1);
  }
  SECTION("allowed by the operator: keyless callers share one tenant") {
    proxy_process proxy({"--upstream", upstream.url(), "--offload-service-anonymous", "on"});
    auto offload = http_request(proxy.port(), "POST", "/v1/offload/chat", body, {});
    REQUIRE(offload.status == 200);
    CHECK(fs::exists(proxy.store_dir() / "anonymous"));
    const std::string stored = nlohmann::json::parse(offload.body)["offloads"][0]["handle"];
    CHECK(http_request(proxy.port(), "GET", "/v1/blobs/" + stored + "?raw=1", {}, {}).body == haystack());
  }
}
