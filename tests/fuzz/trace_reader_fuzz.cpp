// The trace readers of `gistproxy replay` (every supported format, detected
// from the text, and one reader forced as --format does: readers must survive
// files of other formats) and the span-log reader of `gistproxy report`.
#include <exception>

#include "rewrite/replay/trace_formats.hpp"
#include "telemetry/span_report.hpp"

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
  std::string_view text(reinterpret_cast<const char*>(data), size);
  try {
    gistproxy::rewrite::read_trace(text);
  } catch (const std::exception&) {  // its contract: an unreadable trace is an error the CLI reports
  }
  const auto& formats = gistproxy::rewrite::trace_formats();
  try {
    gistproxy::rewrite::read_trace(text, formats[size % formats.size()].name);
  } catch (const std::exception&) {
  }
  gistproxy::telemetry::span_report_builder report;
  std::size_t line = 0;
  for (std::size_t at = 0; at < text.size();) {
    auto nl = text.find('\n', at);
    auto end = nl == std::string_view::npos ? text.size() : nl;
    report.add_line(text.substr(at, end - at), "fuzz:" + std::to_string(++line));
    at = end + 1;
  }
  gistproxy::telemetry::format_report_text(report.build());
  return 0;
}
