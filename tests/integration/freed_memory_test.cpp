// After a burst of large request bodies the proxy's resident memory goes back
// down by itself, with no traffic after it (proxy/runtime/freed_memory.hpp):
// mimalloc alone keeps a quiet thread's freed pages for as long as it stays
// quiet.
#include <catch2/catch.hpp>

#include <fstream>
#include <thread>

#include "tests/integration/harness.hpp"
#include "tests/support/api_scenarios.hpp"

using namespace gistproxy::testing;

namespace {

// Anonymous memory only: the code and tables the burst first touched stay
// mapped, and are not what is handed back.
[[maybe_unused]] long resident_kib(int pid) {  // unused where the product is sanitized
  std::ifstream status("/proc/" + std::to_string(pid) + "/status");
  std::string line;
  while (std::getline(status, line))
    if (line.rfind("RssAnon:", 0) == 0) return std::atol(line.c_str() + 8);
  return -1;
}

}  // namespace

TEST_CASE("freed memory: a burst of large bodies is handed back once it is over", "[memory]") {
#if GISTPROXY_PRODUCT_SANITIZED
  SUCCEED("the sanitizer build runs on the sanitizer's allocator, not mimalloc: nothing of ours to hand back");
#else
  mock_upstream upstream;
  // No turn memory: it keeps each conversation's last body by design.
  proxy_process proxy({"--upstream", upstream.url(), "--turn-memory", "0", "--threads", "1"});
  const nlohmann::json request = {{"model", "gpt-4o-mini"},
                                  {"messages", {{{"role", "user"}, {"content", std::string(6 << 20, 'x')}}}}};
  const std::string body = request.dump();
  const long before = resident_kib(proxy.pid());
  REQUIRE(before > 0);
  // Four at once, twice: the bodies and their copies are resident together.
  for (int round = 0; round < 2; ++round) {
    std::vector<std::thread> clients;
    std::vector<int> statuses(4);
    for (int i = 0; i < 4; ++i)
      clients.emplace_back([&, i] {
        statuses[i] = http_request(proxy.port(), "POST", "/v1/chat/completions", body, key_header("chat")).status;
      });
    for (auto& c : clients) c.join();
    for (int s : statuses) CHECK(s == 200);
  }
  const long after_burst = resident_kib(proxy.pid());
  INFO("resident KiB: before " << before << ", right after the burst " << after_burst);
  REQUIRE(after_burst - before > 4 * 1024);  // the burst was resident when it ended
  // Then nothing is sent: what the burst freed must leave within seconds.
  long now = after_burst;
  const auto deadline = std::chrono::steady_clock::now() + std::chrono::seconds(20);
  while (now - before > (after_burst - before) / 2 && std::chrono::steady_clock::now() < deadline) {
    std::this_thread::sleep_for(std::chrono::milliseconds(100));
    now = resident_kib(proxy.pid());
  }
  INFO("resident KiB once quiet: " << now);
  CHECK(now - before <= (after_burst - before) / 2);
#endif
}
