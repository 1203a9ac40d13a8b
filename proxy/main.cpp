// gistproxy: dispatches the subcommands (proxy/commands/).
#include <cstdio>
#include <iostream>
#include <string>
#include <vector>

#include "proxy/commands/blob_command.hpp"
#include "proxy/commands/replay_command.hpp"
#include "proxy/commands/report_command.hpp"
#include "proxy/commands/serve_command.hpp"
#include "proxy/commands/tokens_command.hpp"
#include "proxy/commands/wrap_command.hpp"

extern char** environ;

namespace gp = gistproxy;

namespace {

constexpr const char* usage =
    "usage: gistproxy <command> [options]\n\n"
    "commands:\n"
    "  serve      run the proxy (gistproxy serve --help for its options)\n"
    "  blob       read, verify and clean the blob store (gistproxy blob --help)\n"
    "  report     churn, integrity failures and savings from span logs (gistproxy report --help)\n"
    "  replay     what gistproxy would save on recorded traces, offline (gistproxy replay --help)\n"
    "  tokens     count the tokens of files as the proxy counts them (gistproxy tokens --help)\n"
    "  wrap       run a coding agent behind a private gistproxy (gistproxy wrap --help)\n"
    "  --version  print the version\n";

}  // namespace

int main(int argc, char** argv) {
  std::vector<std::string> args(argv + 1, argv + argc);
  if (args.empty() || args[0] == "--help" || args[0] == "-h" || args[0] == "help") {
    std::cout << usage;
    return args.empty() ? 2 : 0;
  }
  if (args[0] == "--version" || args[0] == "version") {
    std::cout << "gistproxy " << GISTPROXY_VERSION << "\n";
    return 0;
  }
  std::string command = args[0];
  args.erase(args.begin());
  if (command == "serve") return gp::proxy::serve_command(args, environ);
  if (command == "blob") return gp::proxy::blob_command(args);
  if (command == "report") return gp::proxy::report_command(args);
  if (command == "replay") return gp::proxy::replay_command(args);
  if (command == "tokens") return gp::proxy::tokens_command(args);
  if (command == "wrap") return gp::proxy::wrap_command(args, environ);
  std::cerr << "gistproxy: unknown command '" << command << "'\n" << usage;
  return 2;
}
