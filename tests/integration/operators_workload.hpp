// A scripted operator's day for the dashboard and report tests: a live
// gistproxy in front of the scripted model doing offloads, page-ins, churn
// (the same blob paged back in the turn it was offloaded and in the next), an
// integrity failure (a blob corrupted on disk, then paged in), upstream
// errors, an unparsable body and an OTLP collector that refuses every batch.
#pragma once

#include <openssl/sha.h>

#include <cstdio>
#include <fstream>

#include "rewrite/control_group.hpp"
#include "rewrite/conversation/conversation_chains.hpp"
#include "tests/integration/harness.hpp"

namespace gistproxy::testing {

inline std::string sha256_hex(const std::string& bytes) {
  unsigned char d[SHA256_DIGEST_LENGTH];
  SHA256(reinterpret_cast<const unsigned char*>(bytes.data()), bytes.size(), d);
  std::string hex;
  char b[3];
  for (auto c : d) std::snprintf(b, sizeof b, "%02x", c), hex += b;
  return hex;
}

// ~120 KB of config lines with one NEEDLE line; `salt` makes distinct blobs.
inline std::string config_dump(const std::string& salt) {
  std::string s;
  for (int i = 0; s.size() < 120 * 1024; ++i) {
    if (i == 1500) s += "line 1500: NEEDLE port=48213\n";
    s += salt + " line " + std::to_string(i) + ": key_" + std::to_string(i) + "=" + std::to_string(i * 37 % 1009) + "\n";
  }
  return s;
}

// An opening whose conversation is in the control group at 0.01%: the group
// follows the conversation (its opening and credential as receive.cpp names
// it: a Chat key is "chat\n", the system prompt, NUL, the first user text),
// never a traceparent, so the workload looks for one (about 10,000 tries).
inline std::string control_opening(const std::string& round, const std::string& credential) {
  for (int i = 0; i < 1'000'000; ++i) {
    auto ask = "control conversation, round " + round + ", try " + std::to_string(i);
    const auto id = rewrite::opening_of("chat\n" + std::string(1, '\0') + ask, credential);
    if (rewrite::group_of(id, 1) == rewrite::experiment_group::control) return ask;
  }
  return "no control opening found";
}

inline nlohmann::json chat_with_output(const std::string& ask, const std::string& output, const std::string& tool) {
  return {{"model", "gpt-4o"},
          {"messages", {{{"role", "user"}, {"content", ask}},
                        {{"role", "assistant"}, {"tool_calls", {{{"id", "c1"}, {"type", "function"},
                                                                  {"function", {{"name", tool}, {"arguments", "{}"}}}}}}},
                        {{"role", "tool"}, {"tool_call_id", "c1"}, {"content", output}}}},
          {"tools", {{{"type", "function"}, {"function", {{"name", tool}}}}}}};
}

inline nlohmann::json messages_with_output(const std::string& ask, const std::string& output, const std::string& tool) {
  return {{"model", "claude-sonnet-4-5"},
          {"max_tokens", 100},
          {"messages", {{{"role", "user"}, {"content", ask}},
                        {{"role", "assistant"}, {"content", {{{"type", "tool_use"}, {"id", "c1"}, {"name", tool}, {"input", nlohmann::json::object()}}}}},
                        {{"role", "user"}, {"content", {{{"type", "tool_result"}, {"tool_use_id", "c1"}, {"content", output}}}}}}},
          {"tools", {{{"name", tool}, {"input_schema", {{"type", "object"}}}}}}};
}

struct operators_workload {
  mock_upstream upstream;
  std::filesystem::path spans = temp_path("operator-spans.jsonl");
  proxy_process proxy;
  std::string corrupted_handle;  // the blob the integrity failure is planted on
  std::string churned_handle;    // the blob paged back in its own turn and the next

  operators_workload()
      : proxy({"--upstream", upstream.url(), "--span-log", spans.string(), "--otlp-endpoint", upstream.url(),
               "--control-percent", "0.01",
               // read_blob on every request with tools: case 5's late arrival is then no
               // plan of the cost model's (under auto it is one, cause="offer").
               "--inject-read-blob", "always"}) {
    upstream.fail_next_otlp_posts(1'000'000);  // every OTLP batch refused: the exporter drops spans
  }

  http_result chat(const nlohmann::json& body) {
    return http_request(proxy.port(), "POST", "/v1/chat/completions", body.dump(), {{"Authorization", "Bearer sk-ops"}});
  }

  // Runs every planted case; returns a description of the first one that did
  // not behave. `round` keeps blobs and conversations of each run distinct
  // (Prometheus's rate() sees nothing of a series' first sample, so the tests
  // run two rounds).
  std::string run(const std::string& round = "1") {
    // 1. Churn: the model pages the blob back in the turn that offloaded it,
    //    and again on the next turn of the same conversation.
    auto dump = config_dump("alpha" + round);
    churned_handle = sha256_hex(dump);
    auto turn1 = chat_with_output("find the needle in the config, round " + round, dump, "read_config");
    if (chat(turn1).status != 200) return "churn turn 1 failed";
    auto turn2 = turn1;
    turn2["messages"].push_back({{"role", "assistant"}, {"content", "found it"}});
    turn2["messages"].push_back({{"role", "user"}, {"content", "again please"}});
    if (chat(turn2).status != 200) return "churn turn 2 failed";

    // 2. Plain offloads the model never pages back (chat and messages).
    if (chat(chat_with_output("hello, round " + round, config_dump("beta" + round), "list_files")).status != 200) return "offload (chat) failed";
    auto msg = messages_with_output("hello, round " + round, config_dump("gamma" + round), "run_tests");
    if (http_request(proxy.port(), "POST", "/v1/messages", msg.dump(), {{"x-api-key", "sk-ops"}}).status != 200)
      return "offload (messages) failed";

    // 3. Integrity failure: store a blob, corrupt it on disk, then let the model page it in.
    auto secret = config_dump("delta" + round);
    corrupted_handle = sha256_hex(secret);
    if (chat(chat_with_output("hello again, round " + round, secret, "read_config")).status != 200) return "store for corruption failed";
    bool corrupted = false;
    for (auto& e : std::filesystem::recursive_directory_iterator(proxy.store_dir())) {
      if (e.path().filename() != corrupted_handle + ".blob") continue;
      std::fstream f(e.path(), std::ios::in | std::ios::out | std::ios::binary);
      f.seekp(-10, std::ios::end);
      f.put('\x01');
      corrupted = true;
    }
    if (!corrupted) return "blob to corrupt not found in the store";
    if (chat(chat_with_output("find the needle, please, round " + round, secret, "read_config")).status != 200) return "integrity case failed";

    // 4. A control-group conversation (0.01% of conversations: one whose id
    //    lands there, the planted ones above are all treated), forwarded
    //    untouched, so the dashboard's control panels have data.
    const std::map<std::string, std::string> control_headers = {{"Authorization", "Bearer sk-ops"}};
    const auto control_ask = control_opening(round, "Bearer sk-ops");
    for (int turn = 0; turn < 2; ++turn)
      if (http_request(proxy.port(), "POST", "/v1/chat/completions",
                       chat_with_output(control_ask, config_dump("zeta" + round), "list_files").dump(),
                       control_headers)
              .status != 200)
        return "control conversation failed";

    // 5. A prefix gistproxy breaks: a client that declares no tools gets
    //    read_blob's definition with its first offload, on its second turn.
    nlohmann::json plain = {{"model", "gpt-4o"},
                            {"messages", {{{"role", "user"}, {"content", "no tools here, round " + round}}}}};
    if (chat(plain).status != 200) return "no-tools turn 1 failed";
    plain["messages"].push_back({{"role", "assistant"}, {"tool_calls", {{{"id", "c9"}, {"type", "function"},
                                                                         {"function", {{"name", "dump"}, {"arguments", "{}"}}}}}}});
    plain["messages"].push_back({{"role", "tool"}, {"tool_call_id", "c9"}, {"content", config_dump("eta" + round)}});
    if (chat(plain).status != 200) return "no-tools turn 2 failed";

    // 6. Errors: an upstream 5xx on a later hop, an upstream that drops the
    //    connection, and an unparsable body (forwarded as sent, counted).
    if (chat(chat_with_output("fail second hop, round " + round, config_dump("epsilon" + round), "read_config")).status != 500)
      return "fail second hop did not answer 500";
    http_request(proxy.port(), "GET", "/drop");
    http_request(proxy.port(), "POST", "/v1/chat/completions", R"({"model":"gpt-4o","messages":[)",
                 {{"Authorization", "Bearer sk-ops"}});
    return {};
  }
};

}  // namespace gistproxy::testing
