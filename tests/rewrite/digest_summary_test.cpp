// Content-aware digests at the top of a reference: a log's levels and problem
// lines with their numbers, a JSON document's shape with its first and last items.
#include <catch2/catch.hpp>

#include "rewrite/gist/digests.hpp"

using namespace gistproxy::rewrite;

TEST_CASE("log digest: counts per level and the problem lines, numbered, the first and last five") {
  std::string log;
  for (int i = 1; i <= 3000; ++i) {
    std::string line = "2026-11-25T08:00 INFO step " + std::to_string(i) + " ok";
    if (i % 250 == 0) line = "2026-11-25T08:00 WARNING slow step " + std::to_string(i);
    if (i % 500 == 0) line = "2026-11-25T08:00 ERROR step " + std::to_string(i) + " failed: exit 2";
    if (i == 2999) line = "FAILED tests/test_api.py::test_login - AssertionError: 401 != 200";
    log += line + "\n";
  }
  auto d = log_digest(log, 4000);
  CHECK(d.rfind("levels: ERROR 6, WARN 6, INFO 2987\n", 0) == 0);
  CHECK(d.find("problem lines (10 of 7):") == std::string::npos);
  CHECK(d.find("problem lines (7 of 7):\n500: ") != std::string::npos);
  CHECK(d.find("\n2999: FAILED tests/test_api.py::test_login") != std::string::npos);
  CHECK(d == log_digest(log, 4000));  // deterministic
  CHECK(log_digest(log, 120).size() <= 120);

  std::string many;
  for (int i = 1; i <= 40; ++i) many += "ERROR " + std::to_string(i) + "\n";
  auto m = log_digest(many, 4000);
  CHECK(m.find("problem lines (10 of 40):\n1: ERROR 1\n") != std::string::npos);
  CHECK(m.find("5: ERROR 5\n36: ERROR 36\n") != std::string::npos);
  CHECK(m.ends_with("40: ERROR 40\n"));
  // "0 errors" and "errors=0" are not problems; "error:" (compilers) is.
  auto quiet = log_digest("build: 0 errors\nlink ok\nsrc/a.c:3:1: error: expected ';'\n", 4000);
  CHECK(quiet == "problem lines (1 of 1):\n3: src/a.c:3:1: error: expected ';'\n");
}

TEST_CASE("json digest: the shape, the item count, keys and types, first and last items") {
  std::string list = "[";
  for (int i = 0; i < 300; ++i)
    list += std::string(i ? "," : "") + R"({"id":)" + std::to_string(i) + R"(,"name":"user )" + std::to_string(i) +
            R"(","tags":["a"],"active":true,"manager":null})";
  list += "]";
  auto d = json_digest(list, 2000);
  CHECK(d.rfind("shape: array of 300 objects {id: number, name: string, tags: array, active: boolean, manager: null}\n", 0) == 0);
  CHECK(d.find("first: {\"id\":0,") != std::string::npos);
  CHECK(d.find("last: {\"id\":299,") != std::string::npos);
  CHECK(json_digest(R"({"users":[1,2,3],"total":3,"next":null})", 2000) ==
        "shape: object {users: array of 3, total: number, next: null}\n");
  CHECK(json_digest(R"([1,"a"])", 2000).rfind("shape: array of 2 mixed items\n", 0) == 0);
  CHECK(json_digest("[1,2", 2000).empty());  // not JSON: no digest
  CHECK(json_digest(list, 60).size() <= 60);
}
