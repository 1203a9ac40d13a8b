#include "proxy/sessions/ws_channel.hpp"

namespace gistproxy::proxy {
namespace {

bool is_event_stream(const http::fields& fields) {
  auto it = fields.find(http::field::content_type);
  return it != fields.end() && beast::iequals(std::string_view(it->value()).substr(0, 17), "text/event-stream");
}

}  // namespace

ws_channel::ws_channel(upstream_socket* leg, std::size_t max_message)
    : leg_(leg), max_message_(max_message), frames_(max_message) {}

awaitable<error_code> ws_channel::whole_response(const reply_head& head, std::string_view body) {
  if (head.status == 200 && is_event_stream(head.fields)) co_return co_await send_frames(body);
  co_return co_await send_error(head.status, body);
}

awaitable<error_code> ws_channel::begin_response(const reply_head& head) {
  status_ = head.status;
  streaming_ = head.status == 200 && is_event_stream(head.fields);
  co_return error_code{};
}

awaitable<error_code> ws_channel::write_body(std::string_view bytes, bool last) {
  if (streaming_) co_return co_await send_frames(bytes);
  // Gathered within the bound: past it the event says only the status.
  if (error_body_.size() + bytes.size() <= max_message_) error_body_.append(bytes);
  if (!last) co_return error_code{};
  co_return co_await send_error(status_, error_body_);
}

awaitable<error_code> ws_channel::send_frames(std::string_view sse_bytes) {
  ready_.clear();
  frames_.feed(sse_bytes, [&](std::string_view frame) { ready_.emplace_back(frame); });
  for (const auto& frame : ready_) {
    if (auto ec = co_await send_text(frame)) co_return ec;
    // Read as the upstream's events are: the same reader says which end a response.
    if (auto event = rewrite::sse_of_upstream_frame(frame, max_message_); event && event->ends_response) ended_ = true;
  }
  co_return error_code{};
}

awaitable<error_code> ws_channel::send_error(unsigned status, std::string_view body) {
  ended_ = true;
  co_return co_await send_text(rewrite::error_event_frame(int(status), body, max_message_));
}

}  // namespace gistproxy::proxy
