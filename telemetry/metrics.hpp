// A small Prometheus metric registry: counters, gauges and histograms with
// labels, rendered in the text exposition format (version 0.0.4).
// Debian packages no prometheus-cpp, so this is hand-written and kept tiny.
#pragma once

#include <atomic>
#include <cmath>
#include <cstdint>
#include <cstdint>
#include <functional>
#include <initializer_list>
#include <memory>
#include <mutex>
#include <string>
#include <string_view>
#include <unordered_map>
#include <vector>

namespace gistproxy::telemetry {

class counter {
 public:
  // Saturates at the largest value instead of wrapping to a small one (a
  // scrape would read a wrap as a counter reset).
  void inc(std::uint64_t n = 1) {
    auto cur = value_.load(std::memory_order_relaxed);
    while (!value_.compare_exchange_weak(cur, cur > UINT64_MAX - n ? UINT64_MAX : cur + n, std::memory_order_relaxed)) {
    }
  }
  std::uint64_t value() const { return value_.load(std::memory_order_relaxed); }

 private:
  std::atomic<std::uint64_t> value_{0};
};

// A counter of an amount that is not a count (US dollars): it only grows.
class amount_counter {
 public:
  // Only finite, positive amounts, and never to +Inf (which no scrape can use).
  void add(double v) {
    if (!(v > 0) || !std::isfinite(v)) return;
    auto cur = value_.load(std::memory_order_relaxed);
    while (std::isfinite(cur + v) && !value_.compare_exchange_weak(cur, cur + v, std::memory_order_relaxed)) {
    }
  }
  double value() const { return value_.load(std::memory_order_relaxed); }

 private:
  std::atomic<double> value_{0};
};

class gauge {
 public:
  void set(double v) { value_.store(v, std::memory_order_relaxed); }
  void add(double v) { value_.fetch_add(v, std::memory_order_relaxed); }
  double value() const { return value_.load(std::memory_order_relaxed); }

 private:
  std::atomic<double> value_{0};
};

class histogram {
 public:
  explicit histogram(const std::vector<double>& upper_bounds);
  void observe(double v);
  std::uint64_t count() const { return count_.load(std::memory_order_relaxed); }
  double sum() const { return sum_.load(std::memory_order_relaxed); }
  // Cumulative count of observations <= bounds()[i]; the +Inf bucket is count().
  std::uint64_t cumulative(std::size_t i) const;
  const std::vector<double>& bounds() const { return bounds_; }

 private:
  const std::vector<double>& bounds_;
  std::unique_ptr<std::atomic<std::uint64_t>[]> buckets_;
  std::atomic<std::uint64_t> count_{0};
  std::atomic<double> sum_{0};
};

enum class metric_type { counter, gauge, histogram };

std::uint64_t next_family_id();

class family_base {
 public:
  family_base(std::string name, std::string help, metric_type type, std::vector<std::string> labels)
      : name_(std::move(name)), help_(std::move(help)), type_(type), label_names_(std::move(labels)) {}
  virtual ~family_base() = default;
  const std::string& name() const { return name_; }
  metric_type type() const { return type_; }
  virtual void render(std::string& out) const = 0;

 protected:
  void render_header(std::string& out) const;
  std::string label_text(const std::vector<std::string>& values, std::string_view extra = {}) const;

  std::string name_, help_;
  metric_type type_;
  std::vector<std::string> label_names_;
};

// One metric name; one series per distinct label-value tuple, created on first use.
template <class M>
class family final : public family_base {
 public:
  family(std::string name, std::string help, metric_type type, std::vector<std::string> labels,
         std::vector<double> bounds = {})
      : family_base(std::move(name), std::move(help), type, std::move(labels)), bounds_(std::move(bounds)) {}

  // The series for these label values. Each thread remembers the series it
  // has looked up, so a request's dozen metric updates take no lock (the
  // family's mutex is shared by every I/O thread) once a series exists.
  M& labels(std::initializer_list<std::string_view> values);
  M& get() { return labels({}); }
  // Never reused by another family (unlike an address): keys callers' memos.
  std::uint64_t id() const { return id_; }
  void render(std::string& out) const override;
  // Each series' label values (in the family's label order) and metric, under
  // the family's lock: for readers off the hot path (the admin live view).
  template <class F>
  void for_each(F&& f) const {
    std::lock_guard lock(mutex_);
    for (const auto& [key, series] : series_) f(series.first, *series.second);
  }

 private:
  M& find_or_create(std::initializer_list<std::string_view> values, std::string_view series_key);
  // Names this family in the per-thread caches; never reused, unlike an address.
  const std::uint64_t id_ = next_family_id();
  std::vector<double> bounds_;
  mutable std::mutex mutex_;
  std::unordered_map<std::string, std::pair<std::vector<std::string>, std::unique_ptr<M>>> series_;
};

class registry {
 public:
  family<counter>& add_counter(std::string name, std::string help, std::vector<std::string> labels = {});
  family<gauge>& add_gauge(std::string name, std::string help, std::vector<std::string> labels = {});
  family<amount_counter>& add_amount_counter(std::string name, std::string help, std::vector<std::string> labels = {});
  family<histogram>& add_histogram(std::string name, std::string help, std::vector<std::string> labels,
                                   std::vector<double> bounds);
  // A gauge computed at scrape time (e.g. store size).
  void add_callback_gauge(std::string name, std::string help, std::function<double()> read);
  std::string render() const;
  bool has(std::string_view name) const;

 private:
  std::vector<std::unique_ptr<family_base>> families_;
};

// Bucket bounds for latencies: 100 µs .. 60 s.
const std::vector<double>& latency_buckets();

}  // namespace gistproxy::telemetry
