// The listener's ALPN choice (RFC 7301 wire form) and its refusals of files
// that cannot serve. Loading real certificates is in the integration tests.
#include <catch2/catch.hpp>
#include <filesystem>
#include <fstream>

#include "proxy/net/listener_tls.hpp"

using gistproxy::proxy::alpn_choice;
using gistproxy::proxy::choose_alpn;

namespace {
std::string wire(std::initializer_list<std::string> names) {
  std::string out;
  for (const auto& n : names) out += char(n.size()) + n;
  return out;
}
}  // namespace

TEST_CASE("ALPN picks h2 when offered and http/1.1 otherwise in any order") {
  CHECK(choose_alpn(wire({"h2", "http/1.1"})) == alpn_choice::h2);
  CHECK(choose_alpn(wire({"http/1.1", "h2"})) == alpn_choice::h2);
  CHECK(choose_alpn(wire({"http/1.1"})) == alpn_choice::http1);
  CHECK(choose_alpn(wire({"spdy/3", "http/1.1"})) == alpn_choice::http1);
  CHECK(choose_alpn(wire({"h3", "spdy/3"})) == alpn_choice::none);
  CHECK(choose_alpn("") == alpn_choice::none);
}

TEST_CASE("a malformed ALPN list picks nothing and never reads past its end") {
  CHECK(choose_alpn(std::string("\x05h2", 3)) == alpn_choice::none);         // a name longer than the list
  CHECK(choose_alpn(std::string("\x00\x02h2", 4)) == alpn_choice::none);     // an empty name
  CHECK(choose_alpn(wire({"http/1.1"}) + "\x09" + "http/1.1") == alpn_choice::none);  // truncated after a good name
  CHECK(choose_alpn(std::string("\x02h2") + "\x7f") == alpn_choice::h2);      // chosen before the damage
}

TEST_CASE("listener TLS files that cannot serve are refused with the flag that names them") {
  const auto dir = std::filesystem::temp_directory_path();
  const auto junk = (dir / "gistproxy-not-a-certificate.pem").string();
  std::ofstream(junk) << "not PEM\n";
  try {
    gistproxy::proxy::listener_tls tls(gistproxy::proxy::tls_files{junk, junk, ""});
    FAIL("junk was accepted");
  } catch (const std::runtime_error& e) {
    CHECK(std::string(e.what()).rfind("--tls-cert " + junk, 0) == 0);
  }
  try {
    gistproxy::proxy::listener_tls tls(gistproxy::proxy::tls_files{(dir / "gistproxy-missing.pem").string(), junk, ""});
    FAIL("a missing file was accepted");
  } catch (const std::runtime_error& e) {
    CHECK(std::string(e.what()).find("--tls-cert") != std::string::npos);
  }
}
