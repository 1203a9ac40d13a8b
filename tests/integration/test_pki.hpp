// A private CA and a server certificate for one host name, made with the
// openssl CLI: TLS upstreams the proxy trusts through --upstream-ca.
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
};

}  // namespace gistproxy::testing
