// serve --record writes what replay needs and never a credential; a recording
// replays to the bodies serve forwarded, byte for byte.
#include <catch2/catch.hpp>
#include <signal.h>

#include <thread>

#include "proxy/runtime/config.hpp"
#include "proxy/commands/wiring.hpp"
#include "rewrite/blob/memory_blob_store.hpp"
#include "rewrite/replay/replay_run.hpp"
#include "tests/integration/harness.hpp"
#include "tests/support/child_process.hpp"

using namespace gistproxy::testing;
namespace gp = gistproxy;

namespace {

std::string tool_output(const std::string& salt) {
  std::string s;
  for (int i = 0; s.size() < 60000; ++i) {
    if (i == 700) s += "line 700: NEEDLE here\n";
    s += salt + " row " + std::to_string(i) + ": value " + std::to_string(i * 7 % 101) + "\n";
  }
  return s;
}

nlohmann::json chat_request(const std::string& ask, const std::string& output, bool stream = false) {
  nlohmann::json j = {{"model", "gpt-4o"},
                      {"messages", {{{"role", "user"}, {"content", ask}},
                                    {{"role", "assistant"}, {"tool_calls", {{{"id", "c1"}, {"type", "function"}, {"function", {{"name", "cat"}, {"arguments", "{}"}}}}}}},
                                    {{"role", "tool"}, {"tool_call_id", "c1"}, {"content", output}}}},
                      {"tools", {{{"type", "function"}, {"function", {{"name", "cat"}}}}}}};
  if (stream) j["stream"] = true;
  return j;
}

std::vector<nlohmann::json> read_lines(const std::filesystem::path& p) {
  std::vector<nlohmann::json> out;
  std::ifstream in(p);
  std::string line;
  while (std::getline(in, line))
    if (!line.empty()) out.push_back(nlohmann::json::parse(line));
  return out;
}

}  // namespace

TEST_CASE("serve --record: one line per exchange with bodies, response, status and hops, never credentials") {
  mock_upstream upstream;
  auto file = temp_path("record.jsonl");
  std::vector<std::string> sent;
  {
    proxy_process proxy({"--upstream", upstream.url(), "--record", file.string()});
    const std::map<std::string, std::string> secrets = {{"Authorization", "Bearer sk-secret-AAAA1111"},
                                                        {"Cookie", "session=cookie-secret-2222"}};
    sent.push_back(chat_request("hello", tool_output("a")).dump());
    CHECK(http_request(proxy.port(), "POST", "/v1/chat/completions", sent.back(), secrets).status == 200);
    sent.push_back(chat_request("find the needle", tool_output("b")).dump());
    CHECK(http_request(proxy.port(), "POST", "/v1/chat/completions", sent.back(), secrets).status == 200);
    sent.push_back(chat_request("hello stream", tool_output("c"), true).dump());
    CHECK(http_request(proxy.port(), "POST", "/v1/chat/completions?x=1", sent.back(), secrets).status == 200);
    nlohmann::json msg = {{"model", "claude"}, {"max_tokens", 10}, {"messages", {{{"role", "user"}, {"content", "hi"}}}}};
    sent.push_back(msg.dump());
    CHECK(http_request(proxy.port(), "POST", "/v1/messages", sent.back(), {{"x-api-key", "sk-ant-secret-3333"}}).status == 200);
    REQUIRE(proxy.stop() == 0);  // the writer drains before exit
  }
  auto text = [&] {
    std::ifstream in(file);
    return std::string(std::istreambuf_iterator<char>(in), {});
  }();
  for (auto secret : {"sk-secret-AAAA1111", "cookie-secret-2222", "sk-ant-secret-3333", "Bearer"}) {
    INFO(secret);
    CHECK(text.find(secret) == std::string::npos);
  }
  auto lines = read_lines(file);
  REQUIRE(lines.size() == 4);
  for (std::size_t i = 0; i < lines.size(); ++i) {
    CHECK(lines[i]["request_body"] == sent[i]);
    CHECK(lines[i]["status"] == 200);
    CHECK(lines[i]["trace_id"].get<std::string>().size() == 32);
    CHECK(lines[i]["duration_ms"].get<double>() >= lines[i]["upstream_ms"].get<double>());
  }
  CHECK(lines[0]["api"] == "chat");
  CHECK(lines[0].contains("forwarded_body"));  // offloaded: differs from what the client sent
  CHECK(lines[0]["forwarded_body"].get<std::string>().find("read_blob(") != std::string::npos);
  CHECK(lines[1]["hops"] == 1);  // the model paged the needle in
  INFO(lines[1]["response_body"].get<std::string>());
  CHECK(lines[1]["response_body"].get<std::string>().find("NEEDLE here") != std::string::npos);
  CHECK(lines[2]["path"] == "/v1/chat/completions");  // no query string
  CHECK(lines[2]["response_body"].get<std::string>().find("data: [DONE]") != std::string::npos);
  // The stream is also kept assembled, as the unstreamed answer would have been.
  CHECK(lines[2]["response"]["object"] == "chat.completion");
  CHECK(lines[2]["response"]["choices"][0]["message"]["content"] == "Hello from the mock.");
  CHECK_FALSE(lines[0].contains("response"));  // a JSON answer needs no assembling
  CHECK_FALSE(lines[3].contains("forwarded_body"));  // nothing to offload: forwarded as sent

  // Replay with serve's defaults gives the bodies serve forwarded, byte for byte.
  auto cfg = gp::proxy::parse_serve_args({}, nullptr).cfg;
  REQUIRE(cfg);
  gp::rewrite::memory_blob_store store([] { return std::int64_t(1000); });
  auto estimator = gp::proxy::make_tokenizer(*cfg);  // serve's default tokenizer, as serve counted
  gp::rewrite::offload_engine engine(gp::proxy::offload_config_of(*cfg), store, *estimator);
  gp::rewrite::replayer replayer(engine, store, *estimator);
  auto trace = gp::rewrite::read_trace(text);
  CHECK(trace.format == "gistproxy-recording");
  REQUIRE(trace.requests.size() == 4);
  std::size_t compared = 0;
  replayer.run(trace, "replay", [&](const gp::rewrite::replayed_request& r) {
    const auto& recorded = r.recorded->forwarded.empty() ? r.recorded->body() : r.recorded->forwarded;
    CHECK(r.forwarded == recorded);
    ++compared;
  });
  CHECK(compared == 4);

  // And the command prints the totals as one JSON object.
  auto out = run_command({gistproxy_binary(), "replay", "--json", file.string()});
  INFO(out.output);
  REQUIRE(out.exit_code == 0);
  auto j = nlohmann::json::parse(out.output);
  CHECK(j["turns"] == 4);
  CHECK(j["offloads"] == 3);
  CHECK(j["tokens_after"].get<std::uint64_t>() < j["tokens_before"].get<std::uint64_t>() / 4);
  CHECK(j["traces"][0]["format"] == "gistproxy-recording");
  CHECK(j["recorded_page_in_hops"] == 1);  // the needle request
  // Dollars and the simulated prompt cache, under the names the docs give.
  CHECK(j["tokenizer"] == "o200k_base");
  CHECK(j["prices_date"] == "2026-11-29");
  for (const char* key : {"cache_read_tokens_before", "cache_read_tokens_after", "priced_turns", "unpriced_turns"})
    CHECK(j[key].is_number_unsigned());
  const auto priced = j["priced_turns"].get<std::uint64_t>();
  CHECK(priced + j["unpriced_turns"].get<std::uint64_t>() == 4);
  if (priced) {
    CHECK(j["cost_usd_before"].get<double>() > j["cost_usd_after"].get<double>());
  } else {
    CHECK(j["cost_usd_before"].is_null());  // never $0 for models without a price
  }
  CHECK(j["traces"][0].contains("cost_usd_before"));
}

TEST_CASE("serve --record rotates its file past --record-max-bytes") {
  mock_upstream upstream;
  auto file = temp_path("rotating.jsonl");
  {
    proxy_process proxy({"--upstream", upstream.url(), "--record", file.string(), "--record-max-bytes", "1500"});
    nlohmann::json msg = {{"model", "claude"}, {"max_tokens", 10}, {"messages", {{{"role", "user"}, {"content", std::string(600, 'x')}}}}};
    for (int i = 0; i < 4; ++i)
      CHECK(http_request(proxy.port(), "POST", "/v1/messages", msg.dump()).status == 200);
    REQUIRE(proxy.stop() == 0);
  }
  auto rotated = file;
  rotated += ".1";
  CHECK(std::filesystem::exists(rotated));
  CHECK(std::filesystem::file_size(file) <= 1500);
  CHECK(read_lines(file).size() + read_lines(rotated).size() >= 2);
}

TEST_CASE("gistproxy replay --sweep-threshold compares policies in one run") {
  auto file = temp_path("bodies.jsonl");
  {
    std::ofstream out(file);
    out << chat_request("hello", tool_output("small").substr(0, 6000)).dump() << "\n"
        << chat_request("hello", tool_output("large")).dump() << "\n";
  }
  auto out = run_command({gistproxy_binary(), "replay", "--json", "--sweep-threshold", "1000,100000", file.string()});
  INFO(out.output);
  REQUIRE(out.exit_code == 0);
  auto j = nlohmann::json::parse(out.output);
  REQUIRE(j["sweep"].size() == 2);
  CHECK(j["sweep"][0]["threshold_tokens"] == 1000);
  CHECK(j["sweep"][0]["offloads"] == 2);
  CHECK(j["sweep"][1]["offloads"] == 0);

  auto bad = run_command({gistproxy_binary(), "replay", "--sweep-threshold", "10,abc", file.string()});
  CHECK(bad.exit_code == 2);
  CHECK(bad.output.find("not a comma-separated list") != std::string::npos);
  auto missing = run_command({gistproxy_binary(), "replay", "/nonexistent.jsonl"});
  CHECK(missing.exit_code == 1);
  CHECK(missing.output.find("/nonexistent.jsonl: cannot open") != std::string::npos);
}

TEST_CASE("the committed recording (real OpenHands calls through serve) replays to its forwarded bodies byte for byte") {
  std::ifstream in(std::filesystem::path(GISTPROXY_FIXTURES) / "traces" / "gistproxy-recording__openhands-astropy.jsonl");
  REQUIRE(in);
  std::string text((std::istreambuf_iterator<char>(in)), {});
  auto trace = gp::rewrite::read_trace(text);
  REQUIRE(trace.requests.size() == 4);
  // Recorded with serve's defaults (scripts/record-fixture).
  auto cfg = gp::proxy::parse_serve_args({}, nullptr).cfg;
  gp::rewrite::memory_blob_store store([] { return std::int64_t(1000); });
  auto estimator = gp::proxy::make_tokenizer(*cfg);
  gp::rewrite::offload_engine engine(gp::proxy::offload_config_of(*cfg), store, *estimator);
  std::size_t offloaded = 0;
  std::size_t rewritten = 0;
  auto stats = gp::rewrite::replayer(engine, store, *estimator).run(trace, "replay", [&](const gp::rewrite::replayed_request& r) {
    // Call 1 is light: under --inject-read-blob=auto (the default) serve forwarded it as sent.
    CHECK(r.forwarded == (r.recorded->forwarded.empty() ? r.recorded->body() : r.recorded->forwarded));
    rewritten += !r.recorded->forwarded.empty();
    offloaded += r.report.offloads.size();
  });
  CHECK(rewritten == 3);
  CHECK(offloaded == 3);  // calls 2-4 each carry the same large ls -R output
  // read_blob arrives with the output that pays for it (call 2): one prefix break, then stable.
  CHECK(stats.prefix_stable_after + 1 == stats.prefix_pairs);
}

TEST_CASE("SIGHUP never stops the proxy: a request in flight completes and the record file is reopened") {
  mock_upstream upstream;
  auto dir = temp_path("hup");
  std::filesystem::create_directories(dir);
  const auto file = dir / "rec.jsonl";
  proxy_process proxy({"--upstream", upstream.url(), "--record", file.string()});
  std::thread slow([&] {
    auto res = http_request(proxy.port(), "GET", "/slow?ms=800");
    CHECK(res.status == 200);
  });
  // The request is in flight once the upstream has it.
  for (int i = 0; i < 500 && upstream.requests_served() == 0; ++i) std::this_thread::sleep_for(std::chrono::milliseconds(10));
  REQUIRE(upstream.requests_served() == 1);
  std::filesystem::rename(file, dir / "moved.jsonl");  // logrotate, then its postrotate HUP
  REQUIRE(::kill(proxy.pid(), SIGHUP) == 0);
  slow.join();
  CHECK(http_request(proxy.admin_port(), "GET", "/healthz").status == 200);
  CHECK(http_request(proxy.port(), "GET", "/echo").status == 200);
  // The record of the next exchange lands in a new file at the path.
  bool landed = false;
  for (int i = 0; i < 500 && !landed; ++i) {
    landed = std::filesystem::exists(file) && std::filesystem::file_size(file) > 0;
    if (!landed) std::this_thread::sleep_for(std::chrono::milliseconds(10));
  }
  CHECK(landed);
}
