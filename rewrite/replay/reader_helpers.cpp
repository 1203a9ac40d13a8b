// The helpers the trace readers share (see trace_readers.hpp).
#include <stdexcept>

#include "rewrite/json/checked.hpp"
#include "rewrite/replay/trace_readers.hpp"

namespace gistproxy::rewrite {

namespace trace_readers {

std::string dump(const ojson& j) { return j.dump(-1, ' ', false, ojson::error_handler_t::replace); }

bool is_obj(const ojson& j, const char* key) { return j.is_object() && j.contains(key) && j[key].is_object(); }
bool is_arr(const ojson& j, const char* key) { return j.is_object() && j.contains(key) && j[key].is_array(); }
bool is_str(const ojson& j, const char* key) { return j.is_object() && j.contains(key) && j[key].is_string(); }

// The API a body that does not say its own looks most like, by each
// endpoint's own reading (ties go to the registry's order).
const endpoint* guess_api(const ojson& body) {
  const nlohmann::json plain(body);
  const endpoint* best = nullptr;
  int best_score = 0;
  for (const auto* d : all_endpoints())
    if (const int score = d->request_affinity(plain); score > best_score) {
      best = d;
      best_score = score;
    }
  return best ? best : &default_endpoint();
}

bool looks_like_request_body(const ojson& j) {
  if (!j.is_object() || j.contains("role")) return false;
  for (const auto* d : all_endpoints()) {
    const auto& list = checked::member(j, d->wire().conversation_member());
    if (list.is_array() || list.is_string()) return true;  // Responses' input may be one string
  }
  return false;
}

void add_body(recorded_trace& t, const ojson& body, const endpoint* api) {
  if (!body.is_object()) return t.notes.push_back("an entry's body is not a JSON object");
  t.requests.push_back(recorded_request::as_sent(api ? api : guess_api(body), dump(body)));
}

void add_body_text(recorded_trace& t, const std::string& text, const endpoint* api) {
  auto j = checked::parse<ojson>(text);
  if (j.is_discarded() || !j.is_object()) return t.notes.push_back("an LLM request body is not JSON: skipped");
  t.requests.push_back(recorded_request::as_sent(api ? api : guess_api(j), text));
}

conversation_builder::conversation_builder(recorded_trace& t, const endpoint* api)
    : trace_(t), api_(api), list_key_(api->wire().conversation_member()) {
  trace_.rebuilt = true;
}

void conversation_builder::add(const ojson& item) { items_->push_back(dump(item)); }

namespace {

// An object's members as dump() writes them, without the braces.
std::string members_of(const ojson& object) {
  std::string out;
  for (const auto& [key, value] : object.items()) out += (out.empty() ? "" : ",") + dump(ojson(key)) + ":" + dump(value);
  return out;
}

}  // namespace

// The frame is shared with the previous request while unchanged.
void conversation_builder::request(const ojson& before, const ojson& after) {
  const auto head = members_of(before), tail = members_of(after);
  auto opening = "{" + head + (head.empty() ? "" : ",") + dump(ojson(list_key_)) + ":";
  auto closing = (tail.empty() ? "" : "," + tail) + "}";
  if (!frame_ || frame_->opening != opening || frame_->closing != closing)
    frame_ = std::make_shared<const rebuilt_frame>(rebuilt_frame{std::move(opening), std::move(closing)});
  recorded_request r;
  r.api = api_;
  r.rebuilt_items = items_;
  r.frame = frame_;
  r.rebuilt_count = items_->size();
  trace_.requests.push_back(std::move(r));
}

std::string path_of_url(const std::string& url) {
  auto scheme = url.find("://");
  auto start = url.find('/', scheme == std::string::npos ? 0 : scheme + 3);
  return start == std::string::npos ? "/" : url.substr(start);
}

}  // namespace trace_readers

}  // namespace gistproxy::rewrite
