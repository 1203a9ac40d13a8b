// Internal to rewrite/replay: the per-format readers behind read_trace() and
// the helpers they share. One file per family of formats:
//   message_traces.cpp  message lists rebuilt into per-turn requests (SWE-agent,
//                       Claude Code transcripts, plain message lists)
//   body_traces.cpp     formats that hold the bodies sent (recordings, HAR,
//                       claude-trace, OpenHands, Inspect)
//   vcr_cassette.cpp    vcrpy YAML cassettes
//   codex_rollout.cpp   Codex CLI session rollouts
//   pi_session.cpp      pi coding agent sessions and documents of its messages
//                       (pi_messages.cpp: its messages in each API's shape)
//   reader_helpers.cpp  these helpers
//   trace_formats.cpp   the format table (detection, --format) and the small readers
#pragma once

#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include <nlohmann/json.hpp>

#include "rewrite/replay/trace_formats.hpp"

namespace gistproxy::rewrite::trace_readers {

// Ordered: bodies rebuilt or re-serialized keep the keys in the order recorded.
using ojson = nlohmann::ordered_json;

std::string dump(const ojson& j);
bool is_obj(const ojson& j, const char* key);
bool is_arr(const ojson& j, const char* key);
bool is_str(const ojson& j, const char* key);
// The API of a request body from its shape alone (formats that do not record the URL).
const endpoint* guess_api(const ojson& body);
bool looks_like_request_body(const ojson& j);
std::string path_of_url(const std::string& url);
void add_body(recorded_trace& t, const ojson& body, const endpoint* api);
void add_body_text(recorded_trace& t, const std::string& text, const endpoint* api);

// A conversation rebuilt turn by turn (see rebuilt_frame): items appended as
// the trace goes, a request cut at the items so far, its body the members of
// `before`, the list (under the API's conversation member), then the members
// of `after`.
class conversation_builder {
 public:
  conversation_builder(recorded_trace& t, const endpoint* api);
  void add(const ojson& item);
  std::size_t size() const { return items_->size(); }
  void request(const ojson& before, const ojson& after = ojson::object());

 private:
  recorded_trace& trace_;
  const endpoint* api_;
  std::string list_key_;
  std::shared_ptr<std::vector<std::string>> items_ = std::make_shared<std::vector<std::string>>();
  std::shared_ptr<const rebuilt_frame> frame_;
};

// message_traces.cpp
void rebuild_chat(const ojson& messages, const std::string& model, const ojson& tools, recorded_trace& t);
void read_claude_code(const std::vector<ojson>& lines, recorded_trace& t);
bool is_cline_history(const ojson& list);
bool is_gemini_contents(const ojson& list);
bool is_gemini_cli_session(const ojson& j);
void read_gemini_cli(const ojson& j, recorded_trace& t);
void read_cline_history(const ojson& list, recorded_trace& t);
// body_traces.cpp
void read_claude_trace(const std::vector<ojson>& entries, recorded_trace& t);
void read_recording(const std::vector<ojson>& lines, recorded_trace& t);
void read_har(const ojson& har, recorded_trace& t);
void read_inspect(const ojson& log, recorded_trace& t);
void read_openhands(const std::vector<ojson>& calls, recorded_trace& t);
void read_openhands_output(const std::vector<ojson>& lines, recorded_trace& t);
// vcr_cassette.cpp
void read_vcr(std::string_view text, recorded_trace& t);
// codex_rollout.cpp
bool is_codex_envelope(const ojson& line);
bool is_codex_direct(const std::vector<ojson>& lines);
void read_codex_rollout(const std::vector<ojson>& lines, recorded_trace& t);
// pi_session.cpp
bool is_pi_session(const std::vector<ojson>& lines);
bool is_pi_document(const ojson& j);
void read_pi_session(const std::vector<ojson>& lines, recorded_trace& t);
void read_pi_document(const ojson& doc, recorded_trace& t);

}  // namespace gistproxy::rewrite::trace_readers
