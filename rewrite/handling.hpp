// "May gistproxy touch this body?", answered once per request. The receive
// phase gathers the inputs and writes the verdict into the exchange's context;
// every later phase (rewrite, the turn memory) and the offload service read
// it instead of asking again (as Pingora's request_filter decides once and the
// later phases read the context). Pure: facts in, verdict out.
#pragma once

#include <cstdint>
#include <string_view>

namespace gistproxy::rewrite {

// What may be done with the body.
enum class handling_mode : std::uint8_t {
  rewrite,    // the offload engine runs on it: outputs stored, read_blob offered
  read_only,  // read (model, trace, prefix check, metrics), forwarded as the client sent it
  untouched,  // not read: gistproxy cannot tell what it is; forwarded as it came
};

// Why, in the order handling_of asks: the first that holds decides.
enum class handling_why : std::uint8_t {
  control,                 // the conversation is in the control group (read_only)
  unknown_api,             // no endpoint serves the path (untouched)
  offload_off,             // --offload off: no engine to run (read_only)
  bypass,                  // x-gistproxy-bypass: the client asked (read_only)
  client_signed,           // a signature over the body (AWS SigV4) another byte would break (read_only)
  undecodable,             // a Content-Encoding not decoded (untouched)
  unparsable,              // not a body of its API (untouched)
  uninterceptable_answer,  // an answer gistproxy cannot follow: no read_blob, so no offload (read_only)
  offload,                 // none of the above (rewrite)
};

struct handling {
  handling_mode mode = handling_mode::untouched;
  handling_why why = handling_why::unknown_api;
  bool may_rewrite() const { return mode == handling_mode::rewrite; }
  bool operator==(const handling&) const = default;
};

// What the receive phase learned of the request, as the decision needs it.
struct handling_inputs {
  bool known_api = false;             // an endpoint serves the request's path
  bool offload_on = false;            // an offload engine is configured
  bool bypass = false;                // x-gistproxy-bypass: 1
  bool client_signed = false;         // the client signed the body
  bool control = false;               // the conversation's group is the control group
  bool decoded = true;                // false: a Content-Encoding left as it came
  bool parsed = false;                // the wire format read the body (request facts)
  bool answer_interceptable = true;   // the wire format can follow the answer (request facts)
};

handling handling_of(const handling_inputs& in);

// Asked before the body is read: its bytes are the client's to keep exactly
// (bypass, a signature over them), so they are not even decoded to be read.
// handling_of names such a body bypass or client_signed (or an earlier why).
bool bytes_kept_as_sent(bool bypass, bool client_signed);

// Stable labels for spans, logs and metrics: "rewrite", "read_only", "untouched";
// the why's own name ("control", "unknown_api", …, "offload").
std::string_view label(handling_mode m);
std::string_view label(handling_why w);

}  // namespace gistproxy::rewrite
