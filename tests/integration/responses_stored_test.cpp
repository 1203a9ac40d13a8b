// Reads of the Responses API's stored state through gistproxy: GET
// /v1/responses/{id} (plain and ?stream=true), its input_items, and the id a
// stream announces, after page-in hops. The upstream keeps every hop
// (tests/support/responses_state.hpp); the client must see what it would see
// without gistproxy: its own tools, no read_blob call or output, its own id.
#include <catch2/catch.hpp>

#include "tests/support/api_scenarios.hpp"
#include "tests/integration/harness.hpp"

using namespace gistproxy::testing;

namespace {

struct answered {
  int status = 0;
  std::string id;          // the response's (the terminal event's, streamed)
  std::string created_id;  // streamed: what response.created announced
  std::string text;
};

answered ask(const proxy_process& proxy, const nlohmann::json& body) {
  auto res = http_request(proxy.port(), "POST", "/v1/responses", body.dump(), key_header("responses"));
  answered a{res.status, {}, {}, {}};
  if (res.status != 200) return a;
  if (!body.value("stream", false)) {
    auto j = nlohmann::json::parse(res.body);
    a.id = j.value("id", "");
    a.text = answer_text("responses", j);
    return a;
  }
  a.text = read_stream("responses", res.body).text;
  for (const auto& data : sse_data(res.body)) {
    auto e = nlohmann::json::parse(data, nullptr, false);
    if (!e.is_object() || !e.contains("response")) continue;
    if (e.value("type", "") == "response.created") a.created_id = e["response"].value("id", "");
    if (e.value("type", "") == "response.completed") a.id = e["response"].value("id", "");
  }
  return a;
}

nlohmann::json get_json(std::uint16_t port, const std::string& target) {
  auto res = http_request(port, "GET", target, {}, key_header("responses"));
  INFO(res.body);
  REQUIRE(res.status == 200);
  return nlohmann::json::parse(res.body);
}

std::vector<std::string> tool_names(const nlohmann::json& response) {
  std::vector<std::string> names;
  for (const auto& t : response.value("tools", nlohmann::json::array())) names.push_back(t.value("name", ""));
  return names;
}

// gistproxy's own items: its read_blob calls (the mock's model names them
// rb_N) and their outputs.
bool read_blob_item(const nlohmann::json& item) {
  return item.value("call_id", "").rfind("rb_", 0) == 0 || item.value("name", "") == "read_blob";
}

std::size_t read_blob_items(const nlohmann::json& items) {
  return std::size_t(std::count_if(items.begin(), items.end(), read_blob_item));
}

// Every page of input_items, `after` the last id of the one before (at most 20 pages).
std::vector<nlohmann::json> list_all(std::uint16_t port, const std::string& id, const std::string& query) {
  std::vector<nlohmann::json> items;
  std::string after;
  for (int page = 0; page < 20; ++page) {
    auto list = get_json(port, "/v1/responses/" + id + "/input_items?" + query + (after.empty() ? "" : "&after=" + after));
    CHECK(list["object"] == "list");
    for (const auto& item : list["data"]) items.push_back(item);
    if (!list.value("has_more", false) || list["data"].empty()) break;
    CHECK(list["last_id"] == list["data"].back()["id"]);
    after = list["last_id"];
  }
  return items;
}

std::vector<std::string> types_of(const std::vector<nlohmann::json>& items) {
  std::vector<std::string> out;
  for (const auto& item : items) out.push_back(item.value("type", "message") + "/" + item.value("role", item.value("call_id", "")));
  return out;
}

}  // namespace

TEST_CASE("a GET of a Responses id shows the client its own response after page-in hops, streamed or not") {
  auto [script, stream] = GENERATE(table<std::string, bool>({
      {"find the needle", false}, {"find the needle", true}, {"loop forever", false}, {"loop forever", true},
      {"with client call", true},
  }));
  CAPTURE(script, stream);
  mock_upstream upstream;
  proxy_process proxy({"--upstream", upstream.url(), "--max-page-in-hops", "2"});
  auto request = request_for("responses", script, haystack());
  request["store"] = true;
  if (stream) request["stream"] = true;
  auto a = ask(proxy, request);
  REQUIRE(a.status == 200);
  REQUIRE(upstream.llm_bodies().size() > 1);  // read_blob was called: hops were made
  // A stream announced its first hop's id before any read_blob call was
  // seen, and completed with the last hop's: either names the whole turn.
  std::vector<std::string> ids = {a.id};
  if (stream) ids.push_back(a.created_id);
  for (const auto& id : ids) {
    CAPTURE(id);
    auto got = get_json(proxy.port(), "/v1/responses/" + id);
    CHECK(got["id"] == id);
    CHECK(tool_names(got) == std::vector<std::string>{"cat", "run"});
    CHECK(got["tool_choice"] == "auto");  // the client's (the last hop's "none" is gistproxy's)
    CHECK(got["previous_response_id"].is_null());
    CHECK(read_blob_items(got["output"]) == 0);
    CHECK(answer_text("responses", got) == a.text);
  }
}

TEST_CASE("a turn chaining on the id a Responses stream announced first continues the whole turn") {
  mock_upstream upstream;
  proxy_process proxy({"--upstream", upstream.url()});
  auto request = request_for("responses", "find the needle", haystack());
  request["store"] = true;
  request["stream"] = true;
  auto a = ask(proxy, request);
  REQUIRE(a.status == 200);
  REQUIRE(a.created_id != a.id);  // hops were made: the first hop's state ends in its read_blob call
  nlohmann::json next = {{"model", "gpt-5"}, {"previous_response_id", a.created_id}, {"input", "thanks"},
                         {"store", true}, {"tools", request["tools"]}};
  auto res = http_request(proxy.port(), "POST", "/v1/responses", next.dump(), key_header("responses"));
  INFO(res.body);
  REQUIRE(res.status == 200);  // the upstream refuses to continue the first hop's state
  CHECK(nlohmann::json::parse(res.body)["previous_response_id"] == a.created_id);  // as the client sent it
  // The model saw the whole first turn: its answer included.
  const auto seen = nlohmann::json::parse(upstream.llm_bodies().back());
  CHECK(seen["previous_response_id"] == a.id);
}

TEST_CASE("a streamed GET of a Responses id replays the client's own response") {
  const bool stream = GENERATE(false, true);
  CAPTURE(stream);
  mock_upstream upstream;
  proxy_process proxy({"--upstream", upstream.url()});
  auto request = request_for("responses", "find the needle", haystack());
  request["store"] = true;
  if (stream) request["stream"] = true;
  auto a = ask(proxy, request);
  REQUIRE(a.status == 200);

  auto res = http_request(proxy.port(), "GET", "/v1/responses/" + a.id + "?stream=true", {}, key_header("responses"));
  REQUIRE(res.status == 200);
  CHECK(res.headers["content-type"].rfind("text/event-stream", 0) == 0);
  const auto events = sse_events(res.body);
  REQUIRE(events.size() > 4);
  std::int64_t sequence = 0;
  std::size_t terminal = 0;
  for (const auto& [name, data] : events) {
    CAPTURE(name, data);
    auto e = nlohmann::json::parse(data);
    CHECK(e["sequence_number"] == sequence++);
    if (e.contains("item")) CHECK_FALSE(read_blob_item(e["item"]));
    if (!e.contains("response")) continue;
    CHECK(e["response"]["id"] == a.id);
    CHECK(tool_names(e["response"]) == std::vector<std::string>{"cat", "run"});
    CHECK(read_blob_items(e["response"]["output"]) == 0);
    terminal += name == "response.completed";
  }
  CHECK(terminal == 1);
  CHECK(read_stream("responses", res.body).text == a.text);
}

TEST_CASE("the input items of a Responses id list the client's own items, page by page, in either order") {
  const bool stream = GENERATE(false, true);
  CAPTURE(stream);
  mock_upstream upstream;
  proxy_process proxy({"--upstream", upstream.url()});
  auto request = request_for("responses", "find the needle", haystack());
  request["store"] = true;
  if (stream) request["stream"] = true;
  auto a = ask(proxy, request);
  REQUIRE(a.status == 200);

  // The client's three items (its question, its cat call and output), newest first by default.
  const std::vector<std::string> own = {"message/user", "function_call/c1", "function_call_output/c1"};
  auto listed = get_json(proxy.port(), "/v1/responses/" + a.id + "/input_items");
  CHECK(read_blob_items(listed["data"]) == 0);
  CHECK(types_of({listed["data"].rbegin(), listed["data"].rend()}) == own);
  CHECK(listed["has_more"] == false);
  CHECK(listed["first_id"] == listed["data"].front()["id"]);
  CHECK(listed["last_id"] == listed["data"].back()["id"]);
  // One at a time, oldest first, each page after the last one's id.
  CHECK(types_of(list_all(proxy.port(), a.id, "order=asc&limit=1")) == own);
  CHECK(types_of(list_all(proxy.port(), a.id, "limit=2")) == std::vector<std::string>(own.rbegin(), own.rend()));
  if (stream) CHECK(types_of(list_all(proxy.port(), a.created_id, "order=asc")) == own);

  // The next turn chains on that id: its items are the whole conversation,
  // without gistproxy's reads in it.
  nlohmann::json next = {{"model", "gpt-5"}, {"previous_response_id", a.id}, {"input", "thanks"}, {"store", true},
                         {"tools", request["tools"]}};
  if (stream) next["stream"] = true;
  auto b = ask(proxy, next);
  REQUIRE(b.status == 200);
  auto chained = list_all(proxy.port(), b.id, "order=asc&limit=2");
  CHECK(types_of(chained) == std::vector<std::string>{"message/user", "function_call/c1", "function_call_output/c1",
                                                      "message/assistant", "message/user"});
}

TEST_CASE("a stored Responses id gistproxy cannot map is relayed as sent and counted") {
  mock_upstream upstream;
  proxy_process first({"--upstream", upstream.url()});
  auto request = request_for("responses", "find the needle", haystack());
  request["store"] = true;
  auto a = ask(first, request);
  REQUIRE(a.status == 200);
  // Another gistproxy (a restart, another replica) never saw that turn.
  proxy_process other({"--upstream", upstream.url()});
  for (const std::string& target : {"/v1/responses/" + a.id, "/v1/responses/" + a.id + "/input_items"}) {
    CAPTURE(target);
    auto direct = http_request(upstream.port(), "GET", target, {}, key_header("responses"));
    auto relayed = http_request(other.port(), "GET", target, {}, key_header("responses"));
    CHECK(relayed.status == direct.status);
    CHECK(relayed.body == direct.body);
  }
  const std::string series = R"(gistproxy_rewrite_failures_total{api="responses",reason="stored_unmapped"})";
  CHECK(series_value(metrics_with(other.admin_port(), {series + " 2"}), series) == 2);
}

TEST_CASE("a DELETE of the id a Responses stream announced first deletes the turn the client got") {
  mock_upstream upstream;
  proxy_process proxy({"--upstream", upstream.url()});
  auto request = request_for("responses", "find the needle", haystack());
  request["store"] = true;
  request["stream"] = true;
  auto a = ask(proxy, request);
  REQUIRE(a.status == 200);
  REQUIRE(a.created_id != a.id);
  auto deleted = http_request(proxy.port(), "DELETE", "/v1/responses/" + a.created_id, {}, key_header("responses"));
  REQUIRE(deleted.status == 200);
  const auto answer = nlohmann::json::parse(deleted.body);
  CHECK(answer["id"] == a.created_id);
  CHECK(answer["deleted"] == true);
  // Gone under either id, as one response would be.
  for (const auto& id : {a.id, a.created_id})
    CHECK(http_request(proxy.port(), "GET", "/v1/responses/" + id, {}, key_header("responses")).status == 404);
}
