// The OpenAI Responses API keeps every response (unless store:false), and so
// every page-in hop gistproxy makes: its stored state shows the read_blob
// tool gistproxy offered, the model's read_blob calls and their outputs, the
// hops' own ids, and the last hop's tool_choice. Reads of that state through
// gistproxy (GET /v1/responses/{id}, ?stream=true, …/{id}/input_items,
// DELETE) are shown as the client's own: what it would see without
// gistproxy. These are the pure parts: which requests are such reads, what
// to ask the upstream instead, and how its answer is shown.
//
// The ids the client holds name the turn's final state, kept under the last
// hop's id (`stored_id`). A JSON answer is that response: its id is the last
// hop's. A stream announces its first hop's id in response.created, before
// any read_blob call can be seen, and completes with the last hop's: the one
// SDKs chain on, which the upstream can continue with nothing of gistproxy's
// (a restart, another replica). The first hop's own state ends in an
// unanswered read_blob call; while gistproxy remembers the turn, its id reads
// and chains as the last hop's.
#pragma once

#include <cstddef>
#include <functional>
#include <memory>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include <nlohmann/json.hpp>

#include "rewrite/stream_filter.hpp"

namespace gistproxy::rewrite {

// What gistproxy changed in one stored turn, kept from the exchange that
// made it (stored_turns.hpp keeps these per tenant).
struct stored_turn {
  std::string stored_id;      // the upstream's response holding the turn's final state
  std::string tool;           // read_blob's name as offered (empty: not offered)
  bool tool_added = false;    // gistproxy added it (not the client's own declaration of it)
  nlohmann::json tool_choice = "auto";  // as the client sent it (the API's default when it sent none)
  nlohmann::json previous_response_id;  // as the client sent it (null: none)
  std::vector<std::string> hop_items;   // ids of the items page-in hops added to the stored input
  std::vector<std::string> read_calls;  // call_ids of the turn's read_blob calls
  std::size_t bytes() const;            // roughly, what keeping it costs
};

// Whether `id` can be a response id: 1 to 256 of [A-Za-z0-9_-] (the API's
// are resp_ and hex). An upstream's id of other bytes is never put in a
// request target.
bool is_response_id(std::string_view id);

// A request that reads (or deletes) stored state.
struct stored_read {
  enum class kind { response, input_items, remove };
  kind what = kind::response;
  std::string id;           // the response id the target names
  std::size_t id_at = 0;    // where in the target
  bool stream = false;      // GET …/{id}?stream=true: replayed as events
};
// nullopt when the request is not one: GET …/responses/{id}[/input_items],
// DELETE …/responses/{id}, under any prefix (Azure's /openai/…).
std::optional<stored_read> stored_read_of(std::string_view method, std::string_view target);

// The target to send upstream: the stored id in place of the client's and,
// for input_items, `limit` raised by `hidden` (at most the API's 100) so a
// page still holds `limit` of the client's items once gistproxy's are taken out.
std::string stored_target(std::string_view target, const stored_read& read, std::string_view stored_id,
                          std::size_t hidden);
// The client's `limit` for input_items (the API's default, 20, when absent);
// nullopt when it is not one the API accepts (then left to the API to refuse).
std::optional<std::size_t> items_limit(std::string_view target);

// A response object (a GET's answer, or one carried by an event) as the
// client's: its id, its own tools and tool_choice, its previous_response_id,
// no read_blob calls in its output. True when anything changed.
bool show_client_response(nlohmann::json& response, const stored_turn& turn, std::string_view client_id);

// Which listed items are gistproxy's: read_blob calls (by name), their
// outputs (by call_id), and the items page-in hops added to the listed
// response's own input (by id).
struct gistproxy_items {
  std::vector<std::string> tools;                      // read_blob's names
  std::vector<std::string> hop_items;                  // the listed response's own hops' items
  std::function<bool(std::string_view call_id)> read_call;  // a read_blob call of the tenant's
};
// An input_items list as the client's: gistproxy's items out, at most
// `limit` left, first_id, last_id and has_more to match. True when anything changed.
bool show_client_items(nlohmann::json& list, const gistproxy_items& ours, std::size_t limit);

// Whether a stored answer gistproxy cannot map (a turn it never saw or has
// forgotten) shows its read_blob: the tool, a call or an output of one.
bool shows_read_blob(const nlohmann::json& answer, const std::vector<std::string>& tools);

// The filter for a replayed stream (GET ?stream=true): every response object
// shown as the client's, read_blob items' events left out, output_index and
// sequence_number renumbered to match. Never pages in.
std::unique_ptr<stream_filter> make_stored_replay_filter(stored_turn turn, std::string client_id);

}  // namespace gistproxy::rewrite
