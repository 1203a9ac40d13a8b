// The AWS event-stream binary framing (application/vnd.amazon.eventstream),
// what Bedrock's InvokeModelWithResponseStream and ConverseStream answer
// with instead of SSE. Each message on the wire:
//
//   total length (u32) | headers length (u32) | prelude CRC32 (of the 8 bytes before it)
//   headers: name length (u8, 1..255) | name | type (u8) | value
//   payload (total - headers - 16 bytes)
//   message CRC32 (of every byte before it)
//
// All integers are big-endian; the CRC is CRC-32/ISO-HDLC (zlib's). A value
// is empty (bool), fixed size (byte 1, short 2, int 4, long 8, timestamp 8,
// uuid 16) or a u16 length then its bytes (bytes, string).
//
// The decoder keeps every header's type and raw value bytes, in order, so
// encode(decoded message) gives back the very bytes that were read.
#pragma once

#include <cstddef>
#include <cstdint>
#include <functional>
#include <optional>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

namespace gistproxy::rewrite::eventstream {

// Header value types as on the wire.
enum class value_type : std::uint8_t {
  bool_true = 0, bool_false = 1, byte = 2, int16 = 3, int32 = 4, int64 = 5,
  bytes = 6, string = 7, timestamp = 8, uuid = 9
};

struct header {
  std::string name;
  value_type type = value_type::string;
  // Raw value bytes as on the wire: fixed-size types their big-endian bytes,
  // bytes and string their content (without the length), bool empty.
  std::string value;
};

struct message {
  std::vector<header> headers;
  std::string payload;
  // The value of the first header of that name (":event-type",
  // ":message-type", ":content-type", ":exception-type", …) when it is a
  // string; nullopt when absent or of another type. Valid while *this is.
  std::optional<std::string_view> string_header(std::string_view name) const;
};

// A message with string headers in the given order (what an encoder of events writes).
message make_message(std::vector<std::pair<std::string, std::string>> string_headers, std::string payload);

// True when m can be framed: names of 1..255 bytes, fixed-size values of
// their type's size (bool: empty), bytes/string values of at most 65535
// bytes, a known type, and a total length that fits in 32 bits.
bool encodable(const message& m);

// The wire bytes of m, CRCs computed. Empty (never a valid message) when
// !encodable(m): our own encoders only build encodable messages, and a
// decoded one always is, so this is a can't-happen that must not crash.
std::string encode(const message& m);

// CRC-32/ISO-HDLC of bytes, continuing from `running` (0 to start).
std::uint32_t crc32(std::string_view bytes, std::uint32_t running = 0);

// Incremental decoder: bytes may arrive split anywhere, byte by byte included.
class decoder {
 public:
  // A message whose total length exceeds max_message is a framing error, so
  // the decoder never holds more than max_message bytes of one message.
  explicit decoder(std::size_t max_message = 16u << 20);

  // Calls on_message(message, raw) for each complete message in order; raw
  // is that message's exact wire bytes, valid only during the call.
  // Returns false on a framing error: a bad prelude or message CRC, a total
  // length under 16 or over max_message, a headers length past the payload,
  // or a malformed header (empty name, unknown type, value past the headers).
  // The decoder then stays failed: pending() holds the bytes from the
  // offending message to the end of that feed, and later feeds return false
  // at once and keep nothing (a caller failing open forwards pending() and
  // then the bytes it is still given).
  bool feed(std::string_view bytes, const std::function<void(message&&, std::string_view raw)>& on_message);

  // The bytes of an incomplete message (or, after a failure, the undecodable rest).
  std::string_view pending() const { return buffer_; }
  bool failed() const { return failed_; }

 private:
  bool fail(std::string_view rest);

  std::size_t max_message_;
  std::string buffer_;  // the start of one message (at most max_message_ bytes) until a failure
  bool failed_ = false;
};

}  // namespace gistproxy::rewrite::eventstream
