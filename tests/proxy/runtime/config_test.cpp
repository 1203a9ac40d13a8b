#include "proxy/runtime/config.hpp"

#include <catch2/catch.hpp>
#include <filesystem>
#include <fstream>

using namespace gistproxy::proxy;

namespace {
const char* const no_env[] = {nullptr};
}

TEST_CASE("defaults are embedded") {
  auto r = parse_serve_args({}, no_env);
  REQUIRE(r.cfg);
  CHECK(r.cfg->listen == "127.0.0.1:8080");
  CHECK(r.cfg->admin_listen == "127.0.0.1:9464");
  CHECK(r.cfg->max_body_bytes == 64ull << 20);
  CHECK(r.cfg->upstream_for("anthropic") == "https://api.anthropic.com");
}

TEST_CASE("flags override the config file, which overrides defaults") {
  auto path = std::filesystem::temp_directory_path() / "gp-config-test.json";
  std::ofstream(path) << R"({"listen":"0.0.0.0:9000","upstream":"http://127.0.0.1:1234","max_body":"1MiB",
                             "upstream_timeout":"5s"})";
  auto r = parse_serve_args({"--config", path.string(), "--listen", "127.0.0.1:7000"}, no_env);
  REQUIRE(r.cfg);
  CHECK(r.cfg->listen == "127.0.0.1:7000");
  CHECK(r.cfg->upstream == "http://127.0.0.1:1234");
  CHECK(r.cfg->upstream_for("anthropic") == "http://127.0.0.1:1234");  // follows an explicit --upstream
  CHECK(r.cfg->max_body_bytes == 1u << 20);
  CHECK(r.cfg->upstream_timeout == std::chrono::seconds(5));
  std::filesystem::remove(path);
}

TEST_CASE("OpenTelemetry environment variables are honoured, flags win") {
  const char* env[] = {"OTEL_EXPORTER_OTLP_ENDPOINT=http://127.0.0.1:4318", "OTEL_SERVICE_NAME=agent-proxy", nullptr};
  auto r = parse_serve_args({}, env);
  REQUIRE(r.cfg);
  CHECK(r.cfg->otlp_endpoint == "http://127.0.0.1:4318");
  CHECK(r.cfg->service_name == "agent-proxy");
  CHECK(parse_serve_args({"--otlp-endpoint=http://x:1"}, env).cfg->otlp_endpoint == "http://x:1");
}

TEST_CASE("the proxy environment is read as curl reads it, lowercase first, and --egress-proxy is kept apart") {
  SECTION("lowercase before uppercase") {
    const char* env[] = {"HTTPS_PROXY=http://upper:1", "https_proxy=http://lower:1", "HTTP_PROXY=http://plain:2",
                         "NO_PROXY=internal.example", nullptr};
    auto r = parse_serve_args({}, env);
    REQUIRE(r.cfg);
    CHECK(r.cfg->egress.https_proxy == "http://lower:1");
    CHECK(r.cfg->egress.http_proxy == "http://plain:2");
    CHECK(r.cfg->egress.no_proxy == "internal.example");
    CHECK(r.cfg->egress.flag.empty());
  }
  SECTION("a lowercase variable set empty wins over its uppercase form (it unsets the proxy)") {
    const char* env[] = {"https_proxy=", "HTTPS_PROXY=http://upper:1", nullptr};
    auto r = parse_serve_args({}, env);
    REQUIRE(r.cfg);
    CHECK(r.cfg->egress.https_proxy.empty());
  }
  SECTION("--egress-proxy (flag or config key) is its own setting; the environment stays for no_proxy") {
    const char* env[] = {"HTTPS_PROXY=http://env:1", "NO_PROXY=internal.example", nullptr};
    auto r = parse_serve_args({"--egress-proxy", "http://user:pw@flag:3128"}, env);
    REQUIRE(r.cfg);
    CHECK(r.cfg->egress.flag == "http://user:pw@flag:3128");
    CHECK(r.cfg->egress.no_proxy == "internal.example");
    CHECK(parse_serve_args({"--egress-proxy=none"}, env).cfg->egress.flag == "none");
  }
}

TEST_CASE("a bad --egress-proxy is refused without showing its password") {
  auto r = parse_serve_args({"--egress-proxy", "socks5://alice:hunter2@proxy:1080"}, no_env);
  CHECK_FALSE(r.cfg);
  CHECK(r.exit_code == 2);
  CHECK(r.message.find("bad value for --egress-proxy") != std::string::npos);
  CHECK(r.message.find("hunter2") == std::string::npos);

  auto path = std::filesystem::temp_directory_path() / "gp-config-egress-test.json";
  std::ofstream(path) << R"({"egress_proxy":"https://alice:hunter2@proxy:3128"})";
  auto from_file = parse_serve_args({"--config", path.string()}, no_env);
  std::filesystem::remove(path);
  CHECK_FALSE(from_file.cfg);
  CHECK(from_file.message.find("egress_proxy") != std::string::npos);
  CHECK(from_file.message.find("hunter2") == std::string::npos);
}

TEST_CASE("bad input gets a clear message and exit code 2") {
  auto r = parse_serve_args({"--nope"}, no_env);
  CHECK_FALSE(r.cfg);
  CHECK(r.exit_code == 2);
  CHECK(r.message.find("unknown option '--nope'") != std::string::npos);
  CHECK(parse_serve_args({"--upstream-timeout", "soon"}, no_env).message.find("bad value") != std::string::npos);
  CHECK(parse_serve_args({"--log-level", "loud"}, no_env).exit_code == 2);
  CHECK(parse_serve_args({"--listen"}, no_env).message.find("needs a value") != std::string::npos);
}

TEST_CASE("--help lists every option and --version prints the version") {
  auto help = parse_serve_args({"--help"}, no_env);
  CHECK(help.exit_code == 0);
  for (auto flag : {"--listen", "--upstream", "--admin-listen", "--span-log", "--otlp-endpoint", "--max-body",
                    "--upstream-timeout", "--upstream-ca", "--config", "--version"})
    CHECK(help.message.find(flag) != std::string::npos);
  CHECK(parse_serve_args({"--version"}, no_env).message.find("gistproxy ") == 0);
}

TEST_CASE("durations and sizes accept units") {
  CHECK(parse_duration("250ms") == std::chrono::milliseconds(250));
  CHECK(parse_duration("2") == std::chrono::seconds(2));
  CHECK(parse_duration("7d") == std::chrono::hours(168));
  CHECK_FALSE(parse_duration("5 parsecs"));
  CHECK(parse_bytes("64MiB") == 64ull << 20);
  CHECK(parse_bytes("10MB") == 10'000'000ull);
  CHECK_FALSE(parse_bytes("lots"));
}

TEST_CASE("durations and sizes parse strictly (finite, non-negative, bounded) and a TTL is positive") {
  for (const char* bad : {"inf", "nan", "-nan", "infs", "1e16", "1e300d", "-1s", "0x10", "1e16s", "4000d"}) {
    CAPTURE(bad);
    CHECK_FALSE(parse_duration(bad));
  }
  CHECK(parse_duration("3650d") == std::chrono::hours(24 * 3650));  // ten years is the longest
  CHECK(parse_duration("0") == std::chrono::milliseconds(0));       // zero turns some features off
  for (const char* bad : {"inf", "nan", "1e30GiB", "0x1p70", "-1"}) {
    CAPTURE(bad);
    CHECK_FALSE(parse_bytes(bad));
  }
  for (const char* ttl : {"0", "nan", "inf", "1e16"}) {
    CAPTURE(ttl);
    const char* argv_env[] = {nullptr};
    auto r = parse_serve_args({"--blob-ttl", ttl}, argv_env);
    CHECK_FALSE(r.cfg);
    CHECK(r.exit_code == 2);
  }
}

TEST_CASE("a numeric flag takes digits only: no sign and no space") {
  CHECK(parse_serve_args({"--threshold-tokens", "3000"}, no_env).cfg->threshold_tokens == 3000);
  for (const char* bad : {"-1", "+5", " 5", "5 ", "", "18446744073709551616", "3e3"}) {
    INFO(bad);
    CHECK_FALSE(parse_serve_args({"--threshold-tokens", bad}, no_env).cfg);
  }
  CHECK(whole_number("18446744073709551615") == ~std::uint64_t(0));
  CHECK_FALSE(whole_number("0x10"));
}

TEST_CASE("each --compatible value adds a provider, from flags and the config file, its URL its family's upstream") {
  auto path = std::filesystem::temp_directory_path() / "gp-config-compatible-test.json";
  std::ofstream(path) << R"({"compatible":["groq=/groq/v1=https://api.groq.com/openai/v1"]})";
  auto r = parse_serve_args({"--config", path.string(), "--compatible", "ollama=/ollama/v1=http://127.0.0.1:11434/v1",
                             "--upstream", "http://127.0.0.1:1234"},
                            no_env);
  REQUIRE(r.cfg);
  REQUIRE(r.cfg->compatible.size() == 2);
  CHECK(r.cfg->compatible[0].name == "groq");
  CHECK(r.cfg->compatible[1].prefix == "/ollama/v1");
  CHECK(r.cfg->upstream_for("groq") == "https://api.groq.com/openai/v1");  // not --upstream's, which stands in for built-ins only
  CHECK(r.cfg->upstream_for("ollama") == "http://127.0.0.1:11434/v1");
  CHECK(r.cfg->upstream_for("openai") == "http://127.0.0.1:1234");

  auto twice = parse_serve_args({"--config", path.string(), "--compatible", "groq=/other=http://h"}, no_env);
  CHECK_FALSE(twice.cfg);
  CHECK(twice.exit_code == 2);
  CHECK(twice.message.find("--compatible") != std::string::npos);
  CHECK(twice.message.find("given twice") != std::string::npos);
  std::filesystem::remove(path);
}

TEST_CASE("a bad --compatible says why, and never shows the URL's password") {
  for (std::string v : {"groq=/v1/chat=http://h", "groq=/groq/v1=ftp://h", "groq=/groq/v1", "openai=/x=http://h"}) {
    CAPTURE(v);
    auto r = parse_serve_args({"--compatible", v}, no_env);
    CHECK_FALSE(r.cfg);
    CHECK(r.exit_code == 2);
    CHECK(r.message.find("--compatible") != std::string::npos);
  }
  auto r = parse_serve_args({"--compatible", "groq=/groq/v1=ftp://user:hunter2@h/v1"}, no_env);
  CHECK_FALSE(r.cfg);
  CHECK(r.message.find("hunter2") == std::string::npos);
}
