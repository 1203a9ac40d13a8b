#include "proxy/commands/wrap_proxy.hpp"

#include <fcntl.h>
#include <poll.h>
#include <signal.h>
#include <sys/prctl.h>
#include <sys/wait.h>
#include <unistd.h>

#include <boost/asio/connect.hpp>
#include <boost/asio/io_context.hpp>
#include <boost/asio/ip/tcp.hpp>
#include <boost/beast/core.hpp>
#include <boost/beast/http.hpp>
#include <stdexcept>

extern char** environ;

namespace gistproxy::proxy {
namespace {

constexpr std::size_t max_start_log = 64 * 1024;
constexpr auto slow_drain = std::chrono::seconds(1);  // a drain this long is said, with how to cut it short  // what is kept of a proxy that did not start, to say why

// The "listening" line's "listen" and "admin" addresses, if `line` is it.
bool read_listening(const std::string& line, std::string& listen, std::string& admin) {
  if (line.find("\"msg\":\"listening\"") == std::string::npos) return false;
  auto j = nlohmann::json::parse(line, nullptr, false);
  if (!j.is_object() || !j.contains("listen") || !j["listen"].is_string() || !j.contains("admin") ||
      !j["admin"].is_string())
    return false;
  listen = j["listen"].get<std::string>();
  admin = j["admin"].get<std::string>();
  return true;
}

void copy_until_closed(int from, int to) {
  char buf[8192];
  for (;;) {
    auto n = ::read(from, buf, sizeof buf);
    if (n < 0 && errno == EINTR) continue;
    if (n <= 0) break;
    if (to >= 0 && ::write(to, buf, std::size_t(n)) < 0) {
      // A full disk loses the log, never the proxy: keep reading.
    }
  }
  if (to >= 0) ::close(to);
}

// fork and exec rather than posix_spawn: only a forked child can ask for a
// signal when its parent dies. A wrap killed outright (SIGKILL, the OOM
// killer) then still stops its proxy, which drains as on any SIGTERM. The
// signal comes when the forking thread ends: wrap's main thread, which
// lives as long as wrap does. Between fork and exec only async-signal-safe
// calls. -1 with errno when fork fails.
pid_t spawn_serve(std::vector<char*>& argv, int log_fd) {
  const pid_t parent = ::getpid();
  const pid_t pid = ::fork();
  if (pid != 0) return pid;
  ::prctl(PR_SET_PDEATHSIG, SIGTERM);
  if (::getppid() != parent) ::_exit(127);  // wrap died before the request took hold
  ::setpgid(0, 0);  // its own group: the terminal's signals are not its
  struct sigaction dfl {}, ign {};
  dfl.sa_handler = SIG_DFL;
  ign.sa_handler = SIG_IGN;
  for (int s : {SIGINT, SIGTERM, SIGHUP, SIGQUIT}) ::sigaction(s, &dfl, nullptr);  // wrap's own stances are not the proxy's
  // Its log is a pipe to wrap: once wrap is gone, a log line must not end
  // the drain the parent-death SIGTERM started.
  ::sigaction(SIGPIPE, &ign, nullptr);
  sigset_t none;
  sigemptyset(&none);
  ::sigprocmask(SIG_SETMASK, &none, nullptr);
  // Above 0-2 first: a wrap started with a standard descriptor closed got
  // the pipe there. dup2 leaves the copies open across exec.
  const int log = ::fcntl(log_fd, F_DUPFD_CLOEXEC, 3);
  const int null = ::open("/dev/null", O_RDONLY | O_CLOEXEC);  // the terminal is the agent's
  if (log < 0 || null < 0 || ::dup2(null, 0) < 0 || ::dup2(log, 1) < 0 || ::dup2(log, 2) < 0) ::_exit(127);
  for (int fd = 0; fd <= 2; ++fd) ::fcntl(fd, F_SETFD, 0);
  ::close_range(3, ~0U, 0);  // what wrap's own parent left open is not the proxy's to hold
  ::execve(argv[0], argv.data(), environ);
  ::_exit(127);
}

}  // namespace

std::string own_executable() {
  char buf[4096];
  auto n = ::readlink("/proc/self/exe", buf, sizeof buf - 1);
  if (n <= 0) throw std::runtime_error("cannot find the gistproxy binary (/proc/self/exe)");
  return std::string(buf, std::size_t(n));
}

wrap_proxy::wrap_proxy(const std::vector<std::string>& serve_args, const std::string& log_path,
                       const volatile sig_atomic_t* give_up, std::chrono::milliseconds start_timeout)
    : give_up_(give_up) {
  std::vector<std::string> argv = {own_executable(), "serve", "--listen", "127.0.0.1:0", "--admin-listen", "127.0.0.1:0"};
  argv.insert(argv.end(), serve_args.begin(), serve_args.end());
  std::vector<char*> cargv;
  for (auto& a : argv) cargv.push_back(a.data());
  cargv.push_back(nullptr);

  int fds[2];
  if (::pipe2(fds, O_CLOEXEC) != 0) throw std::runtime_error("pipe failed");
  pid_ = spawn_serve(cargv, fds[1]);
  const int spawn_error = errno;
  ::close(fds[1]);
  if (pid_ < 0) {
    ::close(fds[0]);
    throw std::runtime_error(std::string("cannot start gistproxy serve: ") + std::strerror(spawn_error));
  }
  log_fd_ = fds[0];

  // Read its log until it says where it listens (or gives up).
  const int log_file = ::open(log_path.c_str(), O_WRONLY | O_CREAT | O_APPEND | O_CLOEXEC, 0600);
  std::string seen, line;
  const auto deadline = std::chrono::steady_clock::now() + start_timeout;
  bool up = false;
  while (!up && !gave_up() && std::chrono::steady_clock::now() < deadline) {
    pollfd p{log_fd_, POLLIN, 0};
    const auto left = std::chrono::duration_cast<std::chrono::milliseconds>(deadline - std::chrono::steady_clock::now());
    if (::poll(&p, 1, int(std::max<std::int64_t>(1, left.count()))) <= 0) continue;
    char buf[4096];
    auto n = ::read(log_fd_, buf, sizeof buf);
    if (n < 0 && errno == EINTR) continue;
    if (n <= 0) break;  // it exited
    if (log_file >= 0 && ::write(log_file, buf, std::size_t(n)) < 0) {
    }
    if (seen.size() < max_start_log) seen.append(buf, std::size_t(n));
    for (ssize_t i = 0; i < n && !up; ++i) {
      if (buf[i] != '\n') {
        if (line.size() < max_start_log) line += buf[i];
        continue;
      }
      up = read_listening(line, listen_, admin_);
      line.clear();
    }
  }
  if (!up) {
    if (log_file >= 0) ::close(log_file);
    stop(std::chrono::milliseconds(0));
    if (gave_up()) throw std::runtime_error("interrupted while gistproxy serve started");
    throw std::runtime_error("gistproxy serve did not start:\n" + seen);
  }
  copier_ = std::thread(copy_until_closed, log_fd_, log_file);
}

wrap_proxy::~wrap_proxy() {
  if (pid_ > 0) stop(std::chrono::seconds(5));
  if (copier_.joinable()) copier_.join();
  if (log_fd_ >= 0) ::close(log_fd_);
}

std::optional<std::string> wrap_proxy::admin_get(const std::string& path) const {
  namespace beast = boost::beast;
  namespace http = beast::http;
  try {
    boost::asio::io_context io;
    const auto colon = admin_.rfind(':');
    boost::asio::ip::tcp::resolver resolver(io);
    beast::tcp_stream stream(io);
    stream.expires_after(std::chrono::seconds(10));
    stream.connect(resolver.resolve(admin_.substr(0, colon), admin_.substr(colon + 1)));
    http::request<http::empty_body> req{http::verb::get, path, 11};
    req.set(http::field::host, admin_);
    http::write(stream, req);
    beast::flat_buffer buffer;
    http::response_parser<http::string_body> parser;
    parser.body_limit(16u << 20);
    http::read(stream, buffer, parser);
    if (parser.get().result() != http::status::ok) return std::nullopt;
    return parser.get().body();
  } catch (const std::exception&) {
    return std::nullopt;
  }
}

int wrap_proxy::stop(std::chrono::milliseconds drain, const std::function<void()>& slow) {
  if (pid_ <= 0) return 0;
  ::kill(pid_, SIGTERM);
  const auto start = std::chrono::steady_clock::now();
  const auto deadline = start + drain + std::chrono::seconds(5);
  bool said = false;
  int status = 0;
  for (;;) {
    const auto r = ::waitpid(pid_, &status, WNOHANG);
    if (r == pid_ || (r < 0 && errno != EINTR)) break;
    const auto now = std::chrono::steady_clock::now();
    if (now >= deadline || gave_up()) {  // Ctrl-C while it drains: stop waiting, the run's files still go
      ::kill(pid_, SIGKILL);
      while (::waitpid(pid_, &status, 0) < 0 && errno == EINTR) {
      }
      break;
    }
    if (!said && slow && now - start >= slow_drain) {
      said = true;
      slow();
    }
    std::this_thread::sleep_for(std::chrono::milliseconds(20));
  }
  pid_ = -1;
  return WIFEXITED(status) ? WEXITSTATUS(status) : 128 + WTERMSIG(status);
}

}  // namespace gistproxy::proxy
