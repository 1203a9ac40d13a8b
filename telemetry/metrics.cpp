#include "telemetry/metrics.hpp"

#include <algorithm>
#include <atomic>
#include <cmath>
#include <cstdio>

#include "telemetry/series_cache.hpp"

namespace gistproxy::telemetry {
namespace {

void append_number(std::string& out, double v) {
  if (std::isinf(v)) {
    out += v > 0 ? "+Inf" : "-Inf";
    return;
  }
  char buf[32];
  if (v == std::floor(v) && std::fabs(v) < 1e15)
    std::snprintf(buf, sizeof buf, "%.0f", v);
  else
    std::snprintf(buf, sizeof buf, "%.9g", v);
  out += buf;
}

void append_escaped(std::string& out, std::string_view v) {
  for (char c : v) {
    if (c == '\\') out += "\\\\";
    else if (c == '"') out += "\\\"";
    else if (c == '\n') out += "\\n";
    else out += c;
  }
}

// A series' key: its label values, each ended by a unit separator.
void append_series_key(std::string& key, std::initializer_list<std::string_view> values) {
  for (auto v : values) {
    key.append(v);
    key.push_back('\x1f');
  }
}

const char* type_name(metric_type t) {
  switch (t) {
    case metric_type::counter: return "counter";
    case metric_type::gauge: return "gauge";
    case metric_type::histogram: return "histogram";
  }
  return "untyped";
}

class callback_gauge final : public family_base {
 public:
  callback_gauge(std::string name, std::string help, std::function<double()> read)
      : family_base(std::move(name), std::move(help), metric_type::gauge, {}), read_(std::move(read)) {}
  void render(std::string& out) const override {
    render_header(out);
    out += name_;
    out += ' ';
    append_number(out, read_());
    out += '\n';
  }

 private:
  std::function<double()> read_;
};

}  // namespace

std::uint64_t next_family_id() {
  static std::atomic<std::uint64_t> next{1};
  return next.fetch_add(1, std::memory_order_relaxed);
}

histogram::histogram(const std::vector<double>& upper_bounds)
    : bounds_(upper_bounds), buckets_(new std::atomic<std::uint64_t>[upper_bounds.size()]) {
  for (std::size_t i = 0; i < bounds_.size(); ++i) buckets_[i] = 0;
}

void histogram::observe(double v) {
  auto it = std::lower_bound(bounds_.begin(), bounds_.end(), v);
  if (it != bounds_.end()) buckets_[std::size_t(it - bounds_.begin())].fetch_add(1, std::memory_order_relaxed);
  count_.fetch_add(1, std::memory_order_relaxed);
  sum_.fetch_add(v, std::memory_order_relaxed);
}

std::uint64_t histogram::cumulative(std::size_t i) const {
  std::uint64_t total = 0;
  for (std::size_t j = 0; j <= i && j < bounds_.size(); ++j) total += buckets_[j].load(std::memory_order_relaxed);
  return total;
}

void family_base::render_header(std::string& out) const {
  out += "# HELP " + name_ + ' ' + help_ + '\n';
  out += "# TYPE " + name_ + ' ' + type_name(type_) + '\n';
}

std::string family_base::label_text(const std::vector<std::string>& values, std::string_view extra) const {
  if (label_names_.empty() && extra.empty()) return {};
  std::string out = "{";
  for (std::size_t i = 0; i < label_names_.size(); ++i) {
    if (i) out += ',';
    out += label_names_[i] + "=\"";
    append_escaped(out, i < values.size() ? values[i] : std::string());
    out += '"';
  }
  if (!extra.empty()) {
    if (!label_names_.empty()) out += ',';
    out += extra;
  }
  out += '}';
  return out;
}

template <class M>
M& family<M>::labels(std::initializer_list<std::string_view> values) {
  // Series are never removed, so a remembered pointer stays valid for as long
  // as its family lives; entries carry the family's id, never reused.
  thread_local series_cache seen;
  const auto hash = series_cache::hash_of(id_, values);
  if (auto* hit = seen.find(id_, values, hash)) return *static_cast<M*>(hit);
  std::string key;
  append_series_key(key, values);
  M& series = find_or_create(values, key);
  seen.insert(id_, values, hash, &series);
  return series;
}

template <class M>
M& family<M>::find_or_create(std::initializer_list<std::string_view> values, std::string_view series_key) {
  std::string key(series_key);
  std::lock_guard lock(mutex_);
  auto it = series_.find(key);
  if (it != series_.end()) return *it->second.second;
  std::vector<std::string> owned(values.begin(), values.end());
  std::unique_ptr<M> metric;
  if constexpr (std::is_same_v<M, histogram>)
    metric = std::make_unique<M>(bounds_);
  else
    metric = std::make_unique<M>();
  auto& ref = *metric;
  series_.emplace(std::move(key), std::make_pair(std::move(owned), std::move(metric)));
  return ref;
}

template <class M>
void family<M>::render(std::string& out) const {
  render_header(out);
  std::lock_guard lock(mutex_);
  std::vector<const std::pair<std::vector<std::string>, std::unique_ptr<M>>*> rows;
  for (const auto& [key, row] : series_) rows.push_back(&row);
  std::sort(rows.begin(), rows.end(), [](auto* a, auto* b) { return a->first < b->first; });
  for (const auto* row : rows) {
    const auto& m = *row->second;
    if constexpr (std::is_same_v<M, histogram>) {
      for (std::size_t i = 0; i < m.bounds().size(); ++i) {
        std::string le = "le=\"";
        append_number(le, m.bounds()[i]);
        le += '"';
        out += name_ + "_bucket" + label_text(row->first, le) + ' ';
        append_number(out, double(m.cumulative(i)));
        out += '\n';
      }
      out += name_ + "_bucket" + label_text(row->first, "le=\"+Inf\"") + ' ';
      append_number(out, double(m.count()));
      out += '\n' + name_ + "_sum" + label_text(row->first) + ' ';
      append_number(out, m.sum());
      out += '\n' + name_ + "_count" + label_text(row->first) + ' ';
      append_number(out, double(m.count()));
      out += '\n';
    } else {
      out += name_ + label_text(row->first) + ' ';
      append_number(out, double(m.value()));
      out += '\n';
    }
  }
}

template class family<counter>;
template class family<gauge>;
template class family<amount_counter>;
template class family<histogram>;

family<counter>& registry::add_counter(std::string name, std::string help, std::vector<std::string> labels) {
  auto f = std::make_unique<family<counter>>(std::move(name), std::move(help), metric_type::counter, std::move(labels));
  auto& ref = *f;
  families_.push_back(std::move(f));
  return ref;
}

family<amount_counter>& registry::add_amount_counter(std::string name, std::string help,
                                                     std::vector<std::string> labels) {
  auto f = std::make_unique<family<amount_counter>>(std::move(name), std::move(help), metric_type::counter,
                                                    std::move(labels));
  auto& ref = *f;
  families_.push_back(std::move(f));
  return ref;
}

family<gauge>& registry::add_gauge(std::string name, std::string help, std::vector<std::string> labels) {
  auto f = std::make_unique<family<gauge>>(std::move(name), std::move(help), metric_type::gauge, std::move(labels));
  auto& ref = *f;
  families_.push_back(std::move(f));
  return ref;
}

family<histogram>& registry::add_histogram(std::string name, std::string help, std::vector<std::string> labels,
                                           std::vector<double> bounds) {
  std::sort(bounds.begin(), bounds.end());
  auto f = std::make_unique<family<histogram>>(std::move(name), std::move(help), metric_type::histogram,
                                               std::move(labels), std::move(bounds));
  auto& ref = *f;
  families_.push_back(std::move(f));
  return ref;
}

void registry::add_callback_gauge(std::string name, std::string help, std::function<double()> read) {
  families_.push_back(std::make_unique<callback_gauge>(std::move(name), std::move(help), std::move(read)));
}

std::string registry::render() const {
  std::string out;
  out.reserve(8192);
  for (const auto& f : families_) f->render(out);
  return out;
}

bool registry::has(std::string_view name) const {
  return std::any_of(families_.begin(), families_.end(), [&](const auto& f) { return f->name() == name; });
}

const std::vector<double>& latency_buckets() {
  static const std::vector<double> b{0.0001, 0.00025, 0.0005, 0.001, 0.0025, 0.005, 0.01, 0.025, 0.05,
                                     0.1,    0.25,    0.5,    1,     2.5,    5,     10,   30,    60};
  return b;
}

}  // namespace gistproxy::telemetry
