// What one conversation is, through the real binary: its opening, its
// credential and the chain of turns it extends, never the client's
// traceparent. Each case runs a scripted model through serve --record and
// checks what the churn back-off did (outputs kept inline for churn), the
// recorded conversation ids, and that replay of the recording forwards, turn
// for turn, the bytes serve forwarded.
#include <catch2/catch.hpp>

#include <fstream>
#include <regex>
#include <set>

#include "tests/integration/harness.hpp"
#include "tests/integration/replay_as_serve.hpp"
#include "tests/support/api_scenarios.hpp"
#include "tests/support/tool_conversation.hpp"

using namespace gistproxy::testing;
namespace gp = gistproxy;

namespace {

constexpr const char* kept_churn = "gistproxy_outputs_kept_inline_total{api=\"chat\",cause=\"churn\"}";
constexpr int turns = 10;

struct served {
  double kept_inline = 0;
  std::vector<nlohmann::json> records;
  std::string text;
};

// A proxy with --record; `drive` sends the traffic; what serve kept inline
// for churn and the recording, once the writer drained.
served serve(const std::function<void(int port)>& drive) {
  const auto file = temp_path("conversation-identity.jsonl");
  mock_upstream upstream;
  proxy_process proxy({"--upstream", upstream.url(), "--record", file.string()});
  drive(proxy.port());
  served out;
  out.kept_inline = series_value(metrics_with(proxy.admin_port(), {"gistproxy_requests_total"}), kept_churn);
  REQUIRE(proxy.stop() == 0);  // the record writer drains before exit
  std::ifstream in(file);
  out.text.assign(std::istreambuf_iterator<char>(in), {});
  std::size_t at = 0;
  while (at < out.text.size()) {
    auto end = out.text.find('\n', at);
    if (end == std::string::npos) end = out.text.size();
    out.records.push_back(nlohmann::json::parse(out.text.substr(at, end - at)));
    at = end + 1;
  }
  return out;
}

std::set<std::string> ids(const served& s, const char* key) {
  std::set<std::string> out;
  for (const auto& r : s.records) out.insert(r.value(key, ""));
  return out;
}

// Replay of a recording with serve's defaults: turns whose forwarded body is
// byte for byte serve's, and outputs it kept inline for churn.
std::pair<std::size_t, std::uint64_t> replay_agreement(const std::string& text, std::size_t& turns_replayed) {
  auto trace = gp::rewrite::read_trace(text);
  std::size_t same = 0;
  turns_replayed = 0;
  auto stats = replay_as_serve(trace, [&](const gp::rewrite::replayed_request& r) {
    const auto& sent = r.recorded->forwarded.empty() ? r.recorded->body() : r.recorded->forwarded;
    ++turns_replayed;
    if (r.forwarded == sent) ++same;
  });
  return {same, stats.kept_inline_churn};
}

std::string output(const std::string& run, int turn) { return log_output(run + "-out" + std::to_string(turn), 12000); }

void send(int port, const std::vector<std::string>& outputs, const std::string& ask,
          std::map<std::string, std::string> headers = key_header("chat"), const std::string& call_prefix = "c") {
  // Real runs differ in the call ids the model gave them (call_..., toolu_...).
  const auto body = std::regex_replace(body_of("chat", outputs, ask), std::regex(R"re(("(id|tool_call_id)":")c(\d+"))re"),
                                       "$1" + call_prefix + "$3");
  REQUIRE(http_request(port, "POST", path_for("chat"), body, headers).status == 200);
}

std::string fresh_traceparent(int turn) {
  char id[33];
  std::snprintf(id, sizeof id, "%016x%016x", 0x5eed0000u + unsigned(turn), 0xabcdu * unsigned(turn + 1));
  return "00-" + std::string(id) + "-00f067aa0ba902b7-01";
}

void check_replay_agrees(const served& s, std::size_t requests) {
  std::size_t replayed = 0;
  auto [same, kept] = replay_agreement(s.text, replayed);
  CHECK(replayed == requests);
  CHECK(same == requests);
  CHECK(double(kept) == s.kept_inline);
}

}  // namespace

TEST_CASE("a client that sends a fresh traceparent every turn is one conversation to the churn back-off") {
  auto with_header = serve([](int port) {
    std::vector<std::string> outputs;
    for (int turn = 1; turn <= turns; ++turn) {
      outputs.push_back(output("t", turn));
      auto headers = key_header("chat");
      headers["traceparent"] = fresh_traceparent(turn);
      send(port, outputs, "reread everything you offload", headers);
    }
  });
  auto without = serve([](int port) {
    std::vector<std::string> outputs;
    for (int turn = 1; turn <= turns; ++turn) {
      outputs.push_back(output("t", turn));
      send(port, outputs, "reread everything you offload");
    }
  });
  CHECK(without.kept_inline > 0);
  CHECK(with_header.kept_inline == without.kept_inline);
  CHECK(ids(with_header, "trace_id").size() == std::size_t(turns));  // the traces follow the client
  CHECK(ids(with_header, "conversation_id").size() == 1);          // the conversation does not
  CHECK(ids(with_header, "conversation_id") == ids(without, "conversation_id"));
  check_replay_agrees(with_header, turns);
}

TEST_CASE("two runs of one task at once with the same opening and key are not taken for re-readers") {
  // Run A and run B alternate turns, with the same outputs and their own
  // call ids; each reads each new output once.
  auto s = serve([](int port) {
    std::vector<std::string> outputs;
    for (int turn = 1; turn <= turns; ++turn) {
      outputs.push_back(output("same", turn));
      send(port, outputs, "read each new output once", key_header("chat"), "call_a");
      send(port, outputs, "read each new output once", key_header("chat"), "call_b");
    }
  });
  CHECK(s.kept_inline == 0);
  CHECK(ids(s, "conversation_id").size() == 2);
  check_replay_agrees(s, 2 * turns);
}

TEST_CASE("two runs in lockstep sending the same bytes are one conversation and no re-reader") {
  auto s = serve([](int port) {
    std::vector<std::string> outputs;
    for (int turn = 1; turn <= turns; ++turn) {
      outputs.push_back(output("same", turn));
      send(port, outputs, "read each new output once");
      send(port, outputs, "read each new output once");
    }
  });
  CHECK(s.kept_inline == 0);
  CHECK(ids(s, "conversation_id").size() == 1);
  check_replay_agrees(s, 2 * turns);
}

TEST_CASE("a retried request is the same turn and does not make a read-once model a re-reader") {
  auto s = serve([](int port) {
    std::vector<std::string> outputs;
    for (int turn = 1; turn <= turns; ++turn) {
      outputs.push_back(output("r", turn));
      send(port, outputs, "read each new output once");
      if (turn % 3 == 0) send(port, outputs, "read each new output once");  // the client retried
    }
  });
  CHECK(s.kept_inline == 0);
  check_replay_agrees(s, turns + turns / 3);
}

TEST_CASE("the same conversation under two keys is two conversations in serve and in replay") {
  auto s = serve([](int port) {
    std::vector<std::string> outputs;
    for (int turn = 1; turn <= turns; ++turn) {
      outputs.push_back(output("k", turn));
      send(port, outputs, "read each new output once", {{"Authorization", "Bearer sk-first"}});
      send(port, outputs, "read each new output once", {{"Authorization", "Bearer sk-second"}});
    }
  });
  CHECK(s.kept_inline == 0);
  CHECK(ids(s, "conversation_id").size() == 2);
  check_replay_agrees(s, 2 * turns);
}
