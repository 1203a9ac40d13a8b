#include <sys/wait.h>
#include <zlib.h>

#include <catch2/catch.hpp>
#include <cstdio>

#include "tests/integration/harness.hpp"

using namespace gistproxy::testing;

namespace {

std::string big_output(std::size_t bytes) {
  std::string s;
  for (int i = 0; s.size() < bytes; ++i)
    s += "line " + std::to_string(i) + ": value=" + std::to_string(i * 7919 % 10007) + " status=ok \xE2\x9C\x93\n";
  return s;
}

nlohmann::json request_for(const std::string& api, const std::string& output) {
  if (api == "chat")
    return {{"model", "gpt-4o"},
            {"messages", {{{"role", "user"}, {"content", "check"}},
                          {{"role", "assistant"}, {"tool_calls", {{{"id", "c1"}, {"type", "function"},
                                                                    {"function", {{"name", "run"}, {"arguments", "{}"}}}}}}},
                          {{"role", "tool"}, {"tool_call_id", "c1"}, {"content", output}}}},
            {"tools", {{{"type", "function"}, {"function", {{"name", "run"}}}}}}};
  if (api == "responses")
    return {{"model", "gpt-5"},
            {"input", {{{"role", "user"}, {"content", "check"}},
                       {{"type", "function_call"}, {"call_id", "c1"}, {"name", "run"}, {"arguments", "{}"}},
                       {{"type", "function_call_output"}, {"call_id", "c1"}, {"output", output}}}},
            {"tools", {{{"type", "function"}, {"name", "run"}}}}};
  return {{"model", "claude-sonnet-4-5"},
          {"max_tokens", 100},
          {"messages", {{{"role", "user"}, {"content", "check"}},
                        {{"role", "assistant"}, {"content", {{{"type", "tool_use"}, {"id", "t1"}, {"name", "run"}, {"input", nlohmann::json::object()}}}}},
                        {{"role", "user"}, {"content", {{{"type", "tool_result"}, {"tool_use_id", "t1"}, {"content", output}}}}}}},
          {"tools", {{{"name", "run"}, {"input_schema", {{"type", "object"}}}}}}};
}

std::string path_for(const std::string& api) {
  return api == "chat" ? "/v1/chat/completions" : api == "responses" ? "/v1/responses" : "/v1/messages";
}

std::string run_command(const std::string& cmd, int& status) {
  std::string out;
  FILE* p = popen(cmd.c_str(), "r");
  char buf[65536];
  std::size_t n;
  while ((n = fread(buf, 1, sizeof buf, p)) > 0) out.append(buf, n);
  status = pclose(p);
  return out;
}

}  // namespace

TEST_CASE("a 100 KB tool output reaches the upstream as a reference, identically twice, and pages back exactly") {
  auto api = GENERATE(as<std::string>{}, "chat", "responses", "messages");
  mock_upstream upstream;
  auto spans = temp_path("spans.jsonl");
  proxy_process proxy({"--upstream", upstream.url(), "--span-log", spans.string()});
  auto output = big_output(100 * 1024);
  auto body = request_for(api, output).dump();
  std::map<std::string, std::string> key = {{api == "messages" ? "x-api-key" : "Authorization", "sk-tenant-a"}};
  REQUIRE(http_request(proxy.port(), "POST", path_for(api), body, key).status == 200);
  REQUIRE(http_request(proxy.port(), "POST", path_for(api), body, key).status == 200);

  auto seen = upstream.llm_bodies();
  REQUIRE(seen.size() == 2);
  CHECK(seen[0] == seen[1]);                        // deterministic: identical upstream bodies
  CHECK(seen[0].size() < body.size() / 4);          // the bytes left the window
  CHECK(seen[0].find("line 2000: ") == std::string::npos);
  auto pos = seen[0].find("read_blob(\\\"");
  REQUIRE(pos != std::string::npos);
  auto handle = seen[0].substr(pos + 12, 16);

  int status = 0;
  auto bytes = run_command(std::string(gistproxy_binary()) + " blob get " + handle + " --store " +
                               proxy.store_dir().string() + " 2>&1",
                           status);
  CHECK(status == 0);
  CHECK(bytes == output);
  // Another key cannot read it.
  run_command(std::string(gistproxy_binary()) + " blob get " + handle + " --store " + proxy.store_dir().string() +
                  " --api-key sk-tenant-b >/dev/null 2>&1",
              status);
  CHECK(WEXITSTATUS(status) == 1);

  auto all = read_spans_until(spans, [](const auto& s) { return count_named(s, "compaction") >= 2; });
  std::size_t compactions = 0;
  for (auto& s : all) {
    if (s["name"] != "compaction") continue;
    ++compactions;
    CHECK(s["attributes"]["gistproxy.strategy"] == "offload");
    CHECK(s["attributes"]["gistproxy.bytes_offloaded"] == output.size());
    CHECK(s["attributes"]["gistproxy.handle"].get<std::string>().rfind(handle, 0) == 0);
    CHECK(s["attributes"]["gistproxy.tokens_before"].get<std::int64_t>() >
          s["attributes"]["gistproxy.tokens_after"].get<std::int64_t>());
    CHECK(s["attributes"]["gen_ai.tool.name"] == "run");
    CHECK(s.dump().find("line 2000: ") == std::string::npos);  // never the bytes
  }
  CHECK(compactions == 2);

  auto metrics = metrics_with(proxy.admin_port(), {"gistproxy_dedupe_hits_total{api=\"" + api + "\"} 1"});
  CHECK(metrics.find("gistproxy_dedupe_hits_total{api=\"" + api + "\"} 1") != std::string::npos);
  CHECK(metrics.find("gistproxy_store_objects 1") != std::string::npos);
}

TEST_CASE("a gzip-encoded request body is decoded, then rewritten") {
  mock_upstream upstream;
  proxy_process proxy({"--upstream", upstream.url()});
  auto body = request_for("chat", big_output(50000)).dump();
  z_stream zs{};
  deflateInit2(&zs, 6, Z_DEFLATED, 16 + MAX_WBITS, 8, Z_DEFAULT_STRATEGY);
  std::string gz(deflateBound(&zs, body.size()) + 64, '\0');
  zs.next_in = reinterpret_cast<Bytef*>(body.data());
  zs.avail_in = uInt(body.size());
  zs.next_out = reinterpret_cast<Bytef*>(gz.data());
  zs.avail_out = uInt(gz.size());
  REQUIRE(deflate(&zs, Z_FINISH) == Z_STREAM_END);
  gz.resize(zs.total_out);
  deflateEnd(&zs);
  auto res = http_request(proxy.port(), "POST", "/v1/chat/completions", gz, {{"Content-Encoding", "gzip"}});
  REQUIRE(res.status == 200);
  auto seen = upstream.llm_bodies().at(0);
  CHECK(nlohmann::json::accept(seen));
  CHECK(seen.find("read_blob(\\\"") != std::string::npos);
}

TEST_CASE("bodies the rewriter cannot use are forwarded untouched and counted") {
  mock_upstream upstream;
  proxy_process proxy({"--upstream", upstream.url()});
  std::string broken = R"({"model":"m","messages":[{"role":"tool","content":")" + std::string(20000, 'x');  // unterminated
  http_request(proxy.port(), "POST", "/v1/chat/completions", broken);
  http_request(proxy.port(), "POST", "/v1/chat/completions", "compressed?", {{"Content-Encoding", "compress"}});
  auto seen = upstream.llm_bodies();
  REQUIRE(seen.size() == 2);
  CHECK(seen[0] == broken);
  CHECK(seen[1] == "compressed?");
  auto metrics = metrics_with(proxy.admin_port(), {"reason=\"unparsable\"} 1", "reason=\"unsupported_encoding\"} 1"});
  CHECK(metrics.find("gistproxy_rewrite_failures_total{api=\"chat\",reason=\"unparsable\"} 1") != std::string::npos);
  CHECK(metrics.find("gistproxy_rewrite_failures_total{api=\"chat\",reason=\"unsupported_encoding\"} 1") != std::string::npos);
}

TEST_CASE("with --offload off the proxy forwards tool outputs as they are") {
  mock_upstream upstream;
  proxy_process proxy({"--upstream", upstream.url(), "--offload", "off"});
  auto body = request_for("chat", big_output(50000)).dump();
  http_request(proxy.port(), "POST", "/v1/chat/completions", body);
  CHECK(upstream.llm_bodies().at(0) == body);
}

TEST_CASE("gistproxy blob verify reports a corrupted blob and exits non-zero, gc keeps fresh blobs") {
  mock_upstream upstream;
  proxy_process proxy({"--upstream", upstream.url()});
  http_request(proxy.port(), "POST", "/v1/chat/completions", request_for("chat", big_output(30000)).dump());
  proxy.stop();
  int status = 0;
  auto bin = std::string(gistproxy_binary());
  auto store = proxy.store_dir().string();
  auto ok = run_command(bin + " blob verify --store " + store, status);
  CHECK(WEXITSTATUS(status) == 0);
  CHECK(ok.find("1 blobs checked, 0 corrupt") != std::string::npos);
  for (auto& e : std::filesystem::recursive_directory_iterator(store)) {
    if (e.path().extension() != ".blob") continue;
    std::fstream f(e.path(), std::ios::in | std::ios::out | std::ios::binary);
    f.seekp(-3, std::ios::end);
    f.put('\x7f');
  }
  auto bad = run_command(bin + " blob verify --store " + store, status);
  CHECK(WEXITSTATUS(status) == 1);
  CHECK(bad.find("1 corrupt") != std::string::npos);
  auto gc = run_command(bin + " blob gc --store " + store, status);
  CHECK(gc.find("0 expired blobs removed") != std::string::npos);
}

TEST_CASE("by default (auto) a light request goes upstream as sent and a heavy one is offloaded with read_blob, counted") {
  auto api = GENERATE(as<std::string>{}, "chat", "responses", "messages");
  CAPTURE(api);
  mock_upstream upstream;
  proxy_process proxy({"--upstream", upstream.url()});
  const auto path = api == "chat" ? "/v1/chat/completions" : api == "responses" ? "/v1/responses" : "/v1/messages";
  const auto light = request_for(api, "3 files").dump();
  REQUIRE(http_request(proxy.port(), "POST", path, light, {{"Authorization", "sk-test"}, {"x-api-key", "sk-test"}}).status == 200);
  const auto heavy = request_for(api, big_output(60000)).dump();
  REQUIRE(http_request(proxy.port(), "POST", path, heavy, {{"Authorization", "sk-test"}, {"x-api-key", "sk-test"}}).status == 200);
  auto seen = upstream.llm_bodies();
  REQUIRE(seen.size() == 2);
  CHECK(seen[0] == light);  // byte for byte: no read_blob definition on a conversation it would not pay in
  CHECK(seen[1].find("\"read_blob\"") != std::string::npos);
  CHECK(seen[1].size() < heavy.size() / 4);
  auto metrics = metrics_with(proxy.admin_port(), {"decision=\"output_pays\"} 1"});
  CHECK(series_value(metrics, "gistproxy_read_blob_offers_total{api=\"" + api + "\",decision=\"not_worth\"}") == 1);
  CHECK(series_value(metrics, "gistproxy_read_blob_offers_total{api=\"" + api + "\",decision=\"output_pays\"}") == 1);
}
