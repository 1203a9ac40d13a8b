// Reads of the Responses API's stored state shown as the client's own
// (rewrite/dialects/responses/responses_stored.hpp, stored_turns.hpp): the
// pure parts, without sockets. The exchange's side is in
// tests/integration/responses_stored_test.cpp.
#include <catch2/catch.hpp>
#include <nlohmann/json.hpp>

#include "rewrite/dialects/responses/responses_stored.hpp"
#include "rewrite/dialects/responses/stored_turns.hpp"
#include "rewrite/sse/event_parser.hpp"

using namespace gistproxy::rewrite;
using J = nlohmann::json;

namespace {

stored_turn paged_turn() {
  stored_turn t;
  t.stored_id = "resp_last";
  t.tool = "read_blob";
  t.tool_added = true;
  t.tool_choice = "required";
  t.previous_response_id = "resp_before";
  t.hop_items = {"rs_hop0"};
  t.read_calls = {"call_rb"};
  return t;
}

std::string replay(stream_filter& f, const std::string& events) {
  sse::event_parser parser;
  std::string out;
  parser.feed(events, [&](const sse::event& e) { out += f.on_event(e); });
  return out;
}

std::string event(const J& data) { return "event: " + data["type"].get<std::string>() + "\ndata: " + data.dump() + "\n\n"; }

}  // namespace

TEST_CASE("stored-state reads are GETs of a response or its input items, and DELETEs, under any prefix") {
  auto get = stored_read_of("GET", "/v1/responses/resp_1");
  REQUIRE(get);
  CHECK(get->what == stored_read::kind::response);
  CHECK(get->id == "resp_1");
  CHECK_FALSE(get->stream);
  CHECK(stored_read_of("GET", "/v1/responses/resp_1?stream=true&starting_after=3")->stream);
  CHECK(stored_read_of("GET", "/openai/v1/responses/resp_1/input_items?limit=5")->what == stored_read::kind::input_items);
  CHECK(stored_read_of("DELETE", "/v1/responses/resp_1")->what == stored_read::kind::remove);
  CHECK_FALSE(stored_read_of("POST", "/v1/responses/resp_1/cancel"));
  CHECK_FALSE(stored_read_of("DELETE", "/v1/responses/resp_1/input_items"));
  CHECK_FALSE(stored_read_of("GET", "/v1/responses/"));
  CHECK_FALSE(stored_read_of("GET", "/v1/responses"));
  CHECK_FALSE(stored_read_of("GET", "/v1/responses/resp_1/other"));
  CHECK_FALSE(stored_read_of("GET", "/v1/responses/resp%0d%0a1"));  // not an id the API gives
  CHECK(is_response_id("resp_68af0c2e9b-x"));
  CHECK_FALSE(is_response_id("resp 1"));
  CHECK_FALSE(is_response_id("resp_1\r\nHost: elsewhere"));
  CHECK_FALSE(is_response_id(std::string(257, 'a')));
}

TEST_CASE("a stored read goes upstream under the stored id, an input_items page asking for gistproxy's items too") {
  const auto read = *stored_read_of("GET", "/v1/responses/resp_a/input_items?order=asc&limit=5&after=msg_1");
  CHECK(stored_target("/v1/responses/resp_a/input_items?order=asc&limit=5&after=msg_1", read, "resp_b", 0) ==
        "/v1/responses/resp_b/input_items?order=asc&limit=5&after=msg_1");
  CHECK(stored_target("/v1/responses/resp_a/input_items?order=asc&limit=5&after=msg_1", read, "resp_b", 3) ==
        "/v1/responses/resp_b/input_items?order=asc&after=msg_1&limit=8");
  const auto plain = *stored_read_of("GET", "/v1/responses/resp_a/input_items");
  CHECK(stored_target("/v1/responses/resp_a/input_items", plain, "resp_b", 500) == "/v1/responses/resp_b/input_items?limit=100");
  // A limit the API refuses is left for it to refuse.
  const auto bad = *stored_read_of("GET", "/v1/responses/resp_a/input_items?limit=0");
  CHECK(stored_target("/v1/responses/resp_a/input_items?limit=0", bad, "resp_b", 3) == "/v1/responses/resp_b/input_items?limit=0");
  CHECK(items_limit("/x?limit=100") == std::optional<std::size_t>(100));
  CHECK_FALSE(items_limit("/x?limit=101"));
  CHECK_FALSE(items_limit("/x?limit=2x"));
  CHECK(items_limit("/x") == std::optional<std::size_t>(20));
}

TEST_CASE("an input_items limit spelled with a %-encoded name is the limit, replaced rather than sent twice") {
  const std::string target = "/v1/responses/resp_a/input_items?%6Cimit=5&order=asc";
  CHECK(items_limit(target) == std::optional<std::size_t>(5));
  CHECK(stored_target(target, *stored_read_of("GET", target), "resp_b", 3) ==
        "/v1/responses/resp_b/input_items?order=asc&limit=8");
}

TEST_CASE("a stored response is shown with the client's id, tools, tool_choice and previous_response_id") {
  J response = {{"id", "resp_last"}, {"previous_response_id", "resp_mapped"}, {"tool_choice", "none"},
                {"tools", {{{"type", "function"}, {"name", "cat"}}, {{"type", "function"}, {"name", "read_blob"}}}},
                {"output", {{{"type", "function_call"}, {"name", "read_blob"}, {"call_id", "call_rb"}},
                            {{"type", "message"}, {"id", "msg_1"}}}}};
  CHECK(show_client_response(response, paged_turn(), "resp_first"));
  CHECK(response["id"] == "resp_first");
  CHECK(response["previous_response_id"] == "resp_before");
  CHECK(response["tool_choice"] == "required");
  CHECK(response["tools"] == J::array({{{"type", "function"}, {"name", "cat"}}}));
  CHECK(response["output"] == J::array({{{"type", "message"}, {"id", "msg_1"}}}));
  CHECK_FALSE(show_client_response(response, paged_turn(), "resp_first"));  // already the client's

  SECTION("the client's own declaration of the tool stays") {
    auto turn = paged_turn();
    turn.tool_added = false;
    J declared = {{"tools", {{{"type", "function"}, {"name", "read_blob"}}}}};
    show_client_response(declared, turn, "x");
    CHECK(declared["tools"].size() == 1);
  }
  SECTION("members the response lacks are not added") {
    J bare = {{"object", "response"}};
    CHECK_FALSE(show_client_response(bare, paged_turn(), "x"));
    CHECK(bare == J{{"object", "response"}});
  }
}

TEST_CASE("an input_items page keeps only the client's items, at most its limit, with cursors to match") {
  J page = {{"object", "list"}, {"has_more", false}, {"first_id", "rs_hop0"}, {"last_id", "msg_u"},
            {"data", {{{"id", "rs_hop0"}, {"type", "reasoning"}},
                      {{"id", "fco_1"}, {"type", "function_call_output"}, {"call_id", "call_rb"}},
                      {{"id", "fc_2"}, {"type", "function_call"}, {"name", "read_blob"}, {"call_id", "call_rb2"}},
                      {{"id", "fco_2"}, {"type", "function_call_output"}, {"call_id", "call_rb2"}},
                      {{"id", "fco_c"}, {"type", "function_call_output"}, {"call_id", "c1"}},
                      {{"id", "fc_c"}, {"type", "function_call"}, {"name", "cat"}, {"call_id", "c1"}},
                      {{"id", "msg_u"}, {"type", "message"}, {"role", "user"}}}}};
  gistproxy_items ours{{"read_blob"}, {"rs_hop0"}, [](std::string_view call) { return call == "call_rb"; }};
  SECTION("all of the client's fit") {
    CHECK(show_client_items(page, ours, 20));
    CHECK(page["data"].size() == 3);
    CHECK(page["first_id"] == "fco_c");
    CHECK(page["last_id"] == "msg_u");
    CHECK(page["has_more"] == false);
  }
  SECTION("more than the limit: cut, with more to come after the last kept") {
    CHECK(show_client_items(page, ours, 2));
    CHECK(page["data"].size() == 2);
    CHECK(page["last_id"] == "fc_c");
    CHECK(page["has_more"] == true);
  }
  SECTION("nothing of the client's, more upstream: the upstream's cursor moves on") {
    page["data"].erase(page["data"].begin() + 4, page["data"].end());
    page["has_more"] = true;
    page["last_id"] = "fco_2";
    CHECK(show_client_items(page, ours, 20));
    CHECK(page["data"].empty());
    CHECK(page["has_more"] == true);
    CHECK(page["last_id"] == "fco_2");
    CHECK(page["first_id"].is_null());
  }
  SECTION("a page that is not a list is left alone") {
    J odd = {{"data", "x"}};
    CHECK_FALSE(show_client_items(odd, ours, 20));
  }
}

TEST_CASE("a stored answer gistproxy cannot map is known by its read_blob") {
  const std::vector<std::string> names = {"read_blob", "gistproxy_read_blob"};
  CHECK(shows_read_blob(J{{"tools", {{{"type", "function"}, {"name", "gistproxy_read_blob"}}}}}, names));
  CHECK(shows_read_blob(J{{"data", {{{"type", "function_call"}, {"name", "read_blob"}}}}}, names));
  CHECK_FALSE(shows_read_blob(J{{"tools", {{{"type", "function"}, {"name", "cat"}}}}, {"output", "x"}}, names));
  CHECK_FALSE(shows_read_blob(J("not an object"), names));
}

TEST_CASE("a replayed stream shows every response as the client's and leaves read_blob's events out") {
  auto filter = make_stored_replay_filter(paged_turn(), "resp_first");
  const J response = {{"id", "resp_last"}, {"tools", {{{"type", "function"}, {"name", "read_blob"}}}}, {"output", J::array()}};
  std::string events = event({{"type", "response.created"}, {"sequence_number", 0}, {"response", response}});
  events += event({{"type", "response.output_item.added"}, {"sequence_number", 1}, {"output_index", 0},
                   {"item", {{"type", "function_call"}, {"name", "read_blob"}, {"call_id", "call_x"}}}});
  events += event({{"type", "response.function_call_arguments.delta"}, {"sequence_number", 2}, {"output_index", 0}, {"delta", "{"}});
  events += event({{"type", "response.output_item.added"}, {"sequence_number", 3}, {"output_index", 1},
                   {"item", {{"type", "message"}, {"id", "msg_1"}}}});
  events += event({{"type", "response.completed"}, {"sequence_number", 4}, {"response", response}});
  events += ": keepalive\n\n";
  const auto out = replay(*filter, events);
  std::vector<J> seen;
  sse::event_parser parser;
  parser.feed(out, [&](const sse::event& e) {
    if (!e.comment_only) seen.push_back(J::parse(e.data));
  });
  REQUIRE(seen.size() == 3);
  for (std::size_t i = 0; i < seen.size(); ++i) CHECK(seen[i]["sequence_number"] == i);
  CHECK(seen[0]["response"]["id"] == "resp_first");
  CHECK(seen[0]["response"]["tools"] == J::array());
  CHECK(seen[1]["output_index"] == 0);
  CHECK(seen[2]["type"] == "response.completed");
  CHECK(out.find(": keepalive") != std::string::npos);
  CHECK(filter->end_hop().complete);
}

TEST_CASE("stored turns are kept per tenant, bounded, and chains count gistproxy's items") {
  stored_turns turns({.max_turns = 2, .max_bytes = 1 << 20, .max_turn_bytes = 4096});
  auto first = paged_turn();
  first.previous_response_id = nullptr;
  turns.remember("t1", "resp_a", first);
  auto second = paged_turn();
  second.previous_response_id = "resp_a";
  second.read_calls = {"call_2", "call_3"};
  turns.remember("t1", "resp_b", second);
  CHECK(turns.find("t1", "resp_a"));
  CHECK_FALSE(turns.find("t2", "resp_a"));  // another tenant's
  CHECK(turns.read_call("t1", "call_rb"));
  CHECK_FALSE(turns.read_call("t2", "call_rb"));
  // resp_b's own hop item and its 2 reads (each listed with its output), then resp_a's read.
  CHECK(turns.hidden_in_chain("t1", "resp_b") == 1 + 4 + 2);
  CHECK(turns.hidden_in_chain("t1", "resp_b", 1) == 5);

  turns.find("t1", "resp_a");  // resp_b is now the least recently used
  turns.remember("t1", "resp_c", paged_turn());
  CHECK(turns.size() == 2);
  CHECK_FALSE(turns.find("t1", "resp_b"));
  CHECK_FALSE(turns.read_call("t1", "call_2"));
  CHECK(turns.read_call("t1", "call_rb"));  // resp_a and resp_c still name it

  SECTION("the bytes kept are bounded too") {
    stored_turns probe({.max_turns = 100, .max_bytes = 1 << 20, .max_turn_bytes = 4096});
    probe.remember("t1", "resp_1", paged_turn());
    probe.remember("t1", "resp_2", paged_turn());
    const auto two = probe.bytes();
    stored_turns small({.max_turns = 100, .max_bytes = two, .max_turn_bytes = 4096});
    for (const auto* id : {"resp_1", "resp_2", "resp_3", "resp_4"}) small.remember("t1", id, paged_turn());
    CHECK(small.bytes() <= two);
    CHECK(small.size() == 2);
    CHECK(small.find("t1", "resp_4"));
    CHECK_FALSE(small.find("t1", "resp_1"));
  }
  SECTION("a turn too large to keep is not kept") {
    auto large = paged_turn();
    large.hop_items.assign(1000, std::string(64, 'x'));
    turns.remember("t1", "resp_large", large);
    CHECK_FALSE(turns.find("t1", "resp_large"));
  }
}
