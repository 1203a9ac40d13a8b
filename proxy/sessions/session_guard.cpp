#include "proxy/sessions/session_guard.hpp"

#include <cxxabi.h>

#include <cstdlib>
#include <memory>
#include <string>

namespace gistproxy::proxy {
namespace {

// The exception's type, demangled where the runtime can: never its what(),
// which may hold request or answer bytes (a JSON parser quotes its input).
std::string type_of(const std::exception_ptr& failure) {
  try {
    std::rethrow_exception(failure);
  } catch (...) {
    const std::type_info* type = abi::__cxa_current_exception_type();
    if (!type) return "unknown";
    int status = 0;
    std::unique_ptr<char, void (*)(void*)> readable(abi::__cxa_demangle(type->name(), nullptr, nullptr, &status),
                                                    std::free);
    return status == 0 && readable ? readable.get() : type->name();
  }
}

}  // namespace

void count_session_failure(services& svc, std::string_view transport, std::string_view where,
                           std::exception_ptr failure) noexcept {
  try {
    svc.metrics.session_failures.labels({transport, where}).inc();
    std::string fields = "\"transport\":";
    telemetry::append_json_string(fields, transport);
    fields += ",\"where\":";
    telemetry::append_json_string(fields, where);
    fields += ",\"exception\":";
    telemetry::append_json_string(fields, failure ? type_of(failure) : "none");
    svc.log.log(telemetry::log_level::error, "a connection's work failed; that connection ended", fields);
  } catch (...) {
    // Out of memory while telling it: the connection still ends; nothing more to do.
  }
}

void run_guarded(asio::io_context& io, const std::function<void(std::exception_ptr)>& failed) {
  for (;;) {
    try {
      io.run();
      return;
    } catch (...) {
      failed(std::current_exception());
    }
  }
}

void run_guarded(services& svc, asio::io_context& io) {
  run_guarded(io, [&svc](std::exception_ptr e) { count_session_failure(svc, "any", "event_loop", e); });
}

}  // namespace gistproxy::proxy
