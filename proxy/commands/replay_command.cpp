#include "proxy/commands/replay_command.hpp"
#include "proxy/commands/trace_inputs.hpp"
#include "proxy/commands/replay_figures.hpp"

#include <chrono>
#include <cstdio>
#include <filesystem>
#include <fstream>
#include <iostream>
#include <sstream>
#include <unistd.h>

#include "proxy/exchange/compaction_span.hpp"
#include "proxy/commands/wiring.hpp"
#include "proxy/store/fs_blob_store.hpp"
#include "rewrite/offload/engine.hpp"
#include "rewrite/replay/replay_run.hpp"
#include "telemetry/metric_catalogue.hpp"
#include "telemetry/number_format.hpp"
#include "telemetry/trace_context.hpp"
#include "telemetry/tracer.hpp"

extern char** environ;

namespace gistproxy::proxy {
namespace {

namespace fs = std::filesystem;
using telemetry::thousands;

constexpr const char* help =
    "usage: gistproxy replay [--json] [--format NAME] [--sweep-threshold A,B,...] [offload flags] FILE|DIR...\n\n"
    "Runs every LLM request of recorded traces through the same rewrite pipeline as `serve`,\n"
    "without any network, and reports per trace and in total: turns, input tokens\n"
    "before and after, share saved, offloads, outputs / offloaded / tokens saved per tool,\n"
    "distinct blobs and dedupe ratio, stored bytes, and prefix stability (share of consecutive\n"
    "turns of a conversation that forward the previous turn's tools, system prompt and messages\n"
    "again unchanged, as provider prompt caches need; the client's own figure alongside).\n"
    "The provider's prompt cache is simulated per conversation (a turn's longest unchanged prefix\n"
    "since its previous turn, in tools / system / messages order, is read from the cache, the rest\n"
    "written) and the input side is priced with the price table (--prices, default the built-in\n"
    "docs/prices.json): cost_usd_before / cost_usd_after and cache_read_tokens_before / _after;\n"
    "turns of models without a price are counted (unpriced_turns), never priced at $0. Tokens are\n"
    "counted by --tokenizer (default o200k: exact for OpenAI's current models, approximate for\n"
    "Anthropic's and Google's) over the request bodies as sent; --json says which (\"tokenizer\").\n\n"
    "Formats, detected from the content: gistproxy recordings (serve --record), HAR 1.2,\n"
    "claude-trace JSONL, vcrpy cassettes (YAML), Claude Code session transcripts, OpenHands\n"
    "llm_completions, Inspect AI eval logs, SWE-agent .traj, mini-swe-agent .traj.json, tau-bench\n"
    "results, Codex CLI rollouts, Cline/Roo/Kilo task histories, OpenHands output.jsonl, Gemini\n"
    "CLI saved chats, pi sessions (~/.pi/agent/sessions; the branch to the last entry) and documents\n"
    "of pi messages, and JSON/JSONL lists of chat\n"
    "messages or of request bodies. A directory is one trace: every file under it, recursively,\n"
    "in path order, each read with its own format (files none recognises are skipped and\n"
    "counted). Files are read one at a time while they replay: memory is that of the largest.\n"
    "A file nothing recognises gets an error naming what each format is identified by.\n\n"
    "  --json                 one JSON object: the totals (turns, tokens_before, tokens_after, ...)\n"
    "                         and \"traces\"; with --sweep-threshold, \"sweep\": one per threshold\n"
    "  --format NAME          read every file with this format's reader, skipping detection (the file\n"
    "                         must still have the shape the reader needs): gistproxy-recording, har,\n"
    "                         claude-trace, vcr, claude-code, openhands, openhands-output, inspect,\n"
    "                         swe-agent, mini-swe-agent, tau-bench, cline, gemini-cli, codex, pi,\n"
    "                         messages, request-bodies\n"
    "  --sweep-threshold LIST replay once per --threshold-tokens value (e.g. 1000,2500,5000)\n"
    "  --tokenizer NAME       o200k (default), cl100k or estimate (characters / 4)\n"
    "  --store DIR            keep the blobs in DIR (default: a temporary store, removed after)\n"
    "  --assume-head-tokens N requests rebuilt from messages carry no tools or system prompt; give each\n"
    "                         a head of about N tokens (default: the format's estimate from\n"
    "                         docs/agent_heads.json, where there is one; 0: none). Output says per trace\n"
    "                         which head was assumed and why (recorded, flag, format default, unknown)\n"
    "  --agent-heads FILE     that table from FILE instead (docs/agent_heads.json's shape)\n"
    "  offload flags          as for serve: --threshold-tokens, --tool-policy, --preview-tokens,\n"
    "                         --inject-read-blob, --context-budget-tokens, ... (serve --help)\n"
    "  --span-log FILE, --otlp-endpoint URL   write request and compaction spans, as serve does\n";

bool known_format(const std::string& name) {
  for (const auto& f : rewrite::trace_formats())
    if (f.name == name) return true;
  return false;
}

std::string format_names() {
  std::string s;
  for (const auto& f : rewrite::trace_formats()) s += (s.empty() ? "" : ", ") + std::string(f.name);
  return s;
}

// More than a rounding error (0.5%) dearer with gistproxy than without, in
// tokens or (priced turns) input dollars with the simulated prompt cache.
struct run_result {
  nlohmann::json json;
  std::string text;
};

// Progress on a terminal (stderr), at most a few times a second: gigabytes
// of sessions take minutes.
class progress_line {
 public:
  progress_line() : on_(::isatty(2) == 1) {}
  ~progress_line() { clear(); }
  void show(const std::string& trace, std::uint64_t files, std::uint64_t turns) {
    if (!on_) return;
    const auto now = std::chrono::steady_clock::now();
    if (now - last_ < std::chrono::milliseconds(250)) return;
    last_ = now;
    std::string name = trace.size() > 50 ? "..." + trace.substr(trace.size() - 47) : trace;
    std::cerr << "\r\033[Kreplay: " << name << ": " << thousands(files) << " files, " << thousands(turns) << " turns"
              << std::flush;
    shown_ = true;
  }
  void clear() {
    if (shown_) std::cerr << "\r\033[K" << std::flush;
    shown_ = false;
  }

 private:
  bool on_;
  bool shown_ = false;
  std::chrono::steady_clock::time_point last_{};
};

std::string skipped_text(const trace_walk& w) {
  std::string out;
  for (const auto& [why, files] : w.skipped)
    out += (out.empty() ? "" : ", ") + thousands(files.count) + " " + why + " (e.g. " + files.example + ")";
  return out;
}

// One pass over every trace with one configuration. Each trace is read while
// it is replayed, one file at a time, and dropped after.
run_result replay_all(const config& cfg, const std::vector<std::string>& args, const std::string& format,
                      const rewrite::head_policy& heads, const fs::path& store_dir, telemetry::tracer* tracer,
                      bool report_errors, int& status) {
  store::fs_store_options so;
  so.root = store_dir;
  so.zstd_level = cfg.zstd_level;
  so.max_blob_bytes = cfg.max_blob_bytes;
  store::fs_blob_store store(so);
  const auto estimator = make_tokenizer(cfg);
  rewrite::offload_engine engine(offload_config_of(cfg), store, *estimator);
  const auto prices = load_prices(cfg);
  rewrite::replayer replayer(engine, store, *estimator, &prices);

  auto on_request = [&](const rewrite::replayed_request& r) {
    if (!tracer) return;
    auto trace = telemetry::trace_id::from_hex(r.conversation).value_or(telemetry::derive_trace_id(r.conversation_key));
    auto s = tracer->start("gistproxy.request", telemetry::span_kind::server, trace, {});
    s.set_text("gistproxy.api", r.api->name());
    s.set("gistproxy.replay", true);
    std::uint64_t saved = 0;
    for (const auto& o : r.report.offloads) {
      emit_compaction_span(*tracer, s, o);
      saved += o.tokens_before > o.tokens_after ? o.tokens_before - o.tokens_after : 0;
    }
    s.set("gistproxy.offloads", std::int64_t(r.report.offloads.size()));
    s.set("gistproxy.tokens_saved", saved);
    tracer->end(s);
  };

  rewrite::replay_stats total;
  std::uint64_t traces = 0, dearer = 0;
  run_result out;
  out.json = {{"threshold_tokens", cfg.threshold_tokens}, {"tokenizer", std::string(estimator->name())},
              {"prices_date", prices.date()}, {"traces", nlohmann::json::array()}};
  progress_line progress;
  for (const auto& arg : args) {
    rewrite::replay_session session(replayer, "replay", on_request);
    session.assume_heads(heads);
    std::uint64_t files = 0, turns = 0;
    trace_walk w;
    try {
      w = walk_trace(arg, format, [&](const rewrite::recorded_trace& t) {
        session.feed(t);
        turns += t.requests.size();
      }, [&](const std::string&) { progress.show(arg, ++files, turns); });
    } catch (const std::exception& e) {
      progress.clear();
      if (report_errors) std::cerr << "gistproxy replay: " << arg << ": " << e.what() << "\n";
      status = 1;
      continue;
    }
    progress.clear();
    if (w.incomplete) {
      // Figures for what could be read, and an exit status that says some could not.
      if (report_errors)
        std::cerr << "gistproxy replay: " << arg << ": some directories could not be read ("
                  << w.skipped["unreadable directory"].example << "): the figures leave their traces out\n";
      status = 1;
    }
    auto st = session.finish();
    total.add(st);
    ++traces;
    auto j = stats_json(st);
    j["file"] = arg;
    j["format"] = w.format;
    j["rebuilt_from_messages"] = w.rebuilt;
    j["notes"] = w.notes;
    j["costs_more"] = st.costs_more();
    if (w.directory) {
      j["files"] = w.files;
      j["files_skipped"] = nlohmann::json::object();
      for (const auto& [why, skipped] : w.skipped) j["files_skipped"][why] = skipped.count;
    }
    out.json["traces"].push_back(std::move(j));
    out.text += arg + " (" + w.format + (w.rebuilt ? ", requests rebuilt from messages" : "") + "): " +
                (w.directory ? thousands(w.files) + " files, " : "") + thousands(st.turns) + " turns, " +
                thousands(st.conversations) + " conversations\n";
    if (!w.skipped.empty()) out.text += "  files skipped: " + skipped_text(w) + "\n";
    out.text += stats_text(st, "  ");
    if (st.costs_more()) {  // any amount: the count must agree with the figures printed
      out.text += "  ! COSTS MORE with gistproxy than without\n";
      ++dearer;
    }
    if (w.format == "cline" && cfg.text_tool_results != "cline")
      out.text += "  (Cline's tool results are user text: --text-tool-results cline offloads them)\n";
    if (!w.notes.empty()) out.text += "  (" + thousands(w.notes.size()) + " entries skipped: not LLM requests, no body or not JSON; --json lists them)\n";
  }
  out.json.update(stats_json(total));
  out.json["traces_costing_more"] = dearer;
  if (dearer) out.text += "! " + thousands(dearer) + " of " + thousands(traces) + " traces cost more with gistproxy than without\n";
  if (total.conversations_costing_more)
    out.text += "! " + thousands(total.conversations_costing_more) + " of " + thousands(total.conversations) +
                " conversations cost more with gistproxy than without\n";
  out.json["whole_replay_costs_more"] = total.costs_more();
  out.text += "total over " + thousands(traces) + " traces, threshold " + thousands(cfg.threshold_tokens) +
              " tokens: " + thousands(total.turns) + " turns\n" + stats_text(total, "  ");
  return out;
}

bool parse_count(const std::string& s, std::uint64_t& n) {
  if (s.empty() || s.size() > 7 || s.find_first_not_of("0123456789") != std::string::npos) return false;
  n = std::stoull(s);
  return n <= 1'000'000;
}

std::vector<std::uint64_t> parse_list(const std::string& s) {
  std::vector<std::uint64_t> out;
  std::stringstream in(s);
  std::string item;
  while (std::getline(in, item, ',')) {
    std::size_t used = 0;
    auto v = std::stoull(item, &used);
    if (used != item.size()) throw std::invalid_argument(item);
    out.push_back(v);
  }
  if (out.empty()) throw std::invalid_argument(s);
  return out;
}

}  // namespace

int replay_command(const std::vector<std::string>& args) {
  bool json = false, own_store = false;
  std::string format;
  rewrite::head_policy heads{std::nullopt, &rewrite::agent_heads::builtin()};
  std::optional<rewrite::agent_heads> head_file;
  std::vector<std::uint64_t> sweep;
  std::vector<std::string> files, serve_args;
  for (std::size_t i = 0; i < args.size(); ++i) {
    const auto& a = args[i];
    if (a == "--help" || a == "-h") return std::cout << help, 0;
    if (a == "--json") {
      json = true;
    } else if (a == "--format" || a.rfind("--format=", 0) == 0) {
      if (a == "--format" && i + 1 >= args.size()) return std::cerr << "--format needs a format name\n", 2;
      format = a == "--format" ? args[++i] : a.substr(9);
      if (!known_format(format)) return std::cerr << "gistproxy replay: --format: unknown format '" << format << "' (" << format_names() << ")\n", 2;
    } else if (a == "--assume-head-tokens") {
      std::uint64_t n = 0;
      if (i + 1 >= args.size() || !parse_count(args[++i], n))
        return std::cerr << "--assume-head-tokens needs a number of tokens (0 to 1000000)\n", 2;
      heads.tokens = n;
    } else if (a == "--agent-heads") {
      if (i + 1 >= args.size()) return std::cerr << "--agent-heads needs a file\n", 2;
      std::ifstream in(args[++i], std::ios::binary);
      std::stringstream text;
      text << in.rdbuf();
      try {
        if (!in) throw std::runtime_error("cannot read it");
        head_file = rewrite::agent_heads::parse(text.str());
      } catch (const std::exception& e) {
        return std::cerr << "gistproxy replay: --agent-heads " << args[i] << ": " << e.what() << "\n", 2;
      }
      heads.table = &*head_file;
    } else if (a == "--sweep-threshold") {
      if (i + 1 >= args.size()) return std::cerr << "--sweep-threshold needs a list, e.g. 1000,2500,5000\n", 2;
      try {
        sweep = parse_list(args[++i]);
      } catch (const std::exception&) {
        return std::cerr << "--sweep-threshold: '" << args[i] << "' is not a comma-separated list of numbers\n", 2;
      }
    } else if (a.rfind("--", 0) == 0) {
      // Everything else is one of serve's flags (each takes a value).
      own_store |= a == "--store" || a.rfind("--store=", 0) == 0;
      serve_args.push_back(a);
      if (a.find('=') == std::string::npos && i + 1 < args.size()) serve_args.push_back(args[++i]);
    } else {
      files.push_back(a);
    }
  }
  if (files.empty()) return std::cerr << help, 2;
  auto parsed = parse_serve_args(serve_args, environ);
  if (!parsed.cfg) return std::cerr << "gistproxy replay: " << parsed.message << "\n", 2;
  auto cfg = *parsed.cfg;
  if (is_s3_store(cfg.store))  // replay measures a policy offline: it writes a local store it can throw away
    return std::cerr << "gistproxy replay: --store must be a directory (replay never writes to a bucket)\n", 2;

  int status = 0;
  fs::path temp;
  try {
    telemetry::registry registry;
    telemetry::metric_catalogue metrics(registry);
    auto pipeline = make_exporters(cfg, metrics);
    telemetry::system_clock clock;
    telemetry::random_id_generator ids;
    telemetry::tracer tracer(clock, ids, pipeline.get());

    if (sweep.empty()) sweep.push_back(cfg.threshold_tokens);
    nlohmann::json sweep_json = nlohmann::json::array();
    std::string text;
    for (auto threshold : sweep) {
      cfg.threshold_tokens = threshold;
      fs::path store_dir = cfg.store;
      if (!own_store) {  // a fresh temporary store per pass: every policy starts from nothing
        char tmpl[] = "/tmp/gistproxy-replay-XXXXXX";
        if (!::mkdtemp(tmpl)) throw std::runtime_error("cannot create a temporary store");
        temp = store_dir = tmpl;
      }
      auto r = replay_all(cfg, files, format, heads, store_dir, pipeline ? &tracer : nullptr, sweep_json.empty(), status);
      if (!own_store) fs::remove_all(temp), temp.clear();
      sweep_json.push_back(std::move(r.json));
      text += r.text;
    }
    if (pipeline) pipeline->shutdown();
    if (json) {
      auto out = sweep_json.size() == 1 ? sweep_json[0] : nlohmann::json{{"sweep", sweep_json}};
      std::cout << out.dump(2, ' ', false, nlohmann::json::error_handler_t::replace) << "\n";
    } else {
      std::cout << text;
    }
  } catch (const std::exception& e) {
    if (!temp.empty()) fs::remove_all(temp);
    std::cerr << "gistproxy replay: " << e.what() << "\n";
    return 1;
  }
  return status;
}

}  // namespace gistproxy::proxy
