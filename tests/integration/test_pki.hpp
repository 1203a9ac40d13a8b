// A private CA and a server certificate for one host name, made with the
// openssl CLI: TLS upstreams the proxy trusts through --upstream-ca, and the
// proxy's own listener (--tls-cert). issue() makes more certificates from
// the same CA: renewed, expired, or a client's.
#pragma once

#include <catch2/catch.hpp>
#include <cstdlib>
#include <filesystem>
#include <string>

#include "tests/integration/harness.hpp"

namespace gistproxy::testing {

struct test_pki {
  std::filesystem::path dir, ca, cert, key;
  explicit test_pki(const std::string& name) {
    dir = temp_path("pki-" + name);
    std::filesystem::create_directories(dir);
    ca = dir / "ca.pem";
    cert = dir / "server.pem";
    key = dir / "server.key";
    std::string d = dir.string();
    std::string script =
        "cd '" + d + "' && "
        "openssl req -x509 -newkey rsa:2048 -nodes -keyout ca.key -out ca.pem -days 2 -subj '/CN=gistproxy test CA' "
        "  -addext basicConstraints=critical,CA:TRUE -addext keyUsage=critical,keyCertSign,cRLSign >/dev/null 2>&1 && "
        "openssl req -newkey rsa:2048 -nodes -keyout server.key -out server.csr -subj '/CN=" + name + "' >/dev/null 2>&1 && "
        "printf 'subjectAltName=DNS:" + name + "\\nbasicConstraints=CA:FALSE\\n' > ext.cnf && "
        "openssl x509 -req -in server.csr -CA ca.pem -CAkey ca.key -CAcreateserial -out server.pem -days 2 "
        "  -extfile ext.cnf >/dev/null 2>&1";
    REQUIRE(std::system(script.c_str()) == 0);
  }

  struct issued {
    std::filesystem::path cert, key;
  };
  // A certificate for common name `cn` valid `days` from now (negative:
  // expired that long ago), with `extensions` (openssl -extfile lines),
  // signed by this CA; files `stem`.pem and `stem`.key in dir.
  issued issue(const std::string& stem, const std::string& cn, int days,
               const std::string& extensions = "subjectAltName=DNS:localhost,IP:127.0.0.1") const {
    issued out{dir / (stem + ".pem"), dir / (stem + ".key")};
    std::string d = dir.string();
    std::string script =
        "cd '" + d + "' && "
        "openssl req -newkey rsa:2048 -nodes -keyout '" + stem + ".key' -out '" + stem + ".csr' -subj '/CN=" + cn +
        "' >/dev/null 2>&1 && printf '" + extensions + "\\nbasicConstraints=CA:FALSE\\n' > '" + stem + ".cnf' && "
        "openssl x509 -req -in '" + stem + ".csr' -CA ca.pem -CAkey ca.key -CAcreateserial -out '" + stem + ".pem' "
        "-days " + std::to_string(days) + " -extfile '" + stem + ".cnf' >/dev/null 2>&1";
    REQUIRE(std::system(script.c_str()) == 0);
    return out;
  }
};

}  // namespace gistproxy::testing
