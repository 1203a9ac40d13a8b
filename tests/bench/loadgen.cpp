// gistproxy-loadgen: a small HTTP/1.1 load generator for `make bench`.
//
//   --mode closed  N connections each sending back-to-back (max throughput)
//   --mode open    requests scheduled at a fixed rate; latency is measured
//                  from the *scheduled* send time, so queueing is not hidden
//   --mode upload  large request bodies, reports MB/s
//   --body-file F  send F's bytes as every request's body (an agent transcript
//                  from scripts/agent_body.py) instead of a generated one
//   --mode ttfb    time to the first body byte of a streamed response
//   --mode streams --conns N: N long-lived streamed requests held open at
//                  once (opened over --ramp seconds), each read to its end;
//                  reports how many completed and how many SSE events arrived
//
// Prints one JSON object. Requests are pre-serialized; responses are parsed
// only as far as framing needs (Content-Length or chunked).
#include <algorithm>
#include <array>
#include <boost/asio.hpp>
#include <chrono>
#include <cstdio>
#include <cstring>
#include <deque>
#include <fstream>
#include <iostream>
#include <map>
#include <memory>
#include <string>
#include <string_view>
#include <vector>

namespace asio = boost::asio;
using tcp = asio::ip::tcp;
using clk = std::chrono::steady_clock;
using namespace std::chrono_literals;

namespace {

struct options {
  std::string host = "127.0.0.1", port = "8080", path = "/v1/chat/completions", mode = "closed", body_file;
  std::size_t body_bytes = 1024, conns = 64;
  double duration_s = 5, rate = 1000, warmup_s = 1, ramp_s = 5;
  std::size_t count = 100;
};

// A streamed chat request with a tool, as agents send: gistproxy offers
// read_blob beside it and so splices the answer stream (interception armed).
constexpr std::string_view stream_body =
    R"({"model":"gpt-4o-mini","stream":true,"messages":[{"role":"user","content":"hi"}],)"
    R"("tools":[{"type":"function","function":{"name":"get_weather","parameters":{"type":"object","properties":{}}}}]})";

std::string make_body(std::size_t n) {
  std::string head = R"({"model":"gpt-4o-mini","messages":[{"role":"user","content":")";
  std::string tail = R"("}]})";
  std::size_t fill = n > head.size() + tail.size() ? n - head.size() - tail.size() : 0;
  return head + std::string(fill, 'x') + tail;
}

std::string read_file(const std::string& path) {
  std::ifstream f(path, std::ios::binary);
  if (!f) throw std::runtime_error("cannot read " + path);
  return std::string(std::istreambuf_iterator<char>(f), {});
}

// Incremental response framing: true once one whole response is in.
class response_reader {
 public:
  void reset() {
    buf_.clear();
    header_done_ = false;
    chunked_ = false;
    length_ = 0;
    pos_ = 0;
    first_body_ = false;
  }
  // Returns 1 complete, 0 need more, -1 error.
  int feed(const char* data, std::size_t n) {
    buf_.append(data, n);
    if (!header_done_) {
      auto end = buf_.find("\r\n\r\n");
      if (end == std::string::npos) return 0;
      header_done_ = true;
      std::string head = buf_.substr(0, end);
      for (auto& c : head) c = char(std::tolower(static_cast<unsigned char>(c)));
      status_ = std::atoi(head.c_str() + 9);
      chunked_ = head.find("transfer-encoding: chunked") != std::string::npos;
      auto cl = head.find("content-length:");
      length_ = cl == std::string::npos ? 0 : std::strtoull(head.c_str() + cl + 15, nullptr, 10);
      pos_ = end + 4;
    }
    if (buf_.size() > pos_) first_body_ = true;
    if (!chunked_) return buf_.size() - pos_ >= length_ ? 1 : 0;
    for (;;) {  // walk chunks
      auto eol = buf_.find("\r\n", pos_);
      if (eol == std::string::npos) return 0;
      std::size_t size = std::strtoull(buf_.c_str() + pos_, nullptr, 16);
      if (size == 0) return buf_.find("\r\n\r\n", pos_) != std::string::npos || buf_.compare(eol, 4, "\r\n\r\n") == 0 ? 1 : 0;
      if (buf_.size() < eol + 2 + size + 2) return 0;
      pos_ = eol + 2 + size + 2;
    }
  }
  bool first_body() const { return first_body_; }
  int status() const { return status_; }
  std::string_view received() const { return buf_; }

 private:
  std::string buf_;
  bool header_done_ = false, chunked_ = false, first_body_ = false;
  std::size_t length_ = 0, pos_ = 0;
  int status_ = 0;
};

struct stats {
  std::vector<double> latencies_us;
  std::size_t errors = 0, ok = 0, non_2xx = 0;
  std::uint64_t bytes_sent = 0;
};

struct connection : std::enable_shared_from_this<connection> {
  tcp::socket socket;
  response_reader reader;
  std::vector<char> buf = std::vector<char>(65536);
  bool busy = false;
  explicit connection(asio::io_context& io) : socket(io) {}
};

class runner {
 public:
  runner(options o) : opt_(std::move(o)) {
    // ttfb on a chat path POSTs a streamed chat request (what the proxy
    // intercepts); on any other path it GETs a plain event stream.
    const bool chat_stream = opt_.mode == "ttfb" && opt_.path.find("/chat/completions") != std::string::npos;
    std::string body = chat_stream          ? std::string(stream_body)
                       : opt_.mode == "ttfb" ? std::string()
                       : !opt_.body_file.empty() ? read_file(opt_.body_file)
                                             : make_body(opt_.body_bytes);
    request_ = (opt_.mode == "ttfb" && !chat_stream ? "GET " : "POST ") + opt_.path + " HTTP/1.1\r\nHost: " +
               opt_.host + "\r\nContent-Type: application/json\r\nAuthorization: Bearer sk-bench\r\n";
    if (!body.empty() || opt_.mode != "ttfb") request_ += "Content-Length: " + std::to_string(body.size()) + "\r\n";
    request_ += "\r\n" + body;
  }

  int run() {
    tcp::resolver resolver(io_);
    auto endpoints = resolver.resolve(opt_.host, opt_.port);
    for (std::size_t i = 0; i < opt_.conns; ++i) {
      auto c = std::make_shared<connection>(io_);
      asio::connect(c->socket, endpoints);
      c->socket.set_option(tcp::no_delay(true));
      conns_.push_back(c);
    }
    start_ = clk::now();
    measure_from_ = start_ + std::chrono::duration_cast<clk::duration>(std::chrono::duration<double>(opt_.warmup_s));
    end_ = measure_from_ + std::chrono::duration_cast<clk::duration>(std::chrono::duration<double>(opt_.duration_s));
    if (opt_.mode == "open") {
      schedule_next_ = start_;
      tick();
    } else {
      for (auto& c : conns_) send(c, clk::now());
    }
    io_.run();
    report();
    return 0;
  }

 private:
  void send(const std::shared_ptr<connection>& c, clk::time_point scheduled) {
    if (clk::now() >= end_ || (opt_.mode == "ttfb" && done_count_ >= opt_.count)) return;
    c->busy = true;
    c->reader.reset();
    asio::async_write(c->socket, asio::buffer(request_), [this, c, scheduled](boost::system::error_code ec, std::size_t n) {
      if (ec) return fail(c);
      if (scheduled >= measure_from_) st_.bytes_sent += n;
      read(c, scheduled);
    });
  }

  void read(const std::shared_ptr<connection>& c, clk::time_point scheduled) {
    c->socket.async_read_some(asio::buffer(c->buf), [this, c, scheduled](boost::system::error_code ec, std::size_t n) {
      if (ec) return fail(c);
      bool had_body = c->reader.first_body();
      int r = c->reader.feed(c->buf.data(), n);
      if (r < 0) return fail(c);
      auto now = clk::now();
      if (opt_.mode == "ttfb" && !had_body && c->reader.first_body())
        st_.latencies_us.push_back(std::chrono::duration<double, std::micro>(now - scheduled).count());
      if (r == 0) return read(c, scheduled);
      c->busy = false;
      if (scheduled >= measure_from_ || opt_.mode == "ttfb") {
        ++done_count_;
        if (c->reader.status() / 100 == 2) ++st_.ok;
        else ++st_.non_2xx;
        if (opt_.mode != "ttfb") st_.latencies_us.push_back(std::chrono::duration<double, std::micro>(now - scheduled).count());
      }
      if (opt_.mode == "open") {
        if (!backlog_.empty()) {
          auto next = backlog_.front();
          backlog_.pop_front();
          send(c, next);
        }
      } else {
        send(c, now);
      }
    });
  }

  void fail(const std::shared_ptr<connection>& c) {
    ++st_.errors;
    c->busy = false;
    boost::system::error_code ignored;
    c->socket.close(ignored);
  }

  // Open loop: release every request whose scheduled time has come.
  void tick() {
    auto now = clk::now();
    auto interval = std::chrono::duration_cast<clk::duration>(std::chrono::duration<double>(1.0 / opt_.rate));
    while (schedule_next_ <= now && schedule_next_ < end_) {
      auto it = std::find_if(conns_.begin(), conns_.end(), [](auto& c) { return !c->busy && c->socket.is_open(); });
      if (it != conns_.end()) send(*it, schedule_next_);
      else backlog_.push_back(schedule_next_);
      schedule_next_ += interval;
    }
    if (schedule_next_ >= end_) {
      timer_.reset();
      return;
    }
    if (!timer_) timer_ = std::make_unique<asio::steady_timer>(io_);
    timer_->expires_at(schedule_next_);
    timer_->async_wait([this](boost::system::error_code) { tick(); });
  }

  void report() {
    auto& l = st_.latencies_us;
    std::sort(l.begin(), l.end());
    auto pct = [&](double p) { return l.empty() ? 0.0 : l[std::min(l.size() - 1, std::size_t(p * double(l.size())))]; };
    double secs = opt_.duration_s;
    std::printf(
        "{\"mode\":\"%s\",\"requests\":%zu,\"non_2xx\":%zu,\"errors\":%zu,\"rps\":%.1f,\"p50_us\":%.1f,"
        "\"p90_us\":%.1f,\"p99_us\":%.1f,\"mb_per_s\":%.2f,\"backlog_left\":%zu}\n",
        opt_.mode.c_str(), st_.ok + st_.non_2xx, st_.non_2xx, st_.errors, double(st_.ok) / secs, pct(0.5), pct(0.9),
        pct(0.99), double(st_.bytes_sent) / secs / 1e6, backlog_.size());
  }

  options opt_;
  asio::io_context io_{1};
  std::string request_;
  std::vector<std::shared_ptr<connection>> conns_;
  std::deque<clk::time_point> backlog_;
  std::unique_ptr<asio::steady_timer> timer_;
  clk::time_point start_, measure_from_, end_, schedule_next_;
  std::size_t done_count_ = 0;
  stats st_;
};

// N streams open at once: the memory and CPU an open stream costs a proxy.
class stream_runner {
 public:
  explicit stream_runner(options o) : opt_(std::move(o)) {
    std::string body(stream_body);
    request_ = "POST " + opt_.path + " HTTP/1.1\r\nHost: " + opt_.host +
               "\r\nContent-Type: application/json\r\nAuthorization: Bearer sk-bench\r\nContent-Length: " +
               std::to_string(body.size()) + "\r\n\r\n" + body;
  }

  int run() {
    tcp::resolver resolver(io_);
    endpoint_ = *resolver.resolve(opt_.host, opt_.port).begin();
    start_ = clk::now();
    deadline_.expires_after(std::chrono::duration_cast<clk::duration>(std::chrono::duration<double>(opt_.duration_s)));
    deadline_.async_wait([this](boost::system::error_code ec) {
      if (!ec) io_.stop();  // whatever has not completed by now is reported as not completed
    });
    open_next();
    io_.run();
    std::printf("{\"mode\":\"streams\",\"streams\":%zu,\"opened\":%zu,\"completed\":%zu,\"non_2xx\":%zu,\"errors\":%zu,"
                "\"events\":%zu,\"open_s\":%.2f,\"took_s\":%.2f}\n",
                opt_.conns, opened_, completed_, non_2xx_, errors_, events_, open_s_,
                std::chrono::duration<double>(clk::now() - start_).count());
    return 0;
  }

 private:
  struct stream {
    tcp::socket socket;
    response_reader reader;
    std::array<char, 4096> buf;
    explicit stream(asio::io_context& io) : socket(io) {}
  };

  // Opens the streams evenly over the ramp, so no listen backlog overflows.
  void open_next() {
    if (started_ == opt_.conns) {
      open_s_ = std::chrono::duration<double>(clk::now() - start_).count();
      return;
    }
    auto s = std::make_shared<stream>(io_);
    ++started_;
    s->socket.async_connect(endpoint_, [this, s](boost::system::error_code ec) {
      if (ec) return fail(s);
      ++opened_;
      s->socket.set_option(tcp::no_delay(true));
      asio::async_write(s->socket, asio::buffer(request_), [this, s](boost::system::error_code wec, std::size_t) {
        if (wec) return fail(s);
        read(s);
      });
    });
    auto at = start_ + std::chrono::duration_cast<clk::duration>(
                           std::chrono::duration<double>(opt_.ramp_s * double(started_) / double(opt_.conns)));
    ramp_.expires_at(at);
    ramp_.async_wait([this](boost::system::error_code ec) {
      if (!ec) open_next();
    });
  }

  void read(const std::shared_ptr<stream>& s) {
    s->socket.async_read_some(asio::buffer(s->buf), [this, s](boost::system::error_code ec, std::size_t n) {
      if (ec) return fail(s);
      int r = s->reader.feed(s->buf.data(), n);
      if (r < 0) return fail(s);
      if (r == 0) return read(s);
      if (s->reader.status() / 100 != 2) ++non_2xx_;
      else if (s->reader.received().find("data: [DONE]") != std::string_view::npos) ++completed_;
      else ++errors_;
      for (auto at = s->reader.received().find("\ndata: "); at != std::string_view::npos;
           at = s->reader.received().find("\ndata: ", at + 1))
        ++events_;
      finish(s);
    });
  }

  void fail(const std::shared_ptr<stream>& s) {
    ++errors_;
    finish(s);
  }

  void finish(const std::shared_ptr<stream>& s) {
    boost::system::error_code ignored;
    s->socket.close(ignored);
    if (++finished_ == opt_.conns) io_.stop();
  }

  options opt_;
  asio::io_context io_{1};
  asio::steady_timer ramp_{io_}, deadline_{io_};
  tcp::endpoint endpoint_;
  std::string request_;
  clk::time_point start_;
  std::size_t started_ = 0, opened_ = 0, finished_ = 0, completed_ = 0, non_2xx_ = 0, errors_ = 0, events_ = 0;
  double open_s_ = 0;
};

}  // namespace

int main(int argc, char** argv) {
  options o;
  for (int i = 1; i + 1 < argc; i += 2) {
    std::string k = argv[i], v = argv[i + 1];
    if (k == "--host") o.host = v;
    else if (k == "--port") o.port = v;
    else if (k == "--path") o.path = v;
    else if (k == "--mode") o.mode = v;
    else if (k == "--body-file") o.body_file = v;
    else if (k == "--body-bytes") o.body_bytes = std::stoull(v);
    else if (k == "--conns") o.conns = std::stoull(v);
    else if (k == "--duration") o.duration_s = std::stod(v);
    else if (k == "--warmup") o.warmup_s = std::stod(v);
    else if (k == "--rate") o.rate = std::stod(v);
    else if (k == "--count") o.count = std::stoull(v);
    else if (k == "--ramp") o.ramp_s = std::stod(v);
    else {
      std::cerr << "loadgen: unknown option " << k << "\n";
      return 2;
    }
  }
  if (o.mode == "ttfb") {
    o.warmup_s = 0;
    o.duration_s = 600;
  }
  try {
    if (o.mode == "streams") return stream_runner(o).run();
    return runner(o).run();
  } catch (const std::exception& e) {
    std::cerr << "loadgen: " << e.what() << "\n";
    return 1;
  }
}
