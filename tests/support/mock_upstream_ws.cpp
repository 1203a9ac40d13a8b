#include "tests/support/mock_upstream_ws.hpp"

#include <boost/asio/as_tuple.hpp>
#include <boost/asio/co_spawn.hpp>
#include <boost/asio/ip/tcp.hpp>
#include <boost/asio/steady_timer.hpp>
#include <boost/asio/use_awaitable.hpp>
#include <boost/beast/core.hpp>
#include <boost/beast/ssl.hpp>
#include <boost/beast/websocket.hpp>
#include <boost/beast/websocket/ssl.hpp>
#include <deque>
#include <nlohmann/json.hpp>

#include "rewrite/request_target.hpp"
#include "tests/support/api_scenarios.hpp"
#include "tests/support/scripted_model.hpp"

namespace gistproxy::testing {

namespace asio = boost::asio;
namespace beast = boost::beast;
namespace http = beast::http;
namespace websocket = beast::websocket;
using tcp = asio::ip::tcp;

namespace {

constexpr auto nothrow = asio::as_tuple(asio::use_awaitable);

std::string lowercase(std::string_view s) {
  std::string out(s);
  for (auto& c : out) c = char(std::tolower(static_cast<unsigned char>(c)));
  return out;
}

// The API's error event: {"type":"error","status":N,"error":{…}}.
nlohmann::json error_event(int status, const char* type, nlohmann::json code, const std::string& message,
                           nlohmann::json param = nullptr) {
  return {{"type", "error"},
          {"status", status},
          {"error", {{"type", type}, {"code", std::move(code)}, {"message", message}, {"param", std::move(param)}}}};
}

// What admitting a response.create refused, as the API's error event.
nlohmann::json admit_error(const std::string& message) {
  if (message.starts_with("Previous response with id"))
    return error_event(400, "invalid_request_error", "previous_response_not_found", message, "previous_response_id");
  return error_event(400, "invalid_request_error", nullptr, message, "input");
}

const nlohmann::json no_usage = {{"input_tokens", 0}, {"input_tokens_details", {{"cached_tokens", 0}}},
                                 {"output_tokens", 0}, {"output_tokens_details", {{"reasoning_tokens", 0}}},
                                 {"total_tokens", 0}};

// One thing the connection's writer does: send a frame, or end the socket,
// or mark the end of a response (the next response.create may come).
struct outbound {
  enum class kind { text, binary, close, drop, response_done };
  outbound(kind what_, std::string payload_ = {}, int close_code_ = 1000, int delay_ms_ = 0)
      : what(what_), payload(std::move(payload_)), close_code(close_code_), delay_ms(delay_ms_) {}
  kind what;
  std::string payload;
  int close_code;
  int delay_ms;  // waited before it
};

std::string model_of(const nlohmann::json& request) {
  const auto model = request.find("model");
  return model != request.end() && model->is_string() ? model->get<std::string>() : "mock-model";
}

// A response's frames with the scripted fault played into them.
std::deque<outbound> with_fault(const std::vector<std::string>& events, const ws_fault& fault) {
  using kind = ws_fault::kind;
  std::deque<outbound> out;
  const bool faulty = fault.what != kind::none && fault.what != kind::refuse_upgrade;
  const std::size_t cut = faulty ? std::min(std::size_t(std::max(0, fault.after_events)), events.size()) : events.size();
  for (std::size_t i = 0; i < cut; ++i) out.push_back({outbound::kind::text, events[i]});
  switch (fault.what) {
    case kind::close: out.push_back({outbound::kind::close, {}, fault.close_code}); return out;
    case kind::drop: out.push_back({outbound::kind::drop}); return out;
    case kind::stall: return out;  // no response_done: the response stays in flight
    case kind::non_json_text: out.push_back({outbound::kind::text, "mock: this frame is not JSON {"}); break;
    case kind::binary_frame: out.push_back({outbound::kind::binary, std::string("\x00\x01mock", 6)}); break;
    case kind::oversized_event:
      out.push_back({outbound::kind::text,
                     nlohmann::json{{"type", "response.output_text.delta"}, {"delta", std::string(1 << 20, 'x')}}.dump()});
      break;
    case kind::none: case kind::refuse_upgrade: break;
  }
  for (std::size_t i = cut; i < events.size(); ++i) out.push_back({outbound::kind::text, events[i]});
  out.push_back({outbound::kind::response_done});
  return out;
}

// One upgraded connection. Everything runs on the socket's strand: a reader
// (client frames, and Beast's answers to pings) and a writer draining
// `queue_`, so an error event can go out while a response streams.
template <class Stream>
class ws_connection {
 public:
  ws_connection(ws_responses& route, Stream& stream, int number, std::map<std::string, std::string> headers,
                asio::any_io_executor executor)
      : route_(route), ws_(stream), cache_("resp_ws" + std::to_string(number) + "_"), number_(number),
        headers_(std::move(headers)), executor_(executor), wake_(executor), delay_(executor), done_(executor) {}

  asio::awaitable<void> run(ws_responses::request req) {
    ws_.set_option(websocket::permessage_deflate{});  // all off: an offered extension is declined
    ws_.read_message_max(256ull << 20);               // whole conversations come in one message
    ws_.set_option(websocket::stream_base::decorator([headers = headers_](websocket::response_type& res) {
      for (const auto& [name, value] : headers) res.set(name, value);
    }));
    auto [ec] = co_await ws_.async_accept(req, nothrow);
    if (ec) co_return;
    asio::co_spawn(executor_, write_loop(), [this](std::exception_ptr) {
      writer_done_ = true;
      done_.cancel();
    });
    co_await read_loop();
    closing_ = true;  // the writer stops; this frame (and the stream) must outlive it
    wake_.cancel();
    delay_.cancel();
    while (!writer_done_) {
      done_.expires_at(asio::steady_timer::time_point::max());
      co_await done_.async_wait(nothrow);
    }
  }

 private:
  asio::awaitable<void> read_loop() {
    for (;;) {
      beast::flat_buffer buffer;
      auto [ec, n] = co_await ws_.async_read(buffer, nothrow);
      if (ec) co_return;  // closed by either side, or broken
      const bool text = ws_.got_text();
      std::string payload = beast::buffers_to_string(buffer.data());
      route_.record({number_, text, payload});
      if (!text) {  // the API speaks JSON text only: 1003, unsupported data
        queue_.push_front({outbound::kind::close, {}, int(websocket::close_code::unknown_data)});
        wake_.cancel();
        continue;  // the close handshake ends the read
      }
      try {
        on_message(payload);
      } catch (const nlohmann::json::exception& e) {  // a shape the script cannot read: still an answer
        in_flight_ = false;
        send_now(error_event(400, "invalid_request_error", nullptr, std::string("mock: ") + e.what()));
      }
    }
  }

  void send_now(const nlohmann::json& event) {  // ahead of a streaming response's frames
    queue_.push_front({outbound::kind::text, event.dump()});
    wake_.cancel();
  }

  void on_message(const std::string& payload) {
    auto message = nlohmann::json::parse(payload, nullptr, false);
    if (!message.is_object())
      return send_now(error_event(400, "invalid_request_error", "invalid_json", "mock: the message is not a JSON object."));
    const auto type = message.contains("type") && message["type"].is_string() ? message["type"].get<std::string>() : "";
    if (type == "response.processed") return;  // an older Codex's acknowledgement: no answer
    if (type != "response.create")
      return send_now(error_event(400, "invalid_request_error", "unknown_event_type",
                                  "mock: unsupported message type '" + type + "'.", "type"));
    if (in_flight_)
      return send_now(error_event(400, "invalid_request_error", "response_already_in_flight",
                                  "A response is already in progress on this connection.", "type"));
    create(std::move(message));
  }

  // The request as the HTTP route would get it, with the conversation
  // previous_response_id names in front of its input.
  std::optional<nlohmann::json> admit(nlohmann::json request) {
    auto admitted = cache_.admit(request);
    if (admitted.error.starts_with("Previous response with id")) {  // maybe stored over HTTP (store:true)
      auto from_store = route_.stored().admit(request);
      if (from_store.error.empty()) admitted = std::move(from_store);
    }
    if (admitted.error.empty()) return std::move(admitted.request);
    send_now(admit_error(admitted.error));
    return std::nullopt;
  }

  void create(nlohmann::json message) {
    const auto generate = message.find("generate");
    const bool warm_up = generate != message.end() && generate->is_boolean() && !generate->get<bool>();
    message.erase("type");
    message.erase("generate");
    auto request = admit(std::move(message));
    if (!request) return;
    in_flight_ = true;
    const std::string model = model_of(*request);
    auto to_keep = *request;  // the connection keeps every answer, whatever `store` said
    to_keep.erase("store");
    model_turn turn;
    ws_fault fault;
    if (!warm_up) {
      turn = script_model(llm_api::responses, *request);
      fault = route_.take_fault(false);
      if (turn.status == 0) return;  // never answers: in flight until the client gives up
      if (turn.status != 200) {
        queue_.push_back({outbound::kind::text, error_event(turn.status, "server_error", nullptr, "mock failure").dump(), 0, turn.delay_ms});
        queue_.push_back({outbound::kind::response_done});
        wake_.cancel();
        return;
      }
    }
    auto answer = render_response(llm_api::responses, turn, model, *request);
    if (warm_up) answer["output"] = nlohmann::json::array(), answer["usage"] = no_usage;
    answer["id"] = cache_.keep(to_keep, answer);
    std::vector<std::string> events;
    for (const auto& [name, data] : sse_events(render_responses_events(answer))) {
      if (warm_up && name == "response.in_progress") continue;  // a warm-up: created, then completed
      if (turn.truncate && name == "response.completed") break;
      events.push_back(data);
    }
    if (turn.truncate && fault.what == ws_fault::kind::none)  // cut before its end: closed cleanly, as HTTP's script
      fault = {ws_fault::kind::close, 0, int(events.size()), 1000, 1};
    auto frames = with_fault(events, fault);
    if (!frames.empty()) frames.front().delay_ms = turn.delay_ms;
    for (auto& frame : frames) queue_.push_back(std::move(frame));
    wake_.cancel();
  }

  asio::awaitable<void> write_loop() {
    while (!closing_) {
      if (queue_.empty()) {
        wake_.expires_at(asio::steady_timer::time_point::max());
        co_await wake_.async_wait(nothrow);
        continue;
      }
      auto out = std::move(queue_.front());
      queue_.pop_front();
      if (out.delay_ms > 0) {
        delay_.expires_after(std::chrono::milliseconds(out.delay_ms));
        auto [ec] = co_await delay_.async_wait(nothrow);
        if (ec || closing_) co_return;
      }
      if (out.what == outbound::kind::response_done) {
        in_flight_ = false;
      } else if (out.what == outbound::kind::close) {
        co_await ws_.async_close(websocket::close_reason(std::uint16_t(out.close_code)), nothrow);
        co_return;
      } else if (out.what == outbound::kind::drop) {  // EOF without a close frame
        beast::error_code ignored;
        beast::get_lowest_layer(ws_).shutdown(tcp::socket::shutdown_both, ignored);
        co_return;
      } else {
        ws_.text(out.what == outbound::kind::text);
        auto [ec, n] = co_await ws_.async_write(asio::buffer(out.payload), nothrow);
        if (ec) co_return;
      }
    }
  }

  ws_responses& route_;
  websocket::stream<Stream&> ws_;
  responses_state cache_;  // this connection's answers, as the API caches them in memory
  int number_;
  std::map<std::string, std::string> headers_;
  asio::any_io_executor executor_;
  asio::steady_timer wake_, delay_, done_;
  std::deque<outbound> queue_;
  bool in_flight_ = false, closing_ = false, writer_done_ = false;
};

}  // namespace

bool ws_responses::wants(const request& req) {
  const auto route = route_of(std::string(rewrite::path_of(req.target())));
  return websocket::is_upgrade(req) && route && route->api == llm_api::responses;
}

template <class Stream>
asio::awaitable<bool> ws_responses::serve(Stream& stream, request req) {
  ws_upgrade_seen seen{std::string(req.target()), {}, 101};
  for (const auto& field : req) seen.headers[lowercase(field.name_string())] = std::string(field.value());
  const auto fault = take_fault(true);
  if (fault.what == ws_fault::kind::refuse_upgrade) seen.status = fault.status;
  int number = 0;
  std::map<std::string, std::string> headers;
  {
    std::lock_guard lock(mutex_);
    upgrades_.push_back(seen);
    if (seen.status == 101) number = ++connections_;
    headers = handshake_headers_;
  }
  if (seen.status != 101) {
    http::response<http::string_body> res{http::status(seen.status), 11};
    res.set(http::field::content_type, "application/json");
    res.keep_alive(false);
    res.body() = nlohmann::json{{"error", {{"message", "mock: the WebSocket upgrade is refused."}, {"type", "invalid_request_error"},
                                           {"param", nullptr}, {"code", nullptr}}}}.dump();
    res.prepare_payload();
    co_await http::async_write(stream, res, nothrow);
    co_return false;
  }
  // The socket's executor is a strand (mock_upstream's accept loop): the
  // connection's reader and writer run on it, as Beast requires of a
  // WebSocket read and write in flight at once on a multi-threaded io_context.
  const auto strand = beast::get_lowest_layer(stream).get_executor();
  ws_connection<Stream> connection(*this, stream, number, std::move(headers), strand);
  co_await asio::co_spawn(strand, connection.run(std::move(req)), asio::use_awaitable);
  co_return false;
}

template asio::awaitable<bool> ws_responses::serve(tcp::socket&, request);
template asio::awaitable<bool> ws_responses::serve(beast::ssl_stream<tcp::socket>&, request);

ws_fault ws_responses::take_fault(bool upgrade) {
  std::lock_guard lock(mutex_);
  const bool refusal = fault_.what == ws_fault::kind::refuse_upgrade;
  if (fault_.what == ws_fault::kind::none || fault_.times <= 0 || refusal != upgrade) return {};
  auto fault = fault_;
  if (--fault_.times <= 0) fault_ = {};
  return fault;
}

void ws_responses::record(ws_frame_seen frame) {
  std::lock_guard lock(mutex_);
  frames_.push_back(std::move(frame));
}

void ws_responses::set_fault(ws_fault fault) {
  std::lock_guard lock(mutex_);
  fault_ = fault;
}

void ws_responses::set_handshake_headers(std::map<std::string, std::string> headers) {
  std::lock_guard lock(mutex_);
  handshake_headers_ = std::move(headers);
}

std::vector<ws_upgrade_seen> ws_responses::upgrades() const {
  std::lock_guard lock(mutex_);
  return upgrades_;
}

std::vector<ws_frame_seen> ws_responses::frames() const {
  std::lock_guard lock(mutex_);
  return frames_;
}

void mock_upstream::set_ws_fault(ws_fault fault) { ws_->set_fault(fault); }
void mock_upstream::set_ws_handshake_headers(std::map<std::string, std::string> headers) {
  ws_->set_handshake_headers(std::move(headers));
}
std::vector<ws_upgrade_seen> mock_upstream::ws_upgrades() const { return ws_->upgrades(); }
std::vector<ws_frame_seen> mock_upstream::ws_frames() const { return ws_->frames(); }

}  // namespace gistproxy::testing
