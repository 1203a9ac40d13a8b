// The operators' view proven against real data: Debian's Prometheus scrapes
// a live gistproxy while the planted workload runs; every PromQL expression of
// the dashboard and the alert rules must return series, the integrity alert
// must fire, every metric they name must be in /metrics, and the deployment
// files (promtool, docker-compose, Dockerfile) must be valid.
#include <netinet/in.h>
#include <sys/socket.h>

#include <catch2/catch.hpp>
#include <regex>

#include "tests/integration/operators_workload.hpp"
#include "tests/support/child_process.hpp"

using namespace gistproxy::testing;
namespace fs = std::filesystem;

namespace {

const fs::path source_dir = GISTPROXY_SOURCE_DIR;

std::string read_text(const fs::path& p) {
  std::ifstream in(p, std::ios::binary);
  return {std::istreambuf_iterator<char>(in), {}};
}

std::uint16_t free_port() {
  int fd = ::socket(AF_INET, SOCK_STREAM, 0);
  sockaddr_in a{};
  a.sin_family = AF_INET;
  a.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
  socklen_t len = sizeof a;
  ::bind(fd, reinterpret_cast<sockaddr*>(&a), sizeof a);
  ::getsockname(fd, reinterpret_cast<sockaddr*>(&a), &len);
  ::close(fd);
  return ntohs(a.sin_port);
}

std::string url_encode(const std::string& s) {
  std::string out;
  char b[4];
  for (unsigned char c : s) {
    if (std::isalnum(c) || c == '-' || c == '_' || c == '.' || c == '~') out += char(c);
    else std::snprintf(b, sizeof b, "%%%02X", c), out += b;
  }
  return out;
}

// Every "expr" in the dashboard (panel targets, annotations), with the panel title.
void collect_exprs(const nlohmann::json& j, const std::string& where, std::vector<std::pair<std::string, std::string>>& out) {
  if (j.is_object()) {
    std::string here = j.contains("title") && j["title"].is_string() ? j["title"].get<std::string>()
                       : j.contains("name") && j["name"].is_string() ? j["name"].get<std::string>() : where;
    for (auto& [k, v] : j.items()) {
      if (k == "expr" && v.is_string()) out.emplace_back(here, v.get<std::string>());
      else collect_exprs(v, here, out);
    }
  } else if (j.is_array()) {
    for (auto& v : j) collect_exprs(v, where, out);
  }
}

// Grafana's variables, as a query over the whole test run would see them.
std::string expand_grafana_variables(std::string expr) {
  for (auto [var, value] : {std::pair{"$__rate_interval", "1m"}, {"$__range", "5m"}, {"$__interval", "15s"},
                            {"$instance", ".*"}}) {
    for (auto pos = expr.find(var); pos != std::string::npos; pos = expr.find(var, pos))
      expr.replace(pos, std::strlen(var), value);
  }
  return expr;
}

std::set<std::string> metric_names(const std::string& expr) {
  static const std::regex name(R"(\bgistproxy_[a-z_]+)");
  std::set<std::string> out;
  for (std::sregex_iterator it(expr.begin(), expr.end(), name), end; it != end; ++it) out.insert(it->str());
  return out;
}

struct prometheus_server {
  fs::path dir = temp_path("prometheus");
  std::uint16_t port = 0;
  std::unique_ptr<child_process> process;

  // free_port() only names a port that was free a moment ago: another
  // process (a parallel test's server) can take it before Prometheus binds
  // it, and Prometheus then exits. Started again on another port until it
  // answers as Prometheus (bounded), so no query ever goes to a stranger.
  explicit prometheus_server(std::uint16_t target_port) {
    fs::create_directories(dir / "data");
    std::ofstream(dir / "prometheus.yml")
        << "global:\n  scrape_interval: 1s\n  evaluation_interval: 1s\n"
        << "rule_files:\n  - " << (source_dir / "dashboards" / "alerts.yml").string() << "\n"
        << "scrape_configs:\n  - job_name: gistproxy\n    static_configs:\n      - targets: ['127.0.0.1:"
        << target_port << "']\n";
    for (int attempt = 0; attempt < 5 && !ready(); ++attempt) start();
  }
  void start() {
    port = free_port();
    process = std::make_unique<child_process>(std::vector<std::string>{
        "prometheus", "--config.file=" + (dir / "prometheus.yml").string(),
        "--storage.tsdb.path=" + (dir / "data").string(), "--web.listen-address=127.0.0.1:" + std::to_string(port),
        "--log.level=warn"});
    const auto deadline = std::chrono::steady_clock::now() + std::chrono::seconds(30);
    while (process->running() && std::chrono::steady_clock::now() < deadline) {
      auto r = http_request(port, "GET", "/-/ready", {}, {}, std::chrono::seconds(2));
      if (r.status == 200 && r.body.find("Prometheus") != std::string::npos) return;
      std::this_thread::sleep_for(std::chrono::milliseconds(100));
    }
  }
  bool ready() const { return process && process->running() && port != 0; }
  ~prometheus_server() {
    process.reset();
    std::error_code ec;
    fs::remove_all(dir, ec);
  }
  nlohmann::json api(const std::string& target) {
    if (!process->running()) return nullptr;  // never ask whoever holds its port now
    auto r = http_request(port, "GET", target, {}, {}, std::chrono::seconds(10));
    if (r.status == 0) return nullptr;
    return nlohmann::json::parse(r.body, nullptr, false);
  }
  nlohmann::json query(const std::string& expr) { return api("/api/v1/query?query=" + url_encode(expr)); }
  // Polls until `ok` holds for the response (bounded).
  template <class Pred>
  nlohmann::json poll(const std::string& target, Pred ok, std::chrono::seconds timeout = std::chrono::seconds(45)) {
    auto deadline = std::chrono::steady_clock::now() + timeout;
    nlohmann::json r;
    do {
      r = api(target);
      if (!r.is_discarded() && !r.is_null() && ok(r)) return r;
      std::this_thread::sleep_for(std::chrono::milliseconds(250));
    } while (std::chrono::steady_clock::now() < deadline && process->running());
    return r;
  }
};

bool has_series(const nlohmann::json& r) {
  return r.is_object() && r.value("status", "") == "success" && !r["data"]["result"].empty();
}

}  // namespace

TEST_CASE("promtool accepts the alert rules and both Prometheus configs") {
  auto rules = run_command({"promtool", "check", "rules", (source_dir / "dashboards/alerts.yml").string()});
  INFO(rules.output);
  CHECK(rules.exit_code == 0);
  auto config = run_command({"promtool", "check", "config", (source_dir / "docker/prometheus.yml").string()});
  INFO(config.output);
  CHECK(config.exit_code == 0);
}

TEST_CASE("the compose stack validates and the image builds with scripts/install-deps") {
  // No container engine here: docker-compose parses, interpolates and validates the file only.
  auto config = run_command({"docker-compose", "-f", (source_dir / "docker/compose.yaml").string(), "config", "-q"});
  INFO(config.output);
  CHECK(config.exit_code == 0);
  auto services = run_command({"docker-compose", "-f", (source_dir / "docker/compose.yaml").string(), "config", "--services"});
  for (auto s : {"gistproxy", "tempo", "prometheus", "grafana"}) CHECK(services.output.find(s) != std::string::npos);

  // The fleet: two replicas on one MinIO bucket behind nginx; the bucket's
  // password must be given (no default secret).
  const auto fleet = (source_dir / "docker/compose.fleet.yaml").string();
  auto unset = run_command({"env", "-u", "MINIO_ROOT_PASSWORD", "docker-compose", "-f", fleet, "config", "-q"});
  CHECK(unset.exit_code != 0);
  auto fleet_config = run_command({"env", "MINIO_ROOT_PASSWORD=x", "docker-compose", "-f", fleet, "config"});
  INFO(fleet_config.output);
  CHECK(fleet_config.exit_code == 0);
  for (auto s : {"gistproxy-a:", "gistproxy-b:", "lb:", "minio:", "minio-init:", "--store=s3://gistproxy/blobs",
                 "--s3-endpoint=http://minio:9000", "--store-cache=", "mc ilm rule add --expire-days 7"})
    CHECK(fleet_config.output.find(s) != std::string::npos);

  auto dockerfile = read_text(source_dir / "docker/Dockerfile");
  CHECK(dockerfile.find("FROM debian:12 AS build") != std::string::npos);
  CHECK(dockerfile.find("RUN scripts/install-deps --build") != std::string::npos);
  CHECK(dockerfile.find("install-deps --runtime") != std::string::npos);
  // Packages come from the one list in scripts/install-deps, never a second one.
  CHECK(dockerfile.find("apt-get install") == std::string::npos);
  CHECK(std::regex_search(dockerfile, std::regex(R"(\nUSER gistproxy\n)")));
  CHECK(std::regex_search(dockerfile, std::regex(R"(HEALTHCHECK[^\n]*\n[^\n]*/healthz)")));
  // The provisioned datasources are the uids the dashboard uses.
  auto datasources = read_text(source_dir / "dashboards/provisioning/datasources/gistproxy.yaml");
  CHECK(datasources.find("uid: prometheus") != std::string::npos);
  CHECK(datasources.find("uid: tempo") != std::string::npos);
}

TEST_CASE("every dashboard and alert query returns series from a real Prometheus scraping a live gistproxy") {
  REQUIRE_FALSE(find_in_path("prometheus").empty());
  auto dashboard = nlohmann::json::parse(read_text(source_dir / "dashboards/gistproxy-overview.json"));
  std::vector<std::pair<std::string, std::string>> exprs;
  collect_exprs(dashboard["panels"], "panels", exprs);
  collect_exprs(dashboard["annotations"], "annotations", exprs);
  REQUIRE(exprs.size() >= 20);

  operators_workload w;
  prometheus_server prom(w.proxy.admin_port());
  // Let Prometheus see the zero-initialised series before anything happens, as in production.
  auto up = prom.poll("/api/v1/query?query=up", [](auto& r) {
    return has_series(r) && r["data"]["result"][0]["value"][1] == "1";
  });
  INFO(prom.process->output());
  REQUIRE(has_series(up));
  REQUIRE(w.run("1").empty());
  // Two scrapes after round 1: every series it created now exists before
  // round 2 moves them (rates need both). Counted, not slept for.
  const std::string scrapes = "/api/v1/query?query=count_over_time%28up%5B1h%5D%29";
  auto scrape_count = [](const nlohmann::json& r) {
    return has_series(r) ? std::stoi(r["data"]["result"][0]["value"][1].get<std::string>()) : 0;
  };
  const int after_round_1 = scrape_count(prom.poll(scrapes, [](auto& r) { return has_series(r); }));
  REQUIRE(after_round_1 > 0);
  auto later = prom.poll(scrapes, [&](auto& r) { return scrape_count(r) >= after_round_1 + 2; });
  REQUIRE(scrape_count(later) >= after_round_1 + 2);
  REQUIRE(w.run("2").empty());

  // The alert rules as Prometheus loaded them.
  auto rules = prom.poll("/api/v1/rules", [](auto& r) { return r.value("status", "") == "success"; });
  std::vector<std::pair<std::string, std::string>> alerts;
  for (auto& g : rules["data"]["groups"])
    for (auto& rule : g["rules"]) alerts.emplace_back(rule["name"], rule["query"]);
  REQUIRE(alerts.size() == 5);

  // Every metric named anywhere is exported by the live binary.
  auto metrics = http_request(w.proxy.admin_port(), "GET", "/metrics").body;
  std::set<std::string> named;
  for (auto& [_, e] : exprs) named.merge(metric_names(e));
  for (auto& [_, e] : alerts) named.merge(metric_names(e));
  named.insert("gistproxy_build_info");  // the instance variable's query
  for (const auto& n : named) {
    std::string base = std::regex_replace(n, std::regex("_(bucket|sum|count)$"), "");
    bool exported = metrics.find("# TYPE " + n + " ") != std::string::npos ||
                    metrics.find("# TYPE " + base + " histogram") != std::string::npos;
    INFO("metric " << n);
    CHECK(exported);
  }

  // Every expression returns at least one series (bounded wait: rates need two scrapes).
  auto check_expr = [&](const std::string& where, const std::string& raw) {
    auto expr = expand_grafana_variables(raw);
    auto target = "/api/v1/query?query=" + url_encode(expr);
    auto r = prom.poll(target, [](auto& x) { return has_series(x) || x.value("status", "") == "error"; });
    INFO(where << ": " << expr << "\n → " << r.dump());
    CHECK(has_series(r));
  };
  for (auto& [where, e] : exprs) check_expr("panel " + where, e);
  for (auto& [name, e] : alerts) check_expr("alert " + name, e);
  // The side-by-side panels have both groups to compare (the workload runs a
  // control conversation), and the prompt-cache row has its split.
  for (const char* series : {R"(gistproxy_requests_total{group="control"})", R"(gistproxy_input_tokens_total{group="control"})",
                             R"(gistproxy_requests_total{group="treated"})", R"(gistproxy_prompt_cache_tokens_total{kind="read"})",
                             R"(gistproxy_cost_usd_total{group="control"})", R"(gistproxy_cost_usd_total{group="treated"})",
                             R"(gistproxy_saved_usd_total)"}) {
    auto r = prom.poll("/api/v1/query?query=" + url_encode(std::string("sum(") + series + ") > 0"),
                       [](auto& x) { return has_series(x) || x.value("status", "") == "error"; });
    INFO(series << " → " << r.dump());
    CHECK(has_series(r));
  }
  auto instances = prom.api("/api/v1/label/instance/values?match[]=gistproxy_build_info");
  CHECK(instances["data"].dump().find("127.0.0.1:" + std::to_string(w.proxy.admin_port())) != std::string::npos);

  // The integrity alert fires; the others (which wait `for:` minutes) are at least pending.
  auto firing = prom.poll("/api/v1/alerts", [](auto& r) {
    for (auto& a : r["data"]["alerts"])
      if (a["labels"]["alertname"] == "GistproxyIntegrityFailure" && a["state"] == "firing") return true;
    return false;
  });
  INFO(firing.dump());
  std::set<std::string> active;
  for (auto& a : firing["data"]["alerts"]) active.insert(a["labels"]["alertname"].get<std::string>() + ":" + a["state"].get<std::string>());
  CHECK(active.count("GistproxyIntegrityFailure:firing"));
  auto all = prom.poll("/api/v1/alerts", [](auto& r) { return r["data"]["alerts"].size() >= 5; });
  std::set<std::string> names;
  for (auto& a : all["data"]["alerts"]) names.insert(a["labels"]["alertname"].get<std::string>());
  CHECK(names == std::set<std::string>{"GistproxyIntegrityFailure", "GistproxyPagingChurnHigh",
                                       "GistproxyUpstreamErrorRatioHigh", "GistproxyExporterDroppingSpans",
                                       "GistproxyPrefixBrokenByProxy"});
}
