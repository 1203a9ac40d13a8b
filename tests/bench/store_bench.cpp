// gistproxy-store-bench: the latency a request waits on its blob store, per
// operation, through the same code serve uses (open_store): first-sight
// offloads (hash known, compress, write; S3: HEAD + PUT), re-offloads of known
// bytes, page-ins by a 16-hex handle (S3: a prefix list + GET) and by the full
// hash. scripts/bench-store runs it against the filesystem store and a
// loopback S3 server and prints the ratios.
//   gistproxy-store-bench --store DIR|s3://B/P [--s3-endpoint URL] [--store-cache DIR] [--n N] [--bytes B]
//                         [--read-only 1]   (page-ins only, as another replica that never saw the outputs)
#include <algorithm>
#include <chrono>
#include <cstdio>
#include <iostream>
#include <nlohmann/json.hpp>
#include <string>
#include <vector>

#include "proxy/commands/wiring.hpp"
#include "rewrite/blob/digest.hpp"

using namespace gistproxy;
using clock_type = std::chrono::steady_clock;

namespace {

std::string output_of(int i, std::size_t bytes) {  // a log-like tool output, distinct per i
  std::string s;
  for (int line = 0; s.size() < bytes; ++line)
    s += "run " + std::to_string(i) + " line " + std::to_string(line) + ": status=ok latency_ms=" +
         std::to_string((line * 37 + i) % 997) + " path=/srv/app/module_" + std::to_string(line % 50) + ".py\n";
  return s;
}

nlohmann::json summary(std::vector<double> us) {
  std::sort(us.begin(), us.end());
  auto at = [&](double q) { return us[std::min(us.size() - 1, std::size_t(q * double(us.size())))]; };
  return {{"n", us.size()}, {"p50_us", at(0.5)}, {"p99_us", at(0.99)}};
}

template <class F>
double timed_us(F&& f) {
  auto t0 = clock_type::now();
  f();
  return std::chrono::duration<double, std::micro>(clock_type::now() - t0).count();
}

}  // namespace

int main(int argc, char** argv) {
  proxy::config cfg;
  int n = 200;
  std::size_t bytes = 64 * 1024;
  bool read_only = false;
  for (int i = 1; i + 1 < argc; i += 2) {
    std::string a = argv[i], v = argv[i + 1];
    if (a == "--store") cfg.store = v;
    else if (a == "--s3-endpoint") cfg.s3_endpoint = v;
    else if (a == "--store-cache") cfg.store_cache = v;
    else if (a == "--n") n = std::stoi(v);
    else if (a == "--bytes") bytes = std::stoul(v);
    else if (a == "--read-only") read_only = v == "1";
    else return std::cerr << "unknown option " << a << "\n", 2;
  }
  auto opened = proxy::open_store(cfg, nullptr);
  auto& store = *opened.blobs;
  std::vector<std::string> outputs;
  for (int i = 0; i < n; ++i) outputs.push_back(output_of(i, bytes));
  std::vector<double> first, again, by_prefix, by_hash;
  for (const auto& o : read_only ? std::vector<std::string>{} : outputs) {
    rewrite::blob_meta meta{rewrite::sha256_hex(o), o.size(), "log", 0, "bench", "bash"};
    first.push_back(timed_us([&] {
      if (store.put(o, meta).error != rewrite::blob_error::none) std::exit(1);
    }));
  }
  for (const auto& o : read_only ? std::vector<std::string>{} : outputs) {
    rewrite::blob_meta meta{rewrite::sha256_hex(o), o.size(), "log", 0, "bench", "bash"};
    again.push_back(timed_us([&] { store.put(o, meta); }));
  }
  for (const auto& o : outputs) {
    auto hash = rewrite::sha256_hex(o);
    by_prefix.push_back(timed_us([&] {
      if (store.get("bench", hash.substr(0, 16)).bytes != o) std::exit(1);
    }));
    by_hash.push_back(timed_us([&] { store.get("bench", hash); }));
  }
  nlohmann::json out = {{"store", cfg.store},
                       {"cache", !cfg.store_cache.empty()},
                       {"bytes", bytes},
                       {"page_in_16hex", summary(by_prefix)},
                       {"page_in_full_hash", summary(by_hash)}};
  if (!read_only) {
    out["first_sight_offload"] = summary(first);
    out["re_offload"] = summary(again);
  }
  std::cout << out.dump() << "\n";
  return 0;
}
