#include "rewrite/eventstream/eventstream.hpp"

#include <catch2/catch.hpp>
#include <string>
#include <vector>

using namespace gistproxy::rewrite::eventstream;

namespace {

std::string from_hex(std::string_view hex) {
  std::string out;
  for (std::size_t i = 0; i + 1 < hex.size(); i += 2)
    out.push_back(static_cast<char>(std::stoi(std::string(hex.substr(i, 2)), nullptr, 16)));
  return out;
}

struct seen {
  message m;
  std::string raw;
};

// Feeds `wire` in pieces of `piece` bytes; `ok` is false once a feed failed.
struct feed_result {
  std::vector<seen> messages;
  bool ok = true;
  std::string pending;
};

feed_result feed_in_pieces(std::string_view wire, std::size_t piece, std::size_t max_message = 16u << 20) {
  decoder d(max_message);
  feed_result r;
  for (std::size_t i = 0; i < wire.size() && r.ok; i += piece)
    r.ok = d.feed(wire.substr(i, piece),
                  [&](message&& m, std::string_view raw) { r.messages.push_back({std::move(m), std::string(raw)}); });
  r.pending = d.pending();
  CHECK(d.failed() == !r.ok);
  return r;
}

void append_u32(std::string& s, std::uint32_t v) {
  for (int shift = 24; shift >= 0; shift -= 8) s.push_back(static_cast<char>((v >> shift) & 0xff));
}

// Frames a raw headers block and payload with correct CRCs, so a test can
// reach the header parser with headers encode() would never write.
std::string frame(std::string_view headers_block, std::string_view payload) {
  std::string out;
  append_u32(out, static_cast<std::uint32_t>(16 + headers_block.size() + payload.size()));
  append_u32(out, static_cast<std::uint32_t>(headers_block.size()));
  append_u32(out, crc32(out));
  out += headers_block;
  out += payload;
  append_u32(out, crc32(out));
  return out;
}

// Vectors from the AWS SDK for JavaScript's event-stream marshaller tests
// (TestVectors.fixture.ts), written here as hex.
const std::string empty_message = from_hex("000000100000000005c248eb7d98c8ff");
const std::string int32_header = from_hex(
    "0000002b0000000e348bec7b086576656e742d6964040000a00c7b27666f6f273a27626172277dd3890285");
const std::string payload_no_headers = from_hex("0000001d00000000fd528c5a7b27666f6f273a27626172277dc3653936");
const std::string payload_one_str_header = from_hex(
    "0000003d0000002007fd83960c636f6e74656e742d747970650700106170706c69636174696f6e2f6a736f6e"
    "7b27666f6f273a27626172277d8d9c08b1");

// Made with @smithy/eventstream-codec 4.5.2's EventStreamCodec.encode: one
// header of each type (bool-t, bool-f, byte -49, short -12345, int
// 0x0a0b0c0d, long -2, bin 00 01 fe ff, ":event-type" "chunk", ts
// 1700000000123 ms, id 01234567-89ab-cdef-0123-456789abcdef) and a JSON payload.
const std::string all_headers = from_hex(
    "000000b200000076b643501406626f6f6c2d740006626f6f6c2d6601046279746502cf0573686f727403cfc703696e74"
    "040a0b0c0d046c6f6e6705fffffffffffffffe0362696e0600040001feff0b3a6576656e742d747970650700056368756e6b"
    "027473080000018bcfe5687b026964090123456789abcdef0123456789abcdef7b226279746573223a2265794a306558426c"
    "496a6f696257567a6332466e5a56397a6447467964434a39227d5e32fe49");

}  // namespace

TEST_CASE("crc32 is zlib's CRC-32 and continues from a running value") {
  CHECK(crc32("123456789") == 0xCBF43926u);
  CHECK(crc32("") == 0u);
  CHECK(crc32("6789", crc32("12345")) == 0xCBF43926u);
}

TEST_CASE("the AWS SDK's test vectors decode and encode back byte for byte") {
  auto r = feed_in_pieces(empty_message + int32_header + payload_no_headers + payload_one_str_header, 1u << 20);
  REQUIRE(r.ok);
  REQUIRE(r.messages.size() == 4);
  CHECK(r.pending.empty());
  CHECK(r.messages[0].m.headers.empty());
  CHECK(r.messages[0].m.payload.empty());
  REQUIRE(r.messages[1].m.headers.size() == 1);
  CHECK(r.messages[1].m.headers[0].name == "event-id");
  CHECK(r.messages[1].m.headers[0].type == value_type::int32);
  CHECK(r.messages[1].m.headers[0].value == from_hex("0000a00c"));
  CHECK(r.messages[1].m.payload == "{'foo':'bar'}");
  CHECK(r.messages[2].m.headers.empty());
  CHECK(r.messages[2].m.payload == "{'foo':'bar'}");
  CHECK(r.messages[3].m.string_header("content-type") == "application/json");
  CHECK(r.messages[0].raw == empty_message);
  CHECK(r.messages[3].raw == payload_one_str_header);
  for (const auto& s : r.messages) CHECK(encode(s.m) == s.raw);
}

TEST_CASE("the AWS SDK's corrupted vectors are framing errors") {
  auto corrupt = [](std::string s, std::size_t at, char to) {
    s[at] = to;
    return s;
  };
  std::string wire;
  SECTION("a changed header byte fails the message CRC") { wire = corrupt(payload_one_str_header, 20, '+'); }
  SECTION("a changed headers length fails the prelude CRC") { wire = corrupt(payload_one_str_header, 6, 1); }
  SECTION("a total length over the maximum") { wire = corrupt(payload_no_headers, 0, 1); }
  SECTION("a changed payload byte fails the message CRC") { wire = corrupt(payload_no_headers, 24, '\x8d'); }
  auto r = feed_in_pieces(wire, 64);
  CHECK_FALSE(r.ok);
  CHECK(r.messages.empty());
  CHECK(r.pending == wire);
}

TEST_CASE("a message with every header type keeps each type and raw value") {
  auto r = feed_in_pieces(all_headers, 1u << 20);
  REQUIRE(r.ok);
  REQUIRE(r.messages.size() == 1);
  const auto& h = r.messages[0].m.headers;
  REQUIRE(h.size() == 10);
  struct expected { const char* name; value_type type; std::string value; };
  const std::vector<expected> want = {
      {"bool-t", value_type::bool_true, ""},
      {"bool-f", value_type::bool_false, ""},
      {"byte", value_type::byte, from_hex("cf")},
      {"short", value_type::int16, from_hex("cfc7")},
      {"int", value_type::int32, from_hex("0a0b0c0d")},
      {"long", value_type::int64, from_hex("fffffffffffffffe")},
      {"bin", value_type::bytes, from_hex("0001feff")},
      {":event-type", value_type::string, "chunk"},
      {"ts", value_type::timestamp, from_hex("0000018bcfe5687b")},
      {"id", value_type::uuid, from_hex("0123456789abcdef0123456789abcdef")},
  };
  for (std::size_t i = 0; i < want.size(); ++i) {
    INFO(want[i].name);
    CHECK(h[i].name == want[i].name);
    CHECK(h[i].type == want[i].type);
    CHECK(h[i].value == want[i].value);
  }
  CHECK(r.messages[0].m.string_header(":event-type") == "chunk");
  CHECK(r.messages[0].m.payload == R"({"bytes":"eyJ0eXBlIjoibWVzc2FnZV9zdGFydCJ9"})");
  CHECK(encode(r.messages[0].m) == all_headers);
}

TEST_CASE("every header type round trips through encode and decode") {
  auto [type, value] = GENERATE(table<value_type, std::string>({
      {value_type::bool_true, ""}, {value_type::bool_false, ""}, {value_type::byte, "\x80"},
      {value_type::int16, std::string("\x00\x01", 2)}, {value_type::int32, "\xff\xfe\xfd\xfc"},
      {value_type::int64, std::string(8, '\x7f')}, {value_type::bytes, ""},
      {value_type::bytes, std::string("\x00\xff\x00", 3)},
      {value_type::bytes, std::string(65535, 'b')}, {value_type::string, ""}, {value_type::string, "caf\xc3\xa9"},
      {value_type::string, std::string(65535, 's')}, {value_type::timestamp, std::string(8, '\0')},
      {value_type::uuid, std::string(16, '\x11')}}));
  message m;
  m.headers.push_back({"first", type, value});
  m.headers.push_back({std::string(255, 'n'), type, value});  // the longest name
  m.payload = "payload";
  auto wire = encode(m);
  REQUIRE_FALSE(wire.empty());
  auto r = feed_in_pieces(wire, 7);
  REQUIRE(r.ok);
  REQUIRE(r.messages.size() == 1);
  const auto& got = r.messages[0].m;
  REQUIRE(got.headers.size() == 2);
  for (const auto& h : got.headers) {
    CHECK(h.type == type);
    CHECK(h.value == value);
  }
  CHECK(got.headers[1].name.size() == 255);
  CHECK(got.payload == "payload");
  CHECK(r.messages[0].raw == wire);
}

TEST_CASE("bytes fed one at a time give the same messages as one feed") {
  auto two = make_message({{":event-type", "chunk"}, {":message-type", "event"}}, R"({"bytes":"e30="})");
  const std::string wire = all_headers + encode(two) + empty_message;
  auto whole = feed_in_pieces(wire, wire.size());
  auto piece = GENERATE(1u, 2u, 3u, 11u, 12u, 13u, 100u);
  auto split = feed_in_pieces(wire, piece);
  REQUIRE(split.ok);
  REQUIRE(split.messages.size() == 3);
  CHECK(split.pending.empty());
  std::string joined;
  for (std::size_t i = 0; i < 3; ++i) {
    CHECK(split.messages[i].raw == whole.messages[i].raw);
    CHECK(encode(split.messages[i].m) == split.messages[i].raw);
    joined += split.messages[i].raw;
  }
  CHECK(joined == wire);
  CHECK(split.messages[1].m.string_header(":message-type") == "event");
}

TEST_CASE("two messages in one feed arrive in order with their own raw bytes") {
  decoder d;
  std::vector<std::string> raws;
  REQUIRE(d.feed(int32_header + payload_one_str_header, [&](message&&, std::string_view raw) { raws.emplace_back(raw); }));
  REQUIRE(raws.size() == 2);
  CHECK(raws[0] == int32_header);
  CHECK(raws[1] == payload_one_str_header);
  CHECK(d.pending().empty());
}

TEST_CASE("a truncated message stays pending and completes with the rest") {
  const std::string wire = payload_one_str_header;
  auto cut = GENERATE(1u, 4u, 11u, 12u, 30u, 60u);
  decoder d;
  int count = 0;
  auto count_it = [&](message&&, std::string_view) { ++count; };
  REQUIRE(d.feed(std::string_view(wire).substr(0, cut), count_it));
  CHECK(count == 0);
  CHECK_FALSE(d.failed());
  CHECK(d.pending() == wire.substr(0, cut));
  REQUIRE(d.feed(std::string_view(wire).substr(cut), count_it));
  CHECK(count == 1);
  CHECK(d.pending().empty());
}

TEST_CASE("a bad prelude CRC fails and keeps the undecodable bytes") {
  std::string bad = payload_no_headers;
  bad[8] ^= 1;
  decoder d;
  int count = 0;
  CHECK_FALSE(d.feed(empty_message + bad, [&](message&&, std::string_view) { ++count; }));
  CHECK(count == 1);  // the message before it was delivered
  CHECK(d.failed());
  CHECK(d.pending() == bad);
  SECTION("and stays failed, keeping nothing more") {
    CHECK_FALSE(d.feed(empty_message, [&](message&&, std::string_view) { ++count; }));
    CHECK(count == 1);
    CHECK(d.pending() == bad);
  }
}

TEST_CASE("a bad message CRC fails even when the message arrived in pieces") {
  std::string bad = payload_one_str_header;
  bad.back() ^= 0x40;
  auto r = feed_in_pieces(bad, GENERATE(1u, 5u, 1000u));
  CHECK_FALSE(r.ok);
  CHECK(r.messages.empty());
  CHECK(r.pending == bad);
}

TEST_CASE("a total length over max_message fails on its first four bytes") {
  decoder d(1024);
  std::string prelude;
  append_u32(prelude, 1025);
  CHECK_FALSE(d.feed(prelude, [](message&&, std::string_view) {}));
  CHECK(d.pending() == prelude);
  SECTION("while a message of exactly max_message decodes") {
    message m;
    m.payload.assign(1024 - 16, 'p');
    auto r = feed_in_pieces(encode(m), 100, 1024);
    CHECK(r.ok);
    CHECK(r.messages.size() == 1);
  }
}

TEST_CASE("malformed framing with valid CRCs is refused") {
  std::string wire;
  SECTION("a total length under 16") {
    append_u32(wire, 15);
    append_u32(wire, 0);
    append_u32(wire, crc32(wire));
    wire += std::string(4, '\0');
  }
  SECTION("a headers length past the payload") {
    append_u32(wire, 20);
    append_u32(wire, 5);
    append_u32(wire, crc32(wire));
    wire += "abcd";
    append_u32(wire, crc32(wire));
  }
  SECTION("an empty header name") { wire = frame(std::string("\x00\x00", 2), "x"); }
  SECTION("an unknown header type") { wire = frame(std::string("\x01n\x0a", 3), "x"); }
  SECTION("a header name past the headers") { wire = frame(std::string("\x05na", 3), "xxxxxx"); }
  SECTION("a fixed-size value past the headers") { wire = frame(std::string("\x01n\x04\x00\x00", 5), "xxxx"); }
  SECTION("a string length past the headers") { wire = frame(std::string("\x01n\x07\x00\x05" "abc", 8), "xx"); }
  SECTION("a string length cut in half") { wire = frame(std::string("\x01n\x07\x00", 4), "xx"); }
  for (std::size_t piece : {1u, 1000u}) {
    auto r = feed_in_pieces(wire, piece);
    CHECK_FALSE(r.ok);
    CHECK(r.messages.empty());
    // Fed byte by byte, it fails as soon as the bad field is in: what came so far is pending.
    CHECK_FALSE(r.pending.empty());
    CHECK(wire.starts_with(r.pending));
  }
}

TEST_CASE("string_header answers only for a string header of that name") {
  message m;
  m.headers.push_back({":event-type", value_type::string, "chunk"});
  m.headers.push_back({"n", value_type::int32, "\x00\x00\x00\x01"});
  CHECK(m.string_header(":event-type") == "chunk");
  CHECK_FALSE(m.string_header("n"));
  CHECK_FALSE(m.string_header(":message-type"));
}

TEST_CASE("encode refuses a message that cannot be framed instead of writing a wrong one") {
  message m;
  SECTION("an empty name") { m.headers.push_back({"", value_type::string, "v"}); }
  SECTION("a name over 255 bytes") { m.headers.push_back({std::string(256, 'n'), value_type::string, "v"}); }
  SECTION("a string over 65535 bytes") { m.headers.push_back({"n", value_type::string, std::string(65536, 'v')}); }
  SECTION("an int32 of three bytes") { m.headers.push_back({"n", value_type::int32, "abc"}); }
  SECTION("a bool with a value") { m.headers.push_back({"n", value_type::bool_true, "x"}); }
  SECTION("an unknown type") { m.headers.push_back({"n", static_cast<value_type>(10), ""}); }
  CHECK_FALSE(encodable(m));
  CHECK(encode(m).empty());
}

TEST_CASE("make_message writes string headers in the order given") {
  auto m = make_message({{":event-type", "chunk"}, {":content-type", "application/json"}, {":message-type", "event"}}, "{}");
  auto r = feed_in_pieces(encode(m), 1000);
  REQUIRE(r.messages.size() == 1);
  const auto& h = r.messages[0].m.headers;
  REQUIRE(h.size() == 3);
  CHECK(h[0].name == ":event-type");
  CHECK(h[1].name == ":content-type");
  CHECK(h[2].name == ":message-type");
  CHECK(h[2].type == value_type::string);
  CHECK(r.messages[0].m.payload == "{}");
}
