// The admin listener's live view, owned by serve: requests hand one event
// each to a bounded queue (exchange_finish.cpp); the admin thread drains it
// into the conversation ledger and samples the metric registry into the
// per-minute series (tick), and renders the JSON the page polls. The totals
// are read from the registry, so the page's numbers are /metrics' numbers.
// Every answer is serialised without throwing (invalid UTF-8 cannot reach the
// ledger, and would become U+FFFD if it did).
#pragma once

#include <chrono>
#include <functional>
#include <mutex>
#include <optional>
#include <string>

#include "telemetry/event_queue.hpp"
#include "telemetry/live_view.hpp"
#include "telemetry/metric_catalogue.hpp"
#include "telemetry/tenant_ledger.hpp"

namespace gistproxy::proxy {

class live_feed {
 public:
  // `unix_ms`: the clock (injected for tests).
  live_feed(telemetry::metric_catalogue& metrics, std::function<std::uint64_t()> unix_ms,
            telemetry::live::limits limits = {}, std::size_t queue_capacity = 1024);

  // How often the admin thread drains the queue. With the default capacity,
  // up to 4096 events a second reach the ledger; a batch is a quarter of a
  // second's, so the two batches alive at a tick (the one drained, the one
  // filling) hold 2 x 1024 events (about 720 KiB) at most, not 2 x 4096.
  static constexpr std::chrono::milliseconds tick_period{250};

  // Hot path: one event per finished request; never blocks on the reader.
  void submit(telemetry::live::turn_event&& e) { queue_.push(std::move(e)); }
  std::size_t details_per_turn() const { return limits_.details_per_turn; }
  // The bounds the hot path cuts outside text to (keep_text) before queueing
  // it: the queue never holds a client's megabyte tool name.
  const telemetry::live::limits& limits() const { return limits_; }

  // Admin thread: drains the queue and samples the totals.
  void tick();
  std::string summary_json();
  std::string conversations_json();
  std::string tenants_json();
  std::optional<std::string> conversation_json(const std::string& trace_id);

 private:
  telemetry::live::totals read_totals() const;

  telemetry::metric_catalogue& metrics_;
  std::function<std::uint64_t()> unix_ms_;
  const std::uint64_t started_ms_;
  telemetry::live::limits limits_;
  telemetry::event_queue<telemetry::live::turn_event> queue_;
  std::mutex mutex_;  // the ledger and series: held while rendering, never across I/O
  telemetry::live::conversation_ledger ledger_;
  telemetry::live::tenant_ledger tenants_;
  telemetry::live::minute_series series_;
};

}  // namespace gistproxy::proxy
