#include "proxy/commands/tokens_command.hpp"
#include "proxy/commands/input_files.hpp"

#include <chrono>
#include <fstream>
#include <iostream>
#include <iterator>
#include <nlohmann/json.hpp>

#include "rewrite/tokens/bpe_tokenizer.hpp"

namespace gistproxy::proxy {
namespace {

constexpr const char* help =
    "usage: gistproxy tokens [--tokenizer o200k|cl100k|estimate] [--json] FILE...\n\n"
    "Counts each file's tokens (- reads standard input) as tiktoken's encode_ordinary would\n"
    "(special tokens such as <|endoftext|> count as text). Prints \"COUNT FILE\" per file, or with\n"
    "--json one object: tokenizer, files [{file, bytes, tokens}], and the counting speed.\n";

bool read_input(const std::string& name, std::string& out, std::string& error) {
  if (name == "-") {
    // Standard input may never end (a pipe from /dev/zero): read up to the bound.
    out.clear();
    char buf[65536];
    while (std::cin.read(buf, sizeof buf) || std::cin.gcount() > 0) {
      out.append(buf, std::size_t(std::cin.gcount()));
      if (out.size() > max_input_bytes) return error = "standard input is larger than 1 GiB", false;
    }
    return true;
  }
  auto bytes = read_input_file(name, max_input_bytes, error);
  if (!bytes) return false;
  out = std::move(*bytes);
  return true;
}

}  // namespace

int tokens_command(const std::vector<std::string>& args) {
  std::string choice = "o200k";
  bool json = false;
  std::vector<std::string> files;
  for (std::size_t i = 0; i < args.size(); ++i) {
    if (args[i] == "--help" || args[i] == "-h") {
      std::cout << help;
      return 0;
    }
    if (args[i] == "--json") json = true;
    else if (args[i] == "--tokenizer" && i + 1 < args.size()) choice = args[++i];
    else if (args[i].rfind("--tokenizer=", 0) == 0) choice = args[i].substr(12);
    else if (args[i].size() > 1 && args[i][0] == '-') {
      std::cerr << "gistproxy tokens: unknown option " << args[i] << "\n" << help;
      return 2;
    } else files.push_back(args[i]);
  }
  if (files.empty()) {
    std::cerr << help;
    return 2;
  }
  std::string error;
  auto tokenizer = rewrite::tokens::make_token_estimator(choice, &error);
  if (!tokenizer) {
    std::cerr << "gistproxy tokens: --tokenizer " << choice << ": " << error << "\n";
    return 2;
  }
  // A built-in table is built on its first count: not inside the timing.
  tokenizer->estimate({}, rewrite::content_kind::text);
  nlohmann::json out = {{"tokenizer", std::string(tokenizer->name())}, {"files", nlohmann::json::array()}};
  std::uint64_t total_bytes = 0;
  std::chrono::steady_clock::duration spent{};
  int rc = 0;
  for (const auto& f : files) {
    std::string text;
    std::string why;
    if (!read_input(f, text, why)) {
      std::cerr << "gistproxy tokens: cannot read " << f << ": " << why << "\n";
      rc = 1;
      continue;
    }
    auto start = std::chrono::steady_clock::now();
    auto n = tokenizer->estimate(text, rewrite::content_kind::text);
    spent += std::chrono::steady_clock::now() - start;
    total_bytes += text.size();
    if (json) out["files"].push_back({{"file", f}, {"bytes", text.size()}, {"tokens", n}});
    else std::cout << n << " " << f << "\n";
  }
  if (json) {
    const double seconds = std::chrono::duration<double>(spent).count();
    out["bytes"] = total_bytes;
    out["seconds"] = seconds;
    out["mb_per_s"] = seconds > 0 ? double(total_bytes) / 1e6 / seconds : 0.0;
    std::cout << out.dump(-1, ' ', false, nlohmann::json::error_handler_t::replace) << "\n";
  }
  return rc;
}

}  // namespace gistproxy::proxy
