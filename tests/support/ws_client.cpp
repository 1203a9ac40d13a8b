#include "tests/support/ws_client.hpp"

#include <boost/asio/connect.hpp>
#include <boost/asio/io_context.hpp>
#include <boost/asio/ip/tcp.hpp>
#include <boost/beast/core.hpp>
#include <boost/beast/websocket.hpp>

namespace gistproxy::testing {

namespace asio = boost::asio;
namespace beast = boost::beast;
namespace websocket = beast::websocket;
using tcp = asio::ip::tcp;

struct ws_client::impl {
  asio::io_context io;
  websocket::stream<tcp::socket> ws{io};
  websocket::response_type handshake;
  std::map<std::string, std::string> headers;
  bool upgraded = false, reading = false, broken = false;
  beast::flat_buffer buffer;
  std::deque<frame> inbox;

  // Runs the io_context until `done()` holds or the time is up.
  template <class Done>
  bool run_until(Done done, std::chrono::milliseconds timeout) {
    const auto deadline = std::chrono::steady_clock::now() + timeout;
    while (!done()) {
      const auto now = std::chrono::steady_clock::now();
      if (now >= deadline) return false;
      io.restart();
      io.run_one_for(deadline - now);
    }
    return true;
  }

  // One read always pending once upgraded: its frame goes to the inbox.
  void keep_reading() {
    if (reading || broken || !upgraded) return;
    reading = true;
    ws.async_read(buffer, [this](beast::error_code ec, std::size_t) {
      reading = false;
      if (ec) {
        broken = true;
        return;
      }
      inbox.push_back({ws.got_text(), beast::buffers_to_string(buffer.data())});
      buffer.consume(buffer.size());
      keep_reading();
    });
  }

  bool write(const std::string& payload, bool text) {
    if (!upgraded || broken) return false;
    ws.text(text);
    // Shared: a handler that outlives this call (a timed-out write) still has them.
    auto done = std::make_shared<bool>(false);
    auto result = std::make_shared<beast::error_code>();
    ws.async_write(asio::buffer(payload), [done, result](beast::error_code ec, std::size_t) { *result = ec, *done = true; });
    if (!run_until([&] { return *done; }, std::chrono::seconds(10))) return false;  // a write stuck on a full socket
    return !*result;
  }
};

ws_client::ws_client(const std::string& host, std::uint16_t port, ws_client_options options)
    : impl_(std::make_unique<impl>()) {
  auto& i = *impl_;
  websocket::permessage_deflate deflate;
  deflate.client_enable = options.offer_deflate;
  i.ws.set_option(deflate);
  i.ws.read_message_max(256ull << 20);
  i.ws.set_option(websocket::stream_base::decorator([headers = options.headers](websocket::request_type& req) {
    for (const auto& [name, value] : headers) req.set(name, value);
  }));
  auto done = std::make_shared<bool>(false);
  auto result = std::make_shared<beast::error_code>();
  tcp::endpoint endpoint(asio::ip::make_address(host), port);
  i.ws.next_layer().async_connect(endpoint, [&i, done, result, host, port, target = options.target](beast::error_code ec) {
    if (ec) {
      *result = ec, *done = true;
      return;
    }
    i.ws.async_handshake(i.handshake, host + ":" + std::to_string(port), target,
                         [done, result](beast::error_code handshake_ec) { *result = handshake_ec, *done = true; });
  });
  if (!i.run_until([&] { return *done; }, options.timeout)) {
    beast::error_code ignored;
    i.ws.next_layer().close(ignored);
    i.run_until([&] { return *done; }, std::chrono::seconds(1));
    return;
  }
  for (const auto& field : i.handshake) {
    std::string name(field.name_string());
    for (auto& c : name) c = char(std::tolower(static_cast<unsigned char>(c)));
    i.headers[name] = std::string(field.value());
  }
  i.upgraded = !*result;
  i.keep_reading();
}

ws_client::~ws_client() {
  if (open()) close(std::chrono::seconds(1));
  beast::error_code ignored;
  impl_->ws.next_layer().close(ignored);
  impl_->io.restart();
  impl_->io.run_for(std::chrono::milliseconds(200));  // let cancelled handlers run before the stream goes
}

bool ws_client::open() const { return impl_->upgraded && !impl_->broken; }
int ws_client::handshake_status() const { return int(impl_->handshake.result_int()); }
const std::map<std::string, std::string>& ws_client::handshake_headers() const { return impl_->headers; }
const std::string& ws_client::refusal_body() const { return impl_->handshake.body(); }
bool ws_client::send_text(const std::string& payload) { return impl_->write(payload, true); }
bool ws_client::send_binary(const std::string& payload) { return impl_->write(payload, false); }
bool ws_client::closed() const { return impl_->broken; }
int ws_client::close_code() const { return impl_->broken ? int(impl_->ws.reason().code) : 0; }

std::optional<ws_client::frame> ws_client::read(std::chrono::milliseconds timeout) {
  auto& i = *impl_;
  i.keep_reading();
  i.run_until([&] { return !i.inbox.empty() || i.broken || !i.upgraded; }, timeout);
  if (i.inbox.empty()) return std::nullopt;
  auto next = std::move(i.inbox.front());
  i.inbox.pop_front();
  return next;
}

ws_client::response ws_client::read_response(std::chrono::milliseconds timeout) {
  const auto deadline = std::chrono::steady_clock::now() + timeout;
  response out;
  for (;;) {
    const auto left = std::chrono::duration_cast<std::chrono::milliseconds>(deadline - std::chrono::steady_clock::now());
    if (left.count() <= 0) return out;
    auto next = read(left);
    if (!next) return out;
    out.frames.push_back(next->payload);
    auto event = nlohmann::json::parse(next->payload, nullptr, false);
    if (!event.is_object()) continue;
    out.events.push_back(event);
    const auto type = event.contains("type") && event["type"].is_string() ? event["type"].get<std::string>() : "";
    if (type == "response.completed" || type == "response.failed" || type == "response.incomplete" || type == "error") {
      out.end = type;
      return out;
    }
  }
}

ws_client::response ws_client::create(nlohmann::json body, std::chrono::milliseconds timeout) {
  body["type"] = "response.create";
  if (!send_text(body.dump())) return {};
  return read_response(timeout);
}

void ws_client::close(std::chrono::milliseconds timeout) {
  auto& i = *impl_;
  if (!open()) return;
  auto done = std::make_shared<bool>(false);
  i.ws.async_close(websocket::close_code::normal, [done](beast::error_code) { *done = true; });
  i.run_until([&] { return *done && !i.reading; }, timeout);
  i.broken = true;
}

}  // namespace gistproxy::testing
