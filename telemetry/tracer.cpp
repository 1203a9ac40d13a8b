#include "telemetry/tracer.hpp"

#include <chrono>

namespace gistproxy::telemetry {

std::uint64_t system_clock::now_unix_nano() {
  return std::uint64_t(std::chrono::duration_cast<std::chrono::nanoseconds>(
                           std::chrono::system_clock::now().time_since_epoch())
                           .count());
}

span tracer::start(std::string name, span_kind kind, const trace_id& trace, const span_id& parent) {
  span s;
  s.trace = trace;
  s.id = ids_.new_span_id();
  s.parent = parent;
  s.name = std::move(name);
  s.kind = kind;
  s.recording = sink_ != nullptr;
  if (s.recording) s.start_unix_nano = clock_.now_unix_nano();  // times are only ever exported
  return s;
}

void tracer::end(span& s) {
  if (!sink_) return;
  if (s.end_unix_nano == 0) s.end_unix_nano = clock_.now_unix_nano();
  sink_->submit(std::move(s));
}

}  // namespace gistproxy::telemetry
