// Starts and ends spans. Time and ids are injected so tests are deterministic;
// finished spans go to a sink (the export pipeline) that never blocks.
#pragma once

#include <cstdint>
#include <string>

#include "telemetry/ids.hpp"
#include "telemetry/span.hpp"

namespace gistproxy::telemetry {

class clock {
 public:
  virtual ~clock() = default;
  virtual std::uint64_t now_unix_nano() = 0;
};

class system_clock final : public clock {
 public:
  std::uint64_t now_unix_nano() override;
};

class manual_clock final : public clock {
 public:
  explicit manual_clock(std::uint64_t start = 1'700'000'000'000'000'000ULL) : now_(start) {}
  std::uint64_t now_unix_nano() override { return now_; }
  void advance(std::uint64_t nanos) { now_ += nanos; }

 private:
  std::uint64_t now_;
};

class span_sink {
 public:
  virtual ~span_sink() = default;
  // Must not block: a full queue drops the span and counts it.
  virtual void submit(span&& s) = 0;
};

class tracer {
 public:
  tracer(clock& c, id_generator& ids, span_sink* sink) : clock_(c), ids_(ids), sink_(sink) {}

  span start(std::string name, span_kind kind, const trace_id& trace, const span_id& parent);
  // Stamps the end time (unless already set) and hands the span to the sink.
  void end(span& s);
  std::uint64_t now() { return clock_.now_unix_nano(); }
  trace_id new_trace_id() { return ids_.new_trace_id(); }

 private:
  clock& clock_;
  id_generator& ids_;
  span_sink* sink_;
};

}  // namespace gistproxy::telemetry
