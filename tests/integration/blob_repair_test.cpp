// A blob that went bad behind the proxy's back, through the real binary: the
// client re-sends the output's exact bytes every turn, so the turn that
// carries them repairs the blob (counted as an integrity failure) and the
// model reads it back; and `blob verify` names what the store never writes.
#include <sys/stat.h>

#include <catch2/catch.hpp>
#include <fstream>
#include <thread>

#include "rewrite/blob/digest.hpp"
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

void damage_file(const fs::path& file, const std::string& how) {
  if (how == "flipped") {
    std::fstream f(file, std::ios::in | std::ios::out | std::ios::binary);
    f.seekp(-10, std::ios::end);  // inside the compressed data: the file still looks whole
    f.put('\x01');
  } else {
    fs::resize_file(file, fs::file_size(file) - 100);
  }
}

// The proxy's log once a line holds `part` (bounded wait: it is written
// after the answer).
std::string log_with(const proxy_process& proxy, const std::string& part) {
  const auto deadline = std::chrono::steady_clock::now() + std::chrono::seconds(10);
  auto log = proxy.log();
  while (log.find(part) == std::string::npos && std::chrono::steady_clock::now() < deadline) {
    std::this_thread::sleep_for(std::chrono::milliseconds(20));
    log = proxy.log();
  }
  return log;
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
  damage_file(files[0], damage);
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

TEST_CASE("a blob a read found damaged is repaired by the next offload of its bytes at once, and counted once") {
  const auto damage = GENERATE(as<std::string>{}, "flipped", "truncated");
  INFO(damage);
  mock_upstream upstream;
  proxy_process proxy({"--upstream", upstream.url()});
  // A framework offloads through the service every turn, re-sending the
  // conversation, and serves the model's read_blob from /v1/blobs.
  const auto headers = key_header("chat");
  const auto body = request_for("chat", "find the needle", haystack()).dump();
  const auto page = "/v1/blobs/" + gistproxy::rewrite::sha256_hex(haystack()).substr(0, 16) + "?pattern=NEEDLE";
  REQUIRE(http_request(proxy.port(), "POST", "/v1/offload/chat", body, headers).status == 200);
  const auto files = blob_files(proxy.store_dir());
  REQUIRE(files.size() == 1);
  damage_file(files[0], damage);
  CHECK(http_request(proxy.port(), "GET", page, {}, headers).status == 502);  // the read finds it damaged
  // The next turn, seconds later: the conversation's previous turn saw the
  // blob stored, but a read has found it damaged since: the bytes repair it.
  REQUIRE(http_request(proxy.port(), "POST", "/v1/offload/chat", body, headers).status == 200);
  auto again = http_request(proxy.port(), "GET", page, {}, headers);
  CHECK(again.status == 200);  // was: 502 until the trust window (10 s) had passed
  CHECK(again.body.find(found.substr(std::string("found: ").size())) != std::string::npos);
  const std::string counted = "gistproxy_integrity_failures_total{api=\"blobs\"} 1";
  const auto metrics = metrics_with(proxy.admin_port(), {counted});
  CHECK(metrics.find(counted) != std::string::npos);
  CHECK(series_value(metrics, "gistproxy_integrity_failures_total{api=\"chat\"}") == 0);  // the read counted it
}

TEST_CASE("a put that finds its blob file cut or damaged replaces it and counts an integrity failure, with a warning") {
  const auto api = GENERATE(as<std::string>{}, "chat", "messages");
  const auto damage = GENERATE(as<std::string>{}, "truncated", "emptied", "foreign");
  INFO(api << ", " << damage);
  mock_upstream upstream;
  proxy_process proxy({"--upstream", upstream.url()});
  const auto output = haystack();
  REQUIRE(ask(proxy, api, "hello", output).status == 200);  // offloads and stores the output
  const auto files = blob_files(proxy.store_dir());
  REQUIRE(files.size() == 1);
  if (damage == "truncated") damage_file(files[0], damage);
  if (damage == "emptied") fs::resize_file(files[0], 0);
  if (damage == "foreign") std::ofstream(files[0], std::ios::binary | std::ios::trunc) << "not a blob at all";
  // Another conversation carrying the same output: nothing remembered
  // vouches for the blob, so its bytes are put, and the put finds the file
  // is not them. Nobody read it: only the put can count it.
  REQUIRE(ask(proxy, api, "plain question", output).status == 200);
  const std::string counted = "gistproxy_integrity_failures_total{api=\"" + api + "\"} 1";
  CHECK(metrics_with(proxy.admin_port(), {counted}).find(counted) != std::string::npos);  // was: 0, repaired unsaid
  CHECK(log_with(proxy, "damaged blobs replaced").find("damaged blobs replaced from the request's bytes") != std::string::npos);
  const auto verify = run_command({gistproxy_binary(), "blob", "verify", "--store", proxy.store_dir().string()});
  CHECK(verify.exit_code == 0);
  CHECK(verify.output.find("1 blobs checked, 0 corrupt") != std::string::npos);
}

TEST_CASE("blob verify fails on a FIFO or link anywhere in the store and names it, never opening it") {
  const auto store = temp_path("verify-store");
  const auto tenant = store / "t1" / "ab";
  fs::create_directories(tenant);
  const auto where = GENERATE(as<std::string>{}, "fifo", "fifo-as-directory", "link");
  INFO(where);
  fs::path odd;
  if (where == "fifo") odd = tenant / "leftover";
  if (where == "fifo-as-directory") odd = store / "t1" / "cd";
  if (where == "link") odd = tenant / "to-dev-zero";
  if (where == "link") fs::create_symlink("/dev/zero", odd);
  else REQUIRE(::mkfifo(odd.c_str(), 0600) == 0);
  // A FIFO nobody writes would hang a reader: verify must answer at once.
  const auto verify = run_command({gistproxy_binary(), "blob", "verify", "--store", store.string()});
  CHECK(verify.exit_code == 1);  // was: 0, "0 blobs checked, 0 corrupt"
  CHECK(verify.output.find(fs::path(odd).lexically_relative(store).string() + ": not a regular file") != std::string::npos);
  CHECK(verify.output.find("1 corrupt") != std::string::npos);
  fs::remove_all(store);
}
