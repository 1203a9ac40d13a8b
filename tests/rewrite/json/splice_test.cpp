// Top-level edits of a forwarded body (rewrite/json/splice.hpp), and the memo
// that lets several phases share one walk of a body.
#include <catch2/catch.hpp>

#include <string>

#include "rewrite/json/splice.hpp"

using namespace gistproxy::rewrite;

namespace {

std::string value_of(std::string_view body, const top_level& top, std::string_view key) {
  const auto r = top.member(key);
  return r ? std::string(body.substr(r->begin, r->size())) : std::string("<absent>");
}

}  // namespace

TEST_CASE("read_top_level finds members and their value ranges, member() the first of a duplicate") {
  const std::string body = R"({"a":1, "b":{"x":[1,2]}, "a":"two"})";
  const auto top = read_top_level(body);
  REQUIRE(top);
  CHECK(top->members.size() == 3);
  CHECK(value_of(body, *top, "a") == "1");
  CHECK(value_of(body, *top, "b") == R"({"x":[1,2]})");
  CHECK(value_of(body, *top, "c") == "<absent>");
  CHECK(body[top->object_end] == '}');
  CHECK_FALSE(read_top_level("[1]"));
  CHECK_FALSE(read_top_level(R"({"a":1} trailing)"));
}

TEST_CASE("set_member replaces a value or appends the member") {
  const std::string body = R"({"model":"m","id":"old"})";
  const auto top = read_top_level(body);
  REQUIRE(top);
  CHECK(set_member(body, *top, "id", R"("new")") == R"({"model":"m","id":"new"})");
  CHECK(set_member(body, *top, "n", "2") == R"({"model":"m","id":"old","n":2})");
}

TEST_CASE("top_level_memo reads a body once and again when the body is another buffer") {
  top_level_memo memo;
  std::string body = R"({"a":1})";
  const auto* first = &memo.of(body);
  REQUIRE(*first);
  CHECK(value_of(body, **first, "a") == "1");
  CHECK(&memo.of(body) == first);  // the same object, not read again

  SECTION("a replaced body of another size is read again") {
    body = R"({"a":22,"b":3})";
    const auto& again = memo.of(body);
    REQUIRE(again);
    CHECK(value_of(body, *again, "a") == "22");
    CHECK(value_of(body, *again, "b") == "3");
  }
  SECTION("a body in another buffer of the same size is read again") {
    const std::string other = R"({"b":2})";
    const auto& again = memo.of(other);
    REQUIRE(again);
    CHECK(value_of(other, *again, "a") == "<absent>");
    CHECK(value_of(other, *again, "b") == "2");
  }
  SECTION("forget() reads the same buffer again, for a body rewritten in place") {
    body[5] = '7';
    memo.forget();
    const auto& again = memo.of(body);
    REQUIRE(again);
    CHECK(value_of(body, *again, "a") == "7");
  }
  SECTION("a body that is not an object reads as none") {
    const std::string not_object = "[1,2]";
    CHECK_FALSE(memo.of(not_object));
  }
}
