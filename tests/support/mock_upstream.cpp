#include "tests/support/mock_upstream.hpp"
#include "tests/support/mock_upstream_ws.hpp"
#include "tests/support/responses_state.hpp"
#include "tests/support/scripted_model.hpp"
#include "tests/support/size_billing.hpp"
#include "tests/support/mock_request_parts.hpp"
#include "tests/support/http_compression.hpp"
#include "tests/support/api_scenarios.hpp"
#include "rewrite/blob/digest.hpp"
#include "rewrite/eventstream/eventstream.hpp"
#include "rewrite/offload/base64.hpp"
#include "rewrite/request_target.hpp"

#include <boost/asio/as_tuple.hpp>
#include <boost/asio/co_spawn.hpp>
#include <boost/asio/use_awaitable.hpp>
#include <boost/asio/detached.hpp>
#include <boost/asio/io_context.hpp>
#include <boost/asio/ip/tcp.hpp>
#include <boost/asio/ssl.hpp>
#include <boost/asio/steady_timer.hpp>
#include <boost/asio/strand.hpp>
#include <boost/asio/write.hpp>
#include <boost/beast/core.hpp>
#include <boost/beast/http.hpp>
#include <boost/beast/ssl.hpp>
#include <map>
#include <sstream>
#include <mutex>
#include <nlohmann/json.hpp>
#include <vector>

namespace gistproxy::testing {

using namespace std::literals;
namespace asio = boost::asio;
namespace beast = boost::beast;
namespace http = beast::http;
using tcp = asio::ip::tcp;
constexpr auto nothrow = asio::as_tuple(asio::use_awaitable);


struct mock_upstream::impl {
  mock_upstream_options options;
  asio::io_context io;
  tcp::acceptor acceptor{io};
  std::unique_ptr<asio::ssl::context> tls;
  std::vector<std::thread> threads;
  std::atomic<std::uint64_t> accepted{0}, served{0}, cancelled{0}, hanging{0}, max_hanging{0};
  std::mutex otlp_mutex;
  std::vector<std::string> otlp;
  std::vector<std::string> llm;
  std::vector<std::map<std::string, std::string>> llm_heads;  // their headers, lowercase names
  responses_state responses;  // ids, store and previous_response_id, as the real API keeps them
  ws_responses* ws = nullptr;  // the Responses WebSocket route, owned by mock_upstream
  int otlp_failures = 0;

  template <class Stream>
  asio::awaitable<void> write_string(Stream& s, std::string_view text) {
    co_await asio::async_write(s, asio::buffer(text.data(), text.size()), nothrow);
  }

  template <class Stream>
  asio::awaitable<bool> sleep_ms(Stream&, long ms) {
    asio::steady_timer t(io, std::chrono::milliseconds(ms));
    auto [ec] = co_await t.async_wait(nothrow);
    co_return !ec;
  }

  // The head of a chunked event stream; false when the client is gone.
  template <class Stream>
  asio::awaitable<bool> start_event_stream(Stream& s) {
    http::response<http::empty_body> head{http::status::ok, 11};
    head.set(http::field::content_type, "text/event-stream");
    head.chunked(true);
    http::response_serializer<http::empty_body> sr{head};
    auto [ec, n] = co_await http::async_write_header(s, sr, nothrow);
    co_return !ec;
  }

  template <class Stream>
  asio::awaitable<bool> tick_stream(Stream& s, long ticks, long tick_ms, bool keep_alive) {
    if (!co_await start_event_stream(s)) co_return false;
    auto chunk = [](std::string_view delta, std::string_view finish) {
      std::string ev = R"(data: {"id":"chatcmpl-tick","object":"chat.completion.chunk","created":1700000000,)"
                       R"("model":"gpt-4o-mini","choices":[{"index":0,"delta":)" + std::string(delta) +
                       R"(,"finish_reason":)" + std::string(finish) + "}]}\n\n";
      std::ostringstream framed;
      framed << std::hex << ev.size() << "\r\n" << ev << "\r\n";
      return framed.str();
    };
    for (long i = 0; i < ticks; ++i) {
      if (i > 0 && !co_await sleep_ms(s, tick_ms)) co_return false;
      const std::string tick = chunk(R"({"content":"tick )" + std::to_string(i) + R"( "})", "null");  // named: GCC bug 100611
      co_await write_string(s, tick);
    }
    std::string done = chunk("{}", R"("stop")");
    done += "e\r\ndata: [DONE]\n\n\r\n0\r\n\r\n";
    co_await write_string(s, done);
    co_return keep_alive;
  }

  // A Bedrock stream, chunked, one AWS event-stream message per write:
  // InvokeModel wraps each SSE event's data in a "chunk" message ({"bytes":
  // base64, "p": padding}, as Bedrock pads its events); Converse (`typed`)
  // names each message by the event's name and carries its data as is.
  template <class Stream>
  asio::awaitable<bool> eventstream_answer(Stream& s, std::string_view events, bool typed, bool keep_alive) {
    const std::string head = "HTTP/1.1 200 OK\r\nContent-Type: application/vnd.amazon.eventstream\r\n"
                             "x-amzn-RequestId: mock\r\nTransfer-Encoding: chunked\r\n\r\n";
    co_await write_string(s, head);
    for (const auto& [name, data] : sse_events(std::string(events))) {
      std::string padding(1 + data.size() % 7, 'x');
      const std::string payload = typed ? data : R"({"bytes":")" + rewrite::base64_encode(data) + R"(","p":")" + padding + R"("})";
      const std::string message = rewrite::eventstream::encode(rewrite::eventstream::make_message(
          {{":event-type", typed ? name : "chunk"}, {":content-type", "application/json"}, {":message-type", "event"}}, payload));
      std::ostringstream framed;
      framed << std::hex << message.size() << "\r\n" << message << "\r\n";
      const std::string bytes = framed.str();  // named: GCC bug 100611
      auto [ec, n] = co_await asio::async_write(s, asio::buffer(bytes), nothrow);
      if (ec) co_return false;
    }
    co_await write_string(s, "0\r\n\r\n");
    co_return keep_alive;
  }

  // An SSE answer in a content coding, chunked, flushed after every line:
  // each chunk decodes to whole lines as they would stream from a real API.
  template <class Stream>
  asio::awaitable<bool> compressed_stream(Stream& s, const std::string& coding, std::string_view events, bool keep_alive) {
    const std::string head = "HTTP/1.1 200 OK\r\nContent-Type: text/event-stream\r\nCache-Control: no-cache\r\n"
                             "Content-Encoding: " + coding + "\r\nVary: Accept-Encoding\r\nTransfer-Encoding: chunked\r\n\r\n";
    co_await write_string(s, head);
    stream_compressor compressor(coding);
    auto chunk = [](const std::string& bytes) {
      std::ostringstream framed;
      framed << std::hex << bytes.size() << "\r\n" << bytes << "\r\n";
      return framed.str();
    };
    while (!events.empty()) {
      const auto eol = events.find('\n');
      const auto line = events.substr(0, eol == std::string_view::npos ? events.size() : eol + 1);
      events.remove_prefix(line.size());
      const std::string bytes = compressor.flush(line);
      if (bytes.empty()) continue;
      const std::string framed = chunk(bytes);  // named: GCC bug 100611
      auto [ec, n] = co_await asio::async_write(s, asio::buffer(framed), nothrow);
      if (ec) co_return false;
    }
    const std::string end = chunk(compressor.finish()) + "0\r\n\r\n";
    co_await write_string(s, end);
    co_return keep_alive;
  }

  template <class Stream>
  asio::awaitable<bool> respond(Stream& s, beast::flat_buffer&, http::request<http::string_body>& req) {
    std::string target(req.target());
    std::string path(rewrite::path_of(target));
    auto q = query_of(target);
    auto simple = [&](http::status st, std::string_view body, std::string_view ct = "application/json"sv) {
      http::response<http::string_body> res{st, 11};
      res.set(http::field::content_type, ct);
      res.keep_alive(req.keep_alive());
      res.body() = std::string(body);
      res.prepare_payload();
      return res;
    };
    auto send = [&](http::response<http::string_body> res) -> asio::awaitable<bool> {
      auto [ec, n] = co_await http::async_write(s, res, nothrow);
      co_return !ec && res.keep_alive();
    };

    if (path == "/echo" || path.ends_with("/echo")) {
      nlohmann::json headers = nlohmann::json::object();
      for (const auto& f : req) headers[std::string(f.name_string())] = std::string(f.value());
      nlohmann::json j{{"method", std::string(req.method_string())},
                       {"target", target},
                       {"headers", headers},
                       {"body_size", req.body().size()},
                       {"body_sha256", rewrite::sha256_hex(req.body())}};
      if (req.body().size() <= 65536) j["body"] = req.body();
      co_return co_await send(simple(http::status::ok, j.dump()));
    }
    if (ws_responses::wants(req)) co_return co_await ws->serve(s, std::move(req));
    if (auto kept = responses.serve(std::string_view(req.method_string()), target))  // Responses' stored state
      co_return co_await send(simple(http::status(kept->status), kept->body, kept->content_type));
    const auto route = route_of(path);
    std::string previous_llm;  // the LLM request before this one (size_billing's prefix cache)
    if (route) {
      std::map<std::string, std::string> headers;
      for (const auto& f : req) headers[lowercase(f.name_string())] = std::string(f.value());
      std::lock_guard lock(otlp_mutex);
      if (!llm.empty()) previous_llm = llm.back();
      llm.push_back(req.body());
      llm_heads.push_back(std::move(headers));
    }
    if (route) {
      // JSON answers come from the scripted model (chat streams are below).
      auto request = nlohmann::json::parse(req.body(), nullptr, false);
      const llm_api api = route->api;
      // Gemini, Vertex and Bedrock name the model and the streaming mode in the path.
      bool stream = route->stream ? *route->stream : request.is_object() && request.value("stream", false);
      if (!route->model.empty() && request.is_object()) request["model"] = route->model;
      if (api == llm_api::responses && request.is_object()) {
        auto admitted = responses.admit(request);
        if (!admitted.error.empty())
          co_return co_await send(simple(http::status::bad_request, responses_state::error_body(admitted.error).dump()));
        request = std::move(admitted.request);
      }
      auto scripted = request.is_object() ? script_model(api, request) : model_turn{"Hello from the mock.", {}};
      // The Responses API names each answer (and keeps it, see responses_state).
      std::string response_id;
      if (api == llm_api::responses && request.is_object() && scripted.status == 200)
        response_id = responses.keep(request, render_response(api, scripted, request.value("model", "mock-model"), request));
      auto named = [&](std::string text) {
        for (auto at = text.find("resp_mock"); !response_id.empty() && at != std::string::npos; at = text.find("resp_mock", at))
          text.replace(at, 9, response_id);
        // As the real API does, every chat answer has its own id and time (a
        // spliced stream must keep the first hop's), yet the same request gets
        // the same answer (tests compare direct and proxied bytes): both
        // follow the request, whose messages grow from hop to hop.
        const std::size_t messages = request.is_object() && request.contains("messages") && request["messages"].is_array()
                                         ? request["messages"].size() : 0;
        const std::string id = "chatcmpl-mock-" + rewrite::sha256_hex(req.body()).substr(0, 12);
        const std::string created = "\"created\":" + std::to_string(1700000000 + messages);
        for (auto at = text.find("\"chatcmpl-mock\""); api == llm_api::chat && at != std::string::npos;
             at = text.find("\"chatcmpl-mock\"", at))
          text.replace(at + 1, 13, id);
        for (auto at = text.find("\"created\":1700000000"); api == llm_api::chat && at != std::string::npos;
             at = text.find("\"created\":1700000000", at + created.size()))
          text.replace(at, 20, created);
        return text;
      };
      auto accept = req.find(http::field::accept_encoding);
      const auto coding = options.compress && accept != req.end() ? pick_coding(accept->value()) : std::nullopt;
      if (scripted.delay_ms > 0 && !co_await sleep_ms(s, scripted.delay_ms)) co_return false;
      if (scripted.status == 0) {  // hang: wait for the proxy to close, and count that
        char byte;
        auto [ec, n] = co_await s.async_read_some(asio::buffer(&byte, 1), nothrow);
        if (ec) cancelled++;
        co_return false;
      }
      if (stream && api == llm_api::chat && q_int(q, "ticks", 0) > 0) {
        // A long-lived chat stream for the bench: `ticks` small content chunks,
        // `tick_ms` apart, then the finish chunk and [DONE] (chunked framing).
        co_return co_await tick_stream(s, q_int(q, "ticks", 0), q_int(q, "tick_ms", 1000), req.keep_alive());
      }
      if (stream && scripted.status == 200) {
        // Close-delimited SSE (no Content-Length, no chunking), as some servers do.
        std::string model = request.value("model", "mock-model");
        const auto& turn = scripted;
        bool usage = request.contains("stream_options") && request["stream_options"].value("include_usage", false);
        std::string events = api == llm_api::messages    ? render_messages_stream(turn, model)
                             : api == llm_api::converse  ? render_converse_stream(turn, model)
                             : api == llm_api::responses ? render_responses_stream(turn, model, request)
                             : api == llm_api::gemini    ? render_gemini_stream(turn, model)
                                                         : render_chat_stream(turn, model, usage);
        events = named(std::move(events));
        if (turn.truncate) {  // cut before the end of the turn (a clean close, no transport error)
          for (std::string_view end : {"event: message_delta", "event: response.completed", "data: [DONE]"})
            if (auto at = events.find(end); at != std::string::npos) events.resize(at);
          if (api == llm_api::chat) events.resize(events.rfind("data: ", events.size() - 3));  // the finish chunk
          if (api == llm_api::gemini) events.resize(events.rfind("data: "));  // the event with finishReason
        }
        if (route->eventstream) co_return co_await eventstream_answer(s, events, api == llm_api::converse, req.keep_alive());
        if (coding) co_return co_await compressed_stream(s, *coding, events, req.keep_alive());
        const std::string sse = "HTTP/1.1 200 OK\r\nContent-Type: text/event-stream\r\nCache-Control: no-cache\r\n"
                                "Connection: close\r\n\r\n" + events;
        co_await write_string(s, sse);
        co_return false;
      }
      {
        std::string model = request.is_object() ? request.value("model", "mock-model") : "mock-model";
        auto answer = render_response(api, scripted, model, request);
        if (api == llm_api::chat) bill_by_size(answer, req.body(), previous_llm);
        auto res = simple(http::status(scripted.status), named(answer.dump()));
        if (coding) {
          res.body() = compress(*coding, res.body());
          res.set(http::field::content_encoding, *coding);
          res.set(http::field::vary, "Accept-Encoding");
          res.prepare_payload();
        }
        co_return co_await send(std::move(res));
      }
    }
    if (path == "/sse") {
      long events = q_int(q, "events", 10), delay = q_int(q, "delay_ms", 10), size = q_int(q, "size", 32);
      if (!co_await start_event_stream(s)) co_return false;
      for (long i = 0; i < events; ++i) {
        std::string ev = "event: tick\ndata: {\"i\":" + std::to_string(i) + ",\"pad\":\"" + std::string(size, 'x') + "\"}\n\n";
        std::ostringstream framed;
        framed << std::hex << ev.size() << "\r\n" << ev << "\r\n";
        co_await write_string(s, framed.str());
        if (i + 1 < events && delay > 0 && !co_await sleep_ms(s, delay)) co_return false;
      }
      co_await write_string(s, "0\r\n\r\n"sv);
      co_return req.keep_alive();
    }
    if (path == "/slow") {
      const long ms = q_int(q, "ms", 1000);
      if (!co_await sleep_ms(s, ms)) co_return false;
      co_return co_await send(simple(http::status::ok, R"({"slow":true})"sv));
    }
    if (path == "/drop") {
      co_await write_string(s, "HTTP/1.1 200 OK\r\nContent-Type: text/event-stream\r\nTransfer-Encoding: chunked\r\n\r\n"
                               "e\r\ndata: partial\n\n\r\n"sv);
      co_await sleep_ms(s, 50);
      co_return false;
    }
    if (path == "/drop-length") {
      co_await write_string(s, "HTTP/1.1 200 OK\r\nContent-Type: application/json\r\nContent-Length: 1000\r\n\r\n{\"partial\":"sv);
      co_await sleep_ms(s, 50);
      co_return false;
    }
    if (path == "/hang") {  // waits until the proxy closes; counted (what waits now, its peak, the closes)
      for (auto now = ++hanging, peak = max_hanging.load(); now > peak && !max_hanging.compare_exchange_weak(peak, now);) {}
      char byte;
      auto [ec, n] = co_await s.async_read_some(asio::buffer(&byte, 1), nothrow);
      --hanging;
      cancelled += ec ? 1 : 0;
      co_return false;
    }
    if (path == "/v1/traces") {
      // The lock covers the bookkeeping only, never a co_await: a coroutine
      // suspended with it held would block the next one on this io thread
      // for good (an LLM request taking the same lock hung the mock).
      bool fail = false;
      {
        std::lock_guard lock(otlp_mutex);
        if (otlp_failures > 0) {
          --otlp_failures;
          fail = true;
        } else {
          otlp.push_back(req.body());
        }
      }
      co_return co_await send(simple(fail ? http::status::service_unavailable : http::status::ok, "{}"sv));
    }
    if (path == "/bytes") {
      const std::string payload(std::size_t(q_int(q, "n", 1024)), 'b');
      co_return co_await send(simple(http::status::ok, payload, "application/octet-stream"sv));
    }
    co_return co_await send(simple(http::status::not_found, R"({"error":"mock: no such route"})"sv));
  }

  template <class Stream>
  asio::awaitable<void> serve(Stream& s) {
    beast::flat_buffer buffer;
    buffer.reserve(256 * 1024);  // large reads for large bodies
    for (;;) {
      http::request_parser<http::string_body> parser;
      parser.body_limit(1ull << 30);
      parser.header_limit(options.header_limit);
      auto [ec, n] = co_await http::async_read(s, buffer, parser, nothrow);
      if (ec) co_return;
      auto req = parser.release();
      served++;
      if (!co_await respond(s, buffer, req)) co_return;
    }
  }

  asio::awaitable<void> session(tcp::socket socket) {
    socket.set_option(tcp::no_delay(true));
    if (tls) {
      beast::ssl_stream<tcp::socket> s(std::move(socket), *tls);
      auto [ec] = co_await s.async_handshake(asio::ssl::stream_base::server, nothrow);
      if (ec) co_return;
      co_await serve(s);
      co_await s.async_shutdown(nothrow);
    } else {
      co_await serve(socket);
      beast::error_code ignored;
      socket.shutdown(tcp::socket::shutdown_send, ignored);
    }
  }

  asio::awaitable<void> accept_loop() {
    for (;;) {
      auto [ec, socket] = co_await acceptor.async_accept(asio::make_strand(io), nothrow);  // see ws_responses
      if (ec) co_return;
      accepted++;
      asio::co_spawn(io, session(std::move(socket)), asio::detached);
    }
  }
};

mock_upstream::mock_upstream(mock_upstream_options options) : impl_(std::make_unique<impl>()) {
  impl_->options = options;
  impl_->ws = (ws_ = std::make_shared<ws_responses>(impl_->responses)).get();
  if (!options.tls_cert_file.empty()) {
    impl_->tls = std::make_unique<asio::ssl::context>(asio::ssl::context::tls_server);
    impl_->tls->use_certificate_chain_file(options.tls_cert_file);
    impl_->tls->use_private_key_file(options.tls_key_file, asio::ssl::context::pem);
  }
  tcp::endpoint ep(asio::ip::make_address(options.host), options.port);
  impl_->acceptor.open(ep.protocol());
  impl_->acceptor.set_option(asio::socket_base::reuse_address(true));
  impl_->acceptor.bind(ep);
  impl_->acceptor.listen(1024);
  asio::co_spawn(impl_->io, impl_->accept_loop(), asio::detached);
  for (unsigned i = 0; i < std::max(1u, options.threads); ++i) impl_->threads.emplace_back([this] { impl_->io.run(); });
}

mock_upstream::~mock_upstream() {
  impl_->io.stop();
  for (auto& t : impl_->threads) t.join();
}

std::uint16_t mock_upstream::port() const { return impl_->acceptor.local_endpoint().port(); }
std::string mock_upstream::url() const {
  return std::string(impl_->tls ? "https" : "http") + "://" + (impl_->tls ? "localhost" : "127.0.0.1") + ":" +
         std::to_string(port());
}
std::uint64_t mock_upstream::connections_accepted() const { return impl_->accepted; }
std::uint64_t mock_upstream::requests_served() const { return impl_->served; }
std::uint64_t mock_upstream::hangs_cancelled() const { return impl_->cancelled; }
std::uint64_t mock_upstream::hangs_open() const { return impl_->hanging; }
std::uint64_t mock_upstream::hangs_peak() const { return impl_->max_hanging; }
template <class T>  // a copy taken under the lock the serving threads write under
static T locked_copy(std::mutex& m, const T& value) { std::lock_guard lock(m); return value; }
std::vector<std::string> mock_upstream::llm_bodies() const { return locked_copy(impl_->otlp_mutex, impl_->llm); }
std::vector<std::map<std::string, std::string>> mock_upstream::llm_headers() const {
  return locked_copy(impl_->otlp_mutex, impl_->llm_heads);
}
std::vector<std::string> mock_upstream::otlp_posts() const { return locked_copy(impl_->otlp_mutex, impl_->otlp); }
void mock_upstream::fail_next_otlp_posts(int n) { std::lock_guard lock(impl_->otlp_mutex); impl_->otlp_failures = n; }

}  // namespace gistproxy::testing
