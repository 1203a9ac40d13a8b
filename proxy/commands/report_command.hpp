// `gistproxy report SPANLOG...`: churn, integrity failures and savings per
// conversation from span logs (see telemetry/span_report.hpp).
#pragma once

#include <string>
#include <vector>

namespace gistproxy::proxy {

int report_command(const std::vector<std::string>& args);

}  // namespace gistproxy::proxy
