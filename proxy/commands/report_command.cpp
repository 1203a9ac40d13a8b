#include "proxy/commands/report_command.hpp"
#include "proxy/commands/input_files.hpp"

#include <fstream>
#include <iostream>

#include "telemetry/span_report.hpp"

namespace gistproxy::proxy {
namespace {

constexpr const char* help =
    "usage: gistproxy report [--json] [--churn-turns N] SPANLOG...\n\n"
    "Joins the compaction and page_in spans of span logs (serve --span-log) on trace id and prints,\n"
    "per conversation and in total: offloads, tokens saved, page-ins, churn pairs (a blob paged back\n"
    "within N turns of its first offload; default 1, as gistproxy_paging_churn_total) and integrity\n"
    "failures, then the same by tool. '-' reads standard input.\n\n"
    "  --json           one JSON object instead of text\n"
    "  --churn-turns N  turns after its offload within which a page-in counts as churn (default 1)\n\n"
    "Exit status: 0, or 1 when an integrity failure was found, 2 on bad usage or an unreadable file.\n";

bool read_log(std::istream& in, const std::string& name, telemetry::span_report_builder& builder) {
  std::string line;
  for (std::size_t n = 1; std::getline(in, line); ++n) builder.add_line(line, name + ":" + std::to_string(n));
  return !in.bad();
}

}  // namespace

int report_command(const std::vector<std::string>& args) {
  bool json = false;
  telemetry::report_options options;
  std::vector<std::string> files;
  for (std::size_t i = 0; i < args.size(); ++i) {
    const auto& a = args[i];
    if (a == "--help" || a == "-h") return std::cout << help, 0;
    if (a == "--json") {
      json = true;
    } else if (a == "--churn-turns") {
      if (i + 1 >= args.size()) return std::cerr << "--churn-turns needs a number\n", 2;
      try {
        std::size_t used = 0;
        options.churn_turns = std::stoull(args[++i], &used);
        if (used != args[i].size()) throw std::invalid_argument("trailing");
      } catch (const std::exception&) {
        return std::cerr << "--churn-turns: '" << args[i] << "' is not a number\n", 2;
      }
    } else if (a.size() > 1 && a[0] == '-') {
      return std::cerr << "unknown option '" << a << "' (see gistproxy report --help)\n", 2;
    } else {
      files.push_back(a);
    }
  }
  if (files.empty()) return std::cerr << help, 2;

  telemetry::span_report_builder builder(options);
  for (const auto& f : files) {
    if (f == "-") {
      read_log(std::cin, "stdin", builder);
      continue;
    }
    std::string why;
    if (!is_regular_input(f, why)) return std::cerr << "gistproxy report: cannot open " << f << ": " << why << "\n", 2;
    std::ifstream in(f);
    if (!in) return std::cerr << "gistproxy report: cannot open " << f << "\n", 2;
    if (!read_log(in, f, builder)) return std::cerr << "gistproxy report: error reading " << f << "\n", 2;
  }
  auto report = builder.build();
  if (json) std::cout << telemetry::report_to_json(report).dump(2, ' ', false, nlohmann::json::error_handler_t::replace) << "\n";
  else std::cout << telemetry::format_report_text(report);
  return report.total.integrity_failures ? 1 : 0;
}

}  // namespace gistproxy::proxy
