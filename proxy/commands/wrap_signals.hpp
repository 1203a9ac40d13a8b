// What `gistproxy wrap` does with signals, phase by phase. Around the agent
// (before it starts, and after it ended while the proxy drains and the
// run's files are removed) a Ctrl-C, SIGTERM, SIGHUP or SIGQUIT only says
// "stop waiting": wrap cuts the wait short and still cleans up. While the
// agent runs, SIGINT and SIGQUIT (which the terminal sends the agent too)
// are ignored, as system(3) does, and SIGTERM and SIGHUP go on to the agent.
// SIGPIPE is ignored throughout: a closed stderr must not end wrap before
// the agent ran, or before wrap stopped its proxy. The agent itself gets
// every one of these at its default, but for those wrap was started with
// ignored (nohup's SIGHUP): they stay ignored, for wrap and the agent.
#pragma once

#include <csignal>
#include <string>
#include <vector>

namespace gistproxy::proxy {

// Installs the "stop waiting" stance; from now until the process exits.
void wrap_signals_install();

// Set (to the signal's number) when a signal asked wrap to stop waiting.
const volatile sig_atomic_t* wrap_give_up_flag();
int wrap_give_up_signal();

// Runs the agent in the foreground, its terminal passed through; its exit
// status (127 when it cannot be started), 128 + the signal that ended it.
int run_agent(const std::vector<std::string>& argv, const std::vector<std::string>& env);

}  // namespace gistproxy::proxy
