#include "rewrite/eventstream/eventstream.hpp"

#include <zlib.h>

#include <algorithm>
#include <limits>

namespace gistproxy::rewrite::eventstream {

namespace {

constexpr std::size_t prelude_size = 12;  // total length, headers length, prelude CRC
constexpr std::size_t minimum_size = prelude_size + 4;
constexpr std::size_t max_name = 255;
constexpr std::size_t max_value = 65535;
constexpr std::uint8_t last_type = static_cast<std::uint8_t>(value_type::uuid);

std::uint32_t read_u32(std::string_view s, std::size_t at) {
  auto b = [&](std::size_t i) { return static_cast<std::uint32_t>(static_cast<unsigned char>(s[at + i])); };
  return b(0) << 24 | b(1) << 16 | b(2) << 8 | b(3);
}

std::size_t read_u16(std::string_view s, std::size_t at) {
  return static_cast<std::size_t>(static_cast<unsigned char>(s[at])) << 8 | static_cast<unsigned char>(s[at + 1]);
}

void append_u32(std::string& out, std::uint32_t v) {
  for (int shift = 24; shift >= 0; shift -= 8) out.push_back(static_cast<char>((v >> shift) & 0xff));
}

void append_u16(std::string& out, std::size_t v) {
  out.push_back(static_cast<char>((v >> 8) & 0xff));
  out.push_back(static_cast<char>(v & 0xff));
}

// The value's size for fixed-size types; nullopt for the u16-prefixed ones.
std::optional<std::size_t> fixed_size(value_type t) {
  switch (t) {
    case value_type::bool_true:
    case value_type::bool_false: return 0;
    case value_type::byte: return 1;
    case value_type::int16: return 2;
    case value_type::int32: return 4;
    case value_type::int64:
    case value_type::timestamp: return 8;
    case value_type::uuid: return 16;
    case value_type::bytes:
    case value_type::string: break;
  }
  return std::nullopt;
}

// What the bytes at hand hold at their start. need_more's length is how
// many bytes the next look needs (the prelude, then the whole message).
struct frame_check {
  enum { need_more, complete, bad } state;
  std::size_t length;
};

// Judges the prelude as soon as its bytes are there, so garbage fails before
// anything is buffered for it and no length is trusted before its CRC.
frame_check check_frame(std::string_view at_hand, std::size_t max_message) {
  if (at_hand.size() >= 4) {
    const std::size_t total = read_u32(at_hand, 0);
    if (total < minimum_size || total > max_message) return {frame_check::bad, 0};
  }
  if (at_hand.size() < prelude_size) return {frame_check::need_more, prelude_size};
  if (crc32(at_hand.substr(0, 8)) != read_u32(at_hand, 8)) return {frame_check::bad, 0};
  const std::size_t total = read_u32(at_hand, 0);
  if (read_u32(at_hand, 4) > total - minimum_size) return {frame_check::bad, 0};
  if (at_hand.size() < total) return {frame_check::need_more, total};
  return {frame_check::complete, total};
}

// Parses a headers block; false when a header is malformed or runs past the block.
bool parse_headers(std::string_view block, std::vector<header>& out) {
  std::size_t at = 0;
  while (at < block.size()) {
    const std::size_t name_size = static_cast<unsigned char>(block[at++]);
    if (name_size == 0 || block.size() - at < name_size + 1) return false;
    header h;
    h.name.assign(block.substr(at, name_size));
    at += name_size;
    const auto type = static_cast<std::uint8_t>(block[at++]);
    if (type > last_type) return false;
    h.type = static_cast<value_type>(type);
    std::size_t value_size = 0;
    if (auto fixed = fixed_size(h.type)) {
      value_size = *fixed;
    } else {
      if (block.size() - at < 2) return false;
      value_size = read_u16(block, at);
      at += 2;
    }
    if (block.size() - at < value_size) return false;
    h.value.assign(block.substr(at, value_size));
    at += value_size;
    out.push_back(std::move(h));
  }
  return true;
}

// Decodes one whole message whose prelude check_frame accepted.
std::optional<message> decode_frame(std::string_view raw) {
  const std::size_t body_end = raw.size() - 4;
  if (crc32(raw.substr(0, body_end)) != read_u32(raw, body_end)) return std::nullopt;
  const std::size_t headers_size = read_u32(raw, 4);
  message m;
  if (!parse_headers(raw.substr(prelude_size, headers_size), m.headers)) return std::nullopt;
  m.payload.assign(raw.substr(prelude_size + headers_size, body_end - prelude_size - headers_size));
  return m;
}

bool encodable(const header& h) {
  if (h.name.empty() || h.name.size() > max_name) return false;
  if (static_cast<std::uint8_t>(h.type) > last_type) return false;
  auto fixed = fixed_size(h.type);
  return fixed ? h.value.size() == *fixed : h.value.size() <= max_value;
}

std::size_t encoded_size(const header& h) {
  return 1 + h.name.size() + 1 + (fixed_size(h.type) ? 0 : 2) + h.value.size();
}

}  // namespace

std::optional<std::string_view> message::string_header(std::string_view name) const {
  for (const auto& h : headers)
    if (h.name == name) return h.type == value_type::string ? std::optional<std::string_view>(h.value) : std::nullopt;
  return std::nullopt;
}

message make_message(std::vector<std::pair<std::string, std::string>> string_headers, std::string payload) {
  message m;
  m.headers.reserve(string_headers.size());
  for (auto& [name, value] : string_headers) m.headers.push_back({std::move(name), value_type::string, std::move(value)});
  m.payload = std::move(payload);
  return m;
}

bool encodable(const message& m) {
  // Each header is at most 1 + 255 + 1 + 2 + 65535 bytes, so this sum cannot
  // overflow before it has passed the 32-bit limit it is checked against.
  std::size_t total = minimum_size + m.payload.size();
  for (const auto& h : m.headers) {
    if (!encodable(h)) return false;
    total += encoded_size(h);
    if (total > std::numeric_limits<std::uint32_t>::max()) return false;
  }
  return total <= std::numeric_limits<std::uint32_t>::max();
}

std::string encode(const message& m) {
  if (!encodable(m)) return {};
  std::size_t headers_size = 0;
  for (const auto& h : m.headers) headers_size += encoded_size(h);
  const std::size_t total = minimum_size + headers_size + m.payload.size();
  std::string out;
  out.reserve(total);
  append_u32(out, static_cast<std::uint32_t>(total));
  append_u32(out, static_cast<std::uint32_t>(headers_size));
  append_u32(out, crc32(out));
  for (const auto& h : m.headers) {
    out.push_back(static_cast<char>(h.name.size()));
    out += h.name;
    out.push_back(static_cast<char>(h.type));
    if (!fixed_size(h.type)) append_u16(out, h.value.size());
    out += h.value;
  }
  out += m.payload;
  append_u32(out, crc32(out));
  return out;
}

std::uint32_t crc32(std::string_view bytes, std::uint32_t running) {
  return static_cast<std::uint32_t>(
      ::crc32_z(running, reinterpret_cast<const Bytef*>(bytes.data()), bytes.size()));
}

decoder::decoder(std::size_t max_message) : max_message_(max_message) {}

bool decoder::feed(std::string_view bytes, const std::function<void(message&&, std::string_view raw)>& on_message) {
  if (failed_) return false;
  if (!buffer_.empty()) {
    // Top the started message up with just the bytes it lacks, so the rest of
    // a large feed is decoded in place rather than copied.
    for (;;) {
      auto c = check_frame(buffer_, max_message_);
      if (c.state == frame_check::bad) return fail(bytes);
      if (c.state == frame_check::complete) break;
      if (bytes.empty()) return true;
      const std::size_t take = std::min(c.length - buffer_.size(), bytes.size());
      buffer_.append(bytes.substr(0, take));
      bytes.remove_prefix(take);
    }
    auto m = decode_frame(buffer_);
    if (!m) return fail(bytes);
    on_message(std::move(*m), buffer_);
    buffer_.clear();
  }
  while (!bytes.empty()) {
    auto c = check_frame(bytes, max_message_);
    if (c.state == frame_check::bad) return fail(bytes);
    if (c.state == frame_check::need_more) {
      buffer_.assign(bytes);  // less than one message, which max_message bounds
      return true;
    }
    auto raw = bytes.substr(0, c.length);
    auto m = decode_frame(raw);
    if (!m) return fail(bytes);
    on_message(std::move(*m), raw);
    bytes.remove_prefix(c.length);
  }
  return true;
}

// Keeps the undecodable bytes (the buffered start of the message, if any,
// then the rest of this feed) for a caller that forwards them as they came.
bool decoder::fail(std::string_view rest) {
  failed_ = true;
  buffer_.append(rest);
  return false;
}

}  // namespace gistproxy::rewrite::eventstream
