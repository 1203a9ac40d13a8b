// Offload as a service through the real binary: POST /v1/offload/{api}
// answers the body the proxy path would forward (byte for byte) without
// calling the upstream; GET/HEAD /v1/blobs/{handle} answers what read_blob
// would page in, or the exact bytes; blobs stored by one path page in
// through the other; tenants stay apart; every bad input is a 4xx JSON error
// that stores nothing.
#include <catch2/catch.hpp>

#include <fstream>

#include "rewrite/blob/digest.hpp"
#include "rewrite/offload/base64.hpp"
#include "tests/integration/harness.hpp"
#include "tests/support/api_scenarios.hpp"

using namespace gistproxy::testing;
using njson = nlohmann::json;

namespace {

const std::string needle_answer = "found: 2501: config line 2500: NEEDLE secret_port=48213";

struct service_stack {
  mock_upstream upstream;
  std::filesystem::path spans = temp_path("spans.jsonl");
  proxy_process proxy;
  explicit service_stack(std::vector<std::string> extra = {})
      : proxy([&] {
          std::vector<std::string> a{"--upstream", upstream.url(), "--span-log", spans.string()};
          a.insert(a.end(), extra.begin(), extra.end());
          return a;
        }()) {}

  http_result offload(const std::string& api, const std::string& body, std::map<std::string, std::string> headers) {
    std::string target = "/v1/offload/" + api;
    if (wire_api(api) == "gemini" || api.starts_with("bedrock") || api.starts_with("vertex") || api == "azure-chat")
      target += "?model=" + model_for(api);
    return http_request(proxy.port(), "POST", target, body, headers);
  }
  http_result blob(const std::string& method, const std::string& target, std::map<std::string, std::string> headers) {
    return http_request(proxy.port(), method, target, {}, headers);
  }
};

std::size_t stored_blobs(const std::filesystem::path& store) {
  std::size_t n = 0;
  if (!std::filesystem::exists(store)) return 0;
  for (const auto& e : std::filesystem::recursive_directory_iterator(store)) n += e.path().extension() == ".blob";
  return n;
}

std::string error_type(const http_result& r) {
  auto j = njson::parse(r.body, nullptr, false);
  return j.is_object() && j.contains("error") ? j["error"].value("type", "") : "";
}

}  // namespace

TEST_CASE("the offload service answers the body the proxy path forwards, byte for byte, and calls no upstream") {
  auto api = GENERATE(as<std::string>{}, "chat", "responses", "messages", "gemini", "azure-chat", "azure-responses",
                      "vertex-messages", "vertex-gemini", "bedrock-messages", "bedrock-converse");
  CAPTURE(api);
  service_stack s;
  const auto body = request_for(api, "plain question", haystack()).dump();
  auto res = s.offload(api, body, key_header(api));
  REQUIRE(res.status == 200);
  CHECK(res.headers["content-type"] == "application/json");
  CHECK(s.upstream.llm_bodies().empty());  // no upstream call
  auto answer = njson::parse(res.body);
  CHECK(answer["api"] == api);
  CHECK(answer["outcome"] == "rewritten");
  CHECK(answer["read_blob"]["offered"] == true);
  REQUIRE(answer["offloads"].size() == 1);
  const auto& o = answer["offloads"][0];
  CHECK(o["handle"] == gistproxy::rewrite::sha256_hex(haystack()));
  CHECK(o["bytes"] == haystack().size());
  CHECK(o["tokens_before"].get<std::uint64_t>() > o["tokens_after"].get<std::uint64_t>());
  const std::string forwarded = answer["body"];
  CHECK(forwarded.find("NEEDLE") == std::string::npos);

  // The same body through the proxy path: the upstream gets exactly those bytes.
  REQUIRE(http_request(s.proxy.port(), "POST", path_for(api), body, key_header(api)).status == 200);
  REQUIRE(!s.upstream.llm_bodies().empty());
  CHECK(s.upstream.llm_bodies()[0] == forwarded);

  const std::string counted = "gistproxy_offloads_total{api=\"" + api + "\",kind=\"text\",source=\"api\"} 1";
  CHECK(metrics_with(s.proxy.admin_port(), {counted}).find(counted) != std::string::npos);
  auto spans = read_spans_until(s.spans, [](const auto& all) { return count_named(all, "compaction") >= 2; });
  REQUIRE(count_named(spans, "compaction") >= 2);  // one per path: every API offload is a compaction span
}

TEST_CASE("a body with raw invalid UTF-8 is answered as base64 of its exact bytes, never quietly as U+FFFD") {
  service_stack s;
  const auto headers = key_header("chat");
  auto body = request_for("chat", "question PLACEHOLDER", haystack()).dump();
  body.replace(body.find("PLACEHOLDER"), 11, "raw \xff\xfe bytes");
  auto res = s.offload("chat", body, headers);
  REQUIRE(res.status == 200);
  auto answer = njson::parse(res.body);
  CHECK(answer["body"].is_null());
  REQUIRE(answer["body_base64"].is_string());
  std::string exact;
  REQUIRE(gistproxy::rewrite::base64_decode(answer["body_base64"].get<std::string>(), exact));
  CHECK(exact.find("raw \xff\xfe bytes") != std::string::npos);
  CHECK(exact.find("NEEDLE") == std::string::npos);  // rewritten all the same
  // Exactly what the proxy path forwards.
  REQUIRE(http_request(s.proxy.port(), "POST", "/v1/chat/completions", body, headers).status == 200);
  REQUIRE(!s.upstream.llm_bodies().empty());
  CHECK(s.upstream.llm_bodies()[0] == exact);
}

TEST_CASE("an offloaded output's call id, tool or model that is not UTF-8 is answered as its exact bytes, never as U+FFFD") {
  service_stack s;
  const auto headers = key_header("chat");
  auto body = request_for("chat", "plain question", haystack()).dump();
  auto replace_all = [&](const std::string& from, const std::string& to) {
    for (auto at = body.find(from); at != std::string::npos; at = body.find(from, at + to.size())) body.replace(at, from.size(), to);
  };
  replace_all("\"c1\"", "\"c\xff" "1\"");      // the call id, on the call and on its output
  replace_all("\"cat\"", "\"cat\xfe\"");      // the tool's name
  replace_all("\"gpt-4o\"", "\"gpt\xc0-4o\"");  // the model
  auto res = s.offload("chat", body, headers);
  REQUIRE(res.status == 200);
  auto answer = njson::parse(res.body);
  REQUIRE(answer["offloads"].size() == 1);
  const auto& o = answer["offloads"][0];
  auto exact = [](const njson& v) {
    std::string bytes;
    REQUIRE(v.is_string());
    REQUIRE(gistproxy::rewrite::base64_decode(v.get<std::string>(), bytes));
    return bytes;
  };
  CHECK(o["call_id"].is_null());  // was: "c\uFFFD1", said as the client's and matching no call
  CHECK(exact(o["call_id_base64"]) == "c\xff" "1");
  CHECK(o["tool"].is_null());
  CHECK(exact(o["tool_base64"]) == "cat\xfe");
  CHECK(answer["model"].is_null());
  CHECK(exact(answer["model_base64"]) == "gpt\xc0-4o");
  CHECK(o["kind"] == "text");  // valid UTF-8 stays a plain string
  // The body the proxy path forwards, byte for byte.
  REQUIRE(http_request(s.proxy.port(), "POST", "/v1/chat/completions", body, headers).status == 200);
  REQUIRE(!s.upstream.llm_bodies().empty());
  CHECK(s.upstream.llm_bodies()[0] == exact(answer["body_base64"]));
}

TEST_CASE("a conversation's trace id is keyed by its tenant's credential: stable for the key, unguessable without it") {
  service_stack s;
  const auto body = request_for("chat", "plain question", haystack()).dump();
  auto trace_with = [&](const std::string& key) {
    auto res = s.offload("chat", body, {{"Authorization", "Bearer " + key}});
    REQUIRE(res.status == 200);
    return njson::parse(res.body)["trace_id"].get<std::string>();
  };
  const auto a = trace_with("sk-tenant-a");
  CHECK(a.size() == 32);
  CHECK(trace_with("sk-tenant-a") == a);  // turn after turn, replica after replica
  CHECK(trace_with("sk-tenant-b") != a);  // the same prompt under another key
}

TEST_CASE("offloaded through the service, paged in by the model through the proxy path") {
  service_stack s;
  const auto headers = key_header("chat");
  auto res = s.offload("chat", request_for("chat", "find the needle", haystack()).dump(), headers);
  REQUIRE(res.status == 200);
  const std::string forwarded = njson::parse(res.body)["body"];
  auto through_proxy = http_request(s.proxy.port(), "POST", "/v1/chat/completions", forwarded, headers);
  REQUIRE(through_proxy.status == 200);
  CHECK(answer_text("chat", njson::parse(through_proxy.body)) == needle_answer);
}

TEST_CASE("offloaded by the proxy path, read through /v1/blobs exactly as read_blob pages it in") {
  service_stack s;
  const auto headers = key_header("chat");
  auto res = http_request(s.proxy.port(), "POST", "/v1/chat/completions",
                          request_for("chat", "find the needle", haystack()).dump(), headers);
  REQUIRE(res.status == 200);
  auto seen = s.upstream.llm_bodies();
  REQUIRE(seen.size() == 2);  // the model's read_blob call was answered and the model asked again
  const auto continued = njson::parse(seen[1]);
  const std::string paged_for_model = continued["messages"].back()["content"];
  const auto handle = gistproxy::rewrite::sha256_hex(haystack());

  auto page = s.blob("GET", "/v1/blobs/" + handle + "?pattern=NEEDLE", headers);
  REQUIRE(page.status == 200);
  CHECK(page.headers["content-type"] == "text/plain; charset=utf-8");
  CHECK(page.body == paged_for_model);

  auto range = s.blob("GET", "/v1/blobs/" + handle.substr(0, 16) + "?start_line=2&end_line=3", headers);
  REQUIRE(range.status == 200);
  CHECK(range.body.find("[lines 2-3 of ") == 0);
  CHECK(range.body.find("config line 1: key_1=") != std::string::npos);

  auto raw = s.blob("GET", "/v1/blobs/" + handle + "?raw=1", headers);
  REQUIRE(raw.status == 200);
  CHECK(raw.body == haystack());
  CHECK(raw.headers["content-type"] == "application/octet-stream");
  CHECK(raw.headers["etag"] == "\"" + handle + "\"");
  CHECK(raw.headers["digest"].starts_with("sha-256="));

  auto head = s.blob("HEAD", "/v1/blobs/" + handle, headers);
  CHECK(head.status == 200);
  CHECK(head.body.empty());
  CHECK(head.headers["content-length"] == std::to_string(haystack().size()));

  const std::string counted = "gistproxy_page_ins_total{api=\"blobs\",mode=\"pattern\",result=\"ok\",source=\"api\"} 1";
  CHECK(metrics_with(s.proxy.admin_port(), {counted}).find(counted) != std::string::npos);
}

TEST_CASE("another tenant's handle is 404 on every read, exactly like a handle nobody stored") {
  service_stack s;
  auto res = s.offload("chat", request_for("chat", "find the needle", haystack()).dump(), {{"Authorization", "Bearer sk-owner"}});
  REQUIRE(res.status == 200);
  const auto handle = gistproxy::rewrite::sha256_hex(haystack());
  const std::map<std::string, std::string> other = {{"Authorization", "Bearer sk-other"}};
  const std::string nobody(64, 'a');
  for (const auto& h : {handle, nobody}) {
    for (const auto& q : {std::string(), std::string("?raw=1"), std::string("?pattern=NEEDLE")}) {
      auto r = s.blob("GET", "/v1/blobs/" + h + q, other);
      CHECK(r.status == 404);
      CHECK(error_type(r) == "not_found");
      CHECK(r.body.find("NEEDLE") == std::string::npos);
    }
    CHECK(s.blob("HEAD", "/v1/blobs/" + h, other).status == 404);
  }
  CHECK(s.blob("HEAD", "/v1/blobs/" + handle, {{"Authorization", "Bearer sk-owner"}}).status == 200);

  // Through the proxy path too: the owner's forwarded body, sent with another
  // key, pages in nothing: that tenant's model gets a tool error, not the bytes.
  const std::string forwarded = njson::parse(res.body)["body"];
  auto stolen = http_request(s.proxy.port(), "POST", "/v1/chat/completions", forwarded, other);
  REQUIRE(stolen.status == 200);
  CHECK(stolen.body.find("NEEDLE") == std::string::npos);
  CHECK(stolen.body.find("read_blob") == std::string::npos);  // the call was the proxy's to answer
  auto owned = http_request(s.proxy.port(), "POST", "/v1/chat/completions", forwarded, {{"Authorization", "Bearer sk-owner"}});
  CHECK(answer_text("chat", njson::parse(owned.body)) == needle_answer);
}

TEST_CASE("/v1/blobs reads the tenant /v1/offload wrote, by the proxy path's credential rule") {
  const auto how = GENERATE(as<std::string>{}, "empty Authorization beside x-api-key", "bare Bearer beside x-api-key",
                            "Gemini key in the query");
  INFO(how);
  service_stack s({"--offload-service-anonymous", "on"});  // so a keyless read would reach the shared tenant, not a 401
  std::map<std::string, std::string> headers;
  std::string offload_target, query;
  if (how == "Gemini key in the query") {
    offload_target = "/v1/offload/gemini?model=" + model_for("gemini") + "&key=gk-query-key";
    query = "&key=gk-query-key";
  } else {
    headers = {{"authorization", how.starts_with("empty") ? "" : "Bearer"}, {"x-api-key", "sk-ant-beside"}};
    offload_target = "/v1/offload/messages";
  }
  const auto api = how.starts_with("Gemini") ? "gemini" : "messages";
  auto res = http_request(s.proxy.port(), "POST", offload_target, request_for(api, "plain question", haystack()).dump(), headers);
  REQUIRE(res.status == 200);
  REQUIRE(njson::parse(res.body)["offloads"].size() == 1);
  const auto handle = gistproxy::rewrite::sha256_hex(haystack());
  auto raw = s.blob("GET", "/v1/blobs/" + handle + "?raw=1" + query, headers);
  CHECK(raw.status == 200);  // was: 404, read from the keyless tenant (401 without --offload-service-anonymous)
  CHECK(raw.body == haystack());
  CHECK(s.blob("GET", "/v1/blobs/" + handle + "?raw=1", {}).status == 404);  // and the keyless tenant has nothing
}

TEST_CASE("a second API key on the same keep-alive connection is its own tenant, not the first key's") {
  service_stack s;
  http_connection conn(s.proxy.port());
  const auto body = request_for("chat", "plain question", haystack()).dump();
  auto stored = conn.request("POST", "/v1/offload/chat", body, {{"Authorization", "Bearer sk-first"}});
  REQUIRE(stored.status == 200);
  const std::string handle = njson::parse(stored.body)["offloads"][0]["handle"];
  auto own = conn.request("GET", "/v1/blobs/" + handle, {}, {{"Authorization", "Bearer sk-first"}});
  CHECK(own.status == 200);
  auto other = conn.request("GET", "/v1/blobs/" + handle, {}, {{"Authorization", "Bearer sk-second"}});
  CHECK(other.status == 404);
  REQUIRE(conn.is_open());  // one connection throughout: the per-connection memo was in play
}

TEST_CASE("x-gistproxy-bypass on the service answers the body as sent, nothing offloaded, and control headers are read") {
  service_stack s({"--allow-request-overrides", "100-500000"});
  const auto body = request_for("chat", "q", haystack()).dump();
  auto headers = key_header("chat");
  headers["x-gistproxy-bypass"] = "1";
  auto bypassed = njson::parse(s.offload("chat", body, headers).body);
  CHECK(bypassed["outcome"] == "bypass");
  CHECK(bypassed["offloads"].empty());
  CHECK(bypassed["body"] == body);

  headers.erase("x-gistproxy-bypass");
  headers["x-gistproxy-threshold"] = "400000";  // above the output: kept inline
  auto kept = njson::parse(s.offload("chat", body, headers).body);
  CHECK(kept["offloads"].empty());
  headers["x-gistproxy-threshold"] = "lots";
  auto refused = s.offload("chat", body, headers);
  CHECK(refused.status == 400);
  CHECK(s.upstream.llm_bodies().empty());
  CHECK(stored_blobs(s.proxy.store_dir()) == 0);
}

TEST_CASE("bad input to the service is a 4xx JSON error that says why, and stores nothing") {
  service_stack s({"--max-body", "1MiB"});
  const auto headers = key_header("chat");
  const auto good = request_for("chat", "q", haystack()).dump();
  struct bad {
    std::string method, target, body;
    int status;
    std::string type;
  };
  const std::vector<bad> cases = {
      {"POST", "/v1/offload/chat", "{\"messages\": [ {\"role\": \"tool\", \"content\": \"" + std::string(50000, 'x'), 400, "bad_request"},
      {"POST", "/v1/offload/chat", "[1, 2, 3]", 400, "bad_request"},
      {"POST", "/v1/offload/nosuchapi", good, 404, "not_found"},
      {"POST", "/v1/offload/", good, 404, "not_found"},
      {"GET", "/v1/offload/chat", "", 405, "method_not_allowed"},
      {"POST", "/v1/offload/chat?model=..%2F..%2Fadmin", good, 400, "bad_request"},
      {"POST", "/v1/offload/chat", std::string(2 << 20, ' '), 413, "body_too_large"},
      {"GET", "/v1/blobs/..%2F..%2Fetc%2Fpasswd", "", 400, "bad_request"},
      {"GET", "/v1/blobs/" + std::string(15, 'a'), "", 400, "bad_request"},
      {"GET", "/v1/blobs/" + std::string(65, 'a'), "", 400, "bad_request"},
      {"GET", "/v1/blobs/" + std::string(64, 'g'), "", 400, "bad_request"},
      {"GET", "/v1/blobs/" + std::string(64, 'A'), "", 400, "bad_request"},
      {"GET", "/v1/blobs/" + std::string(64, 'a') + "?start_line=two", "", 400, "bad_request"},
      {"GET", "/v1/blobs/" + std::string(64, 'a') + "?pattern=%zz", "", 400, "bad_request"},
      {"DELETE", "/v1/blobs/" + std::string(64, 'a'), "", 405, "method_not_allowed"},
  };
  for (const auto& c : cases) {
    CAPTURE(c.method, c.target.substr(0, 80));
    auto r = http_request(s.proxy.port(), c.method, c.target, c.body, headers);
    CHECK(r.status == c.status);
    CHECK(r.headers["content-type"] == "application/json");
    CHECK(error_type(r) == c.type);
  }
  auto gzipped = headers;
  gzipped["Content-Encoding"] = "br";
  auto unsupported = http_request(s.proxy.port(), "POST", "/v1/offload/chat", good, gzipped);
  CHECK(unsupported.status == 415);
  CHECK(stored_blobs(s.proxy.store_dir()) == 0);
  CHECK(s.upstream.llm_bodies().empty());
}

TEST_CASE("a stored blob that fails its re-hash is a 502 integrity error on every read, never its bytes, and counted") {
  service_stack s;
  const auto headers = key_header("chat");
  REQUIRE(s.offload("chat", request_for("chat", "q", haystack()).dump(), headers).status == 200);
  std::size_t damaged = 0;
  for (auto& e : std::filesystem::recursive_directory_iterator(s.proxy.store_dir())) {
    if (e.path().extension() != ".blob") continue;
    std::fstream f(e.path(), std::ios::in | std::ios::out | std::ios::binary);
    f.seekp(-3, std::ios::end);
    f.put('\x7f');
    ++damaged;
  }
  REQUIRE(damaged == 1);
  const auto handle = gistproxy::rewrite::sha256_hex(haystack());
  for (const auto& q : {std::string("?raw=1"), std::string("?pattern=NEEDLE"), std::string()}) {
    auto r = s.blob("GET", "/v1/blobs/" + handle + q, headers);
    CHECK(r.status == 502);
    CHECK(error_type(r) == "integrity");
    CHECK(r.body.find("NEEDLE") == std::string::npos);
  }
  const std::string counted = "gistproxy_integrity_failures_total{api=\"blobs\"} 3";
  CHECK(metrics_with(s.proxy.admin_port(), {counted}).find(counted) != std::string::npos);
}

TEST_CASE("with offloading off there is no blob store: /v1/blobs is a 503 and /v1/offload answers the body unchanged") {
  service_stack s({"--offload", "off"});
  const auto body = request_for("chat", "q", haystack()).dump();
  auto offloaded = s.offload("chat", body, key_header("chat"));
  REQUIRE(offloaded.status == 200);
  auto answer = njson::parse(offloaded.body);
  CHECK(answer["outcome"] == "unchanged");
  CHECK(answer["body"] == body);
  auto r = s.blob("GET", "/v1/blobs/" + std::string(64, 'a'), key_header("chat"));
  CHECK(r.status == 503);
  CHECK(error_type(r) == "store_unavailable");
}
