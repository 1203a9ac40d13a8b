// A blob that went bad behind the proxy's back, through the real binary: the
// client re-sends the output's exact bytes every turn, so the turn that
// carries them repairs the blob and the model reads it back.
#include <catch2/catch.hpp>
#include <fstream>

#include "tests/integration/harness.hpp"
#include "tests/support/api_scenarios.hpp"

using namespace gistproxy::testing;
namespace fs = std::filesystem;

namespace {

const std::string found = "found: 2501: config line 2500: NEEDLE secret_port=48213";

std::vector<fs::path> blob_files(const fs::path& root) {
  std::vector<fs::path> out;
  for (auto& e : fs::recursive_directory_iterator(root))
    if (e.path().extension() == ".blob") out.push_back(e.path());
  return out;
}

http_result ask(const proxy_process& proxy, const std::string& api, const std::string& question, const std::string& output) {
  return http_request(proxy.port(), "POST", path_for(api), request_for(api, question, output).dump(), key_header(api));
}

}  // namespace

TEST_CASE("a blob deleted behind the proxy's back inside the trust window is stored again from the request and pages back") {
  const auto api = GENERATE(as<std::string>{}, "chat", "responses", "messages", "gemini");
  mock_upstream upstream;
  proxy_process proxy({"--upstream", upstream.url()});
  const auto output = haystack();
  auto first = ask(proxy, api, "find the needle", output);
  REQUIRE(first.status == 200);
  REQUIRE(answer_text(api, nlohmann::json::parse(first.body)) == found);
  const auto files = blob_files(proxy.store_dir());
  REQUIRE(files.size() == 1);
  fs::remove(files[0]);
  // The same turn again, seconds later: the turn memory and the store both
  // still trust that the blob is there, so nothing asks the disk before the
  // model's read_blob call does.
  auto again = ask(proxy, api, "find the needle", output);
  REQUIRE(again.status == 200);
  CHECK(answer_text(api, nlohmann::json::parse(again.body)) == found);  // was: "found: no needle found"
  CHECK(upstream.llm_bodies().back().find("no stored output has handle") == std::string::npos);
  CHECK(fs::exists(files[0]));
}

TEST_CASE("a damaged blob is repaired by the next turn that re-sends its bytes across a restart") {
  const auto api = GENERATE(as<std::string>{}, "chat", "messages");
  const auto damage = GENERATE(as<std::string>{}, "flipped", "truncated");
  INFO(api << ", " << damage);
  mock_upstream upstream;
  const auto store = temp_path("repair-store");
  const auto output = haystack();
  {
    proxy_process proxy({"--upstream", upstream.url(), "--store", store.string()});
    REQUIRE(ask(proxy, api, "hello", output).status == 200);  // offloads and stores the output
    proxy.stop();
  }
  const auto files = blob_files(store);
  REQUIRE(files.size() == 1);
  if (damage == "flipped") {
    std::fstream f(files[0], std::ios::in | std::ios::out | std::ios::binary);
    f.seekp(-10, std::ios::end);  // inside the compressed data: the file still looks whole
    f.put('\x01');
  } else {
    fs::resize_file(files[0], fs::file_size(files[0]) - 100);
  }
  for (int turn = 0; turn < 2; ++turn) {
    INFO("turn " << turn << " after the restart");
    proxy_process proxy({"--upstream", upstream.url(), "--store", store.string()});
    auto res = ask(proxy, api, "find the needle", output);
    REQUIRE(res.status == 200);
    CHECK(answer_text(api, nlohmann::json::parse(res.body)) == found);  // was: "found: no needle found", every turn
  }
  const auto verify = run_command({gistproxy_binary(), "blob", "verify", "--store", store.string()});
  CHECK(verify.exit_code == 0);
  CHECK(verify.output.find("0 corrupt") != std::string::npos);
  fs::remove_all(store);
}
