#include "proxy/commands/wrap_signals.hpp"

#include <spawn.h>
#include <sys/wait.h>
#include <unistd.h>

#include <cerrno>
#include <cstring>
#include <iostream>

namespace gistproxy::proxy {
namespace {

constexpr int stance_signals[] = {SIGINT, SIGQUIT, SIGTERM, SIGHUP};

volatile sig_atomic_t give_up = 0;
volatile sig_atomic_t agent_pid = 0;
sigset_t ignored_at_start;  // as nohup or a script's `&` left them: they stay ignored, for the agent too

void note_give_up(int sig) { give_up = sig; }

// SIGTERM and SIGHUP sent to wrap go on to the agent.
void forward_signal(int sig) {
  if (agent_pid > 0) ::kill(pid_t(agent_pid), sig);
}

void set_handler(int sig, void (*handler)(int)) {
  struct sigaction sa {};
  sa.sa_handler = sigismember(&ignored_at_start, sig) ? SIG_IGN : handler;
  sigemptyset(&sa.sa_mask);
  ::sigaction(sig, &sa, nullptr);
}

// Between the stances there is no moment at a signal's default: each
// sigaction replaces the last, so a Ctrl-C is either ignored or noted.
void agent_stance() {
  set_handler(SIGINT, SIG_IGN);
  set_handler(SIGQUIT, SIG_IGN);
  set_handler(SIGTERM, forward_signal);
  set_handler(SIGHUP, forward_signal);
}

void waiting_stance() {
  for (int s : stance_signals) set_handler(s, note_give_up);
}

}  // namespace

void wrap_signals_install() {
  sigemptyset(&ignored_at_start);
  for (int s : {SIGINT, SIGQUIT, SIGTERM, SIGHUP, SIGPIPE}) {
    struct sigaction old {};
    if (::sigaction(s, nullptr, &old) == 0 && old.sa_handler == SIG_IGN) sigaddset(&ignored_at_start, s);
  }
  set_handler(SIGPIPE, SIG_IGN);
  waiting_stance();
}

const volatile sig_atomic_t* wrap_give_up_flag() { return &give_up; }

int wrap_give_up_signal() { return give_up; }

int run_agent(const std::vector<std::string>& argv, const std::vector<std::string>& env) {
  std::vector<char*> cargv, cenv;
  for (const auto& a : argv) cargv.push_back(const_cast<char*>(a.c_str()));
  cargv.push_back(nullptr);
  for (const auto& e : env) cenv.push_back(const_cast<char*>(e.c_str()));
  cenv.push_back(nullptr);
  posix_spawnattr_t attr;
  posix_spawnattr_init(&attr);
  sigset_t defaults;  // an ignored signal stays ignored across exec: wrap's own ignoring is undone
  sigemptyset(&defaults);
  for (int s : {SIGINT, SIGQUIT, SIGTERM, SIGHUP, SIGPIPE})
    if (!sigismember(&ignored_at_start, s)) sigaddset(&defaults, s);
  posix_spawnattr_setsigdefault(&attr, &defaults);
  posix_spawnattr_setflags(&attr, POSIX_SPAWN_SETSIGDEF);
  agent_stance();
  pid_t pid = 0;
  const int rc = ::posix_spawnp(&pid, cargv[0], nullptr, &attr, cargv.data(), cenv.data());
  posix_spawnattr_destroy(&attr);
  int status = 0;
  if (rc == 0) {
    agent_pid = pid;
    while (::waitpid(pid, &status, 0) < 0 && errno == EINTR) {
    }
    agent_pid = 0;
  }
  waiting_stance();
  if (rc != 0) {
    std::cerr << "gistproxy wrap: cannot run " << argv[0] << ": " << std::strerror(rc) << "\n";
    return 127;
  }
  return WIFEXITED(status) ? WEXITSTATUS(status) : 128 + WTERMSIG(status);
}

}  // namespace gistproxy::proxy
