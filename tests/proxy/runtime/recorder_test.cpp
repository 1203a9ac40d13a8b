#include <catch2/catch.hpp>
#include <nlohmann/json.hpp>
#include <sys/resource.h>
#include <unistd.h>

#include <chrono>
#include <csignal>
#include <filesystem>
#include <fstream>
#include <thread>

#include "proxy/runtime/recorder.hpp"
#include "rewrite/replay/trace_formats.hpp"

using namespace gistproxy;

TEST_CASE("record lines carry bodies exactly: text as JSON strings, invalid UTF-8 as base64") {
  proxy::exchange_record r;
  r.api = "chat";
  r.method = "POST";
  r.path = "/v1/chat/completions";
  r.trace_id = std::string(32, 'a');
  r.status = 200;
  r.request_body = "{\"messages\":[{\"role\":\"tool\",\"content\":\"caf\xC3\xA9 \\u0000 \\\"q\\\" \xF0\x9F\x99\x82\"}]}";
  r.forwarded_body = std::string("{\"bad\":\"\xFF\xFE\"}");
  r.response_body = "{\"ok\":true}";
  auto line = proxy::to_record_line(r);
  auto j = nlohmann::json::parse(line);  // strict parse: the line is valid JSON and UTF-8
  CHECK(j["request_body"] == r.request_body);
  CHECK(j.contains("forwarded_body_base64"));
  CHECK(j["status"] == 200);
  auto trace = rewrite::read_trace(line);
  REQUIRE(trace.requests.size() == 1);
  CHECK(trace.requests[0].body() == r.request_body);
  CHECK(trace.requests[0].forwarded == *r.forwarded_body);

  // Surrogates and overlong forms are not UTF-8 either.
  r.forwarded_body.reset();
  for (std::string bad : {"\xED\xA0\x80", "\xC0\xAF", "\xE0\x80\xAF", "\xF4\x90\x80\x80", "abc\xE2\x82"}) {
    r.request_body = bad;
    auto l = nlohmann::json::parse(proxy::to_record_line(r));
    CHECK(l.contains("request_body_base64"));
  }
}

TEST_CASE("a recorder whose queue is full drops and counts instead of blocking") {
  auto file = std::filesystem::temp_directory_path() / ("gistproxy-recorder-" + std::to_string(::getpid()) + ".jsonl");
  telemetry::registry registry;
  telemetry::metric_catalogue metrics(registry);
  {
    proxy::recorder rec({file, 1ull << 30, 600}, metrics);  // room for one small record only
    proxy::exchange_record big;
    big.path = "/v1/chat/completions";
    big.request_body = std::string(4096, 'x');
    rec.submit(std::move(big));
  }  // destruction drains what was queued
  CHECK(metrics.records.labels({"dropped"}).value() == 1);
  CHECK(std::filesystem::file_size(file) == 0);
  std::filesystem::remove(file);
}

namespace {

proxy::exchange_record record_of_size(std::size_t body) {
  proxy::exchange_record r;
  r.path = "/v1/chat/completions";
  r.request_body = std::string(body, 'r');
  return r;
}

// Waits (bounded) until the counter reaches `n`.
bool counted(telemetry::metric_catalogue& m, std::string_view result, double n) {
  for (int i = 0; i < 500; ++i) {
    if (m.records.labels({result}).value() >= n) return true;
    std::this_thread::sleep_for(std::chrono::milliseconds(10));
  }
  return false;
}

std::vector<std::string> lines_of(const std::filesystem::path& p) {
  std::ifstream in(p, std::ios::binary);
  std::vector<std::string> out;
  for (std::string line; std::getline(in, line);) out.push_back(line);
  return out;
}

std::filesystem::path fresh_dir(const std::string& name) {
  auto d = std::filesystem::temp_directory_path() / ("gistproxy-rec-" + name + "-" + std::to_string(::getpid()));
  std::filesystem::remove_all(d);
  std::filesystem::create_directories(d);
  return d;
}

}  // namespace

TEST_CASE("a rotation whose rename fails keeps the file and appends to it: nothing recorded is lost") {
  auto dir = fresh_dir("rotate");
  auto file = dir / "rec.jsonl";
  // FILE.1 is a non-empty directory: rename(FILE, FILE.1) fails, even as root.
  std::filesystem::create_directories(dir / "rec.jsonl.1" / "occupied");
  telemetry::registry registry;
  telemetry::metric_catalogue metrics(registry);
  {
    proxy::recorder rec({file, 3000, 1ull << 20}, metrics);
    for (int i = 0; i < 3; ++i) rec.submit(record_of_size(1000));  // the third passes max_file_bytes
  }
  CHECK(metrics.records.labels({"written"}).value() == 3);
  CHECK(metrics.records.labels({"rotation_failed"}).value() >= 1);
  auto lines = lines_of(file);
  CHECK(lines.size() == 3);  // was: the file reopened truncated, the first two records gone
  for (const auto& l : lines) CHECK(nlohmann::json::accept(l));
  std::filesystem::remove_all(dir);
}

TEST_CASE("a record the disk cannot hold is rolled back whole: no partial line, the next one readable, counted") {
  auto dir = fresh_dir("full");
  auto file = dir / "rec.jsonl";
  telemetry::registry registry;
  telemetry::metric_catalogue metrics(registry);
  // RLIMIT_FSIZE makes writes past a size fail with EFBIG after a short
  // write, as a full disk does (and works as root); SIGXFSZ is ignored so the
  // write fails instead of killing the process.
  auto old_handler = std::signal(SIGXFSZ, SIG_IGN);
  rlimit old_limit{};
  ::getrlimit(RLIMIT_FSIZE, &old_limit);
  {
    proxy::recorder rec({file, 1ull << 30, 1ull << 20}, metrics);
    rec.submit(record_of_size(100));
    REQUIRE(counted(metrics, "written", 1));
    rlimit small = old_limit;
    small.rlim_cur = std::filesystem::file_size(file) + 1000;
    REQUIRE(::setrlimit(RLIMIT_FSIZE, &small) == 0);
    rec.submit(record_of_size(5000));  // passes the limit part way
    const bool failed = counted(metrics, "failed", 1);
    ::setrlimit(RLIMIT_FSIZE, &old_limit);
    REQUIRE(failed);
    rec.submit(record_of_size(100));
    REQUIRE(counted(metrics, "written", 2));
  }
  std::signal(SIGXFSZ, old_handler);
  auto lines = lines_of(file);
  CHECK(lines.size() == 2);
  for (const auto& l : lines) CHECK(nlohmann::json::accept(l));  // was: a partial line with the next glued to it
  CHECK(metrics.records.labels({"written"}).value() == 2);
  CHECK(metrics.records.labels({"failed"}).value() == 1);
  std::filesystem::remove_all(dir);
}

TEST_CASE("reopen() starts a new file at the path after an external rotation moved it") {
  auto dir = fresh_dir("reopen");
  auto file = dir / "rec.jsonl";
  telemetry::registry registry;
  telemetry::metric_catalogue metrics(registry);
  {
    proxy::recorder rec({file, 1ull << 30, 1ull << 20}, metrics);
    rec.submit(record_of_size(10));
    REQUIRE(counted(metrics, "written", 1));
    std::filesystem::rename(file, dir / "moved.jsonl");  // what logrotate does
    rec.reopen();
    rec.submit(record_of_size(10));
    REQUIRE(counted(metrics, "written", 2));
  }
  CHECK(lines_of(dir / "moved.jsonl").size() == 1);
  CHECK(lines_of(file).size() == 1);
  std::filesystem::remove_all(dir);
}
