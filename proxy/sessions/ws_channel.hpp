// One response of a Responses WebSocket as the exchange sees it: the channel
// (proxy/net/client_channel.hpp) that turns what the exchange answers into
// the socket's messages. A stream of SSE events becomes one text message per
// event (its data: the event's JSON, as the API sends over the socket;
// comments and keep-alives send nothing); any other answer (an error, or a
// whole JSON response) becomes one `error` event carrying its status, so a
// client reads every outcome the way the socket protocol says.
//
// ws_channel frames; it sends through send_text(), which the session's
// socket_ws_channel implements over the client's WebSocket (a unit test over
// a list).
#pragma once

#include <string>
#include <vector>

#include "proxy/net/client_channel.hpp"
#include "rewrite/dialects/responses/responses_socket.hpp"

namespace gistproxy::proxy {

class ws_channel : public client_channel {
 public:
  // `max_message`: the largest message (and buffered error body) sent.
  ws_channel(upstream_socket* leg, std::size_t max_message);

  awaitable<error_code> whole_response(const reply_head& head, std::string_view body) final;
  awaitable<error_code> begin_response(const reply_head& head) final;
  awaitable<error_code> write_body(std::string_view bytes, bool last) final;
  // The socket outlives each response: another message may follow.
  bool keeps_connection() const final { return true; }
  upstream_socket* upstream_leg() final { return leg_; }
  std::string_view protocol_name() const final { return "WebSocket"; }
  // Whether the response ended in a message the client reads as its end (a
  // terminal event or an error event); a response cut short did not.
  bool ended() const { return ended_; }

 protected:
  virtual awaitable<error_code> send_text(std::string_view text) = 0;

 private:
  awaitable<error_code> send_frames(std::string_view sse_bytes);
  awaitable<error_code> send_error(unsigned status, std::string_view body);

  upstream_socket* leg_;
  std::size_t max_message_;
  rewrite::sse_to_client_frames frames_;
  unsigned status_ = 0;
  bool streaming_ = false;  // a 200 event stream: each event is a message
  std::string error_body_;  // any other answer, gathered for its error event
  std::vector<std::string> ready_;
  bool ended_ = false;
};

}  // namespace gistproxy::proxy
