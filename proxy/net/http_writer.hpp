// Writes HTTP/1.1 heads as one contiguous buffer. Beast's serializer emits a
// buffer per header field, which costs more than the write itself for the
// small requests and responses that dominate LLM API traffic.
#pragma once

#include <initializer_list>
#include <string>
#include <string_view>

#include "proxy/net/beast.hpp"

namespace gistproxy::proxy {

// "METHOD target HTTP/1.1\r\n" + fields + "\r\n".
std::string request_head(const http::request_header<>& h);
// "HTTP/1.x status reason\r\n" + fields + "\r\n".
std::string response_head(const http::response_header<>& h);
// Chunked transfer coding of one piece ("size\r\n" before, "\r\n" after).
std::string chunk_prefix(std::size_t size);
inline constexpr std::string_view chunk_suffix = "\r\n";
inline constexpr std::string_view last_chunk = "0\r\n\r\n";

// The head of a message to the next hop, written straight from the received
// message's fields: building a Beast header first cost an allocation and a
// field-name lookup per field, twice per request (a tenth of a small
// request's user-space CPU).
class head_builder {
 public:
  static head_builder request(std::string_view method, std::string_view target, std::size_t fields_hint);
  static head_builder response(unsigned version, unsigned status, std::string_view reason, std::size_t fields_hint);

  // Every end-to-end field of `from` (see hop_by_hop.hpp) except those named
  // in `replaced`, which the caller sets itself (empty names are ignored).
  head_builder& end_to_end_fields_of(const http::fields& from, std::initializer_list<std::string_view> replaced = {});
  head_builder& field(std::string_view name, std::string_view value);
  head_builder& content_length(std::uint64_t n);
  // What Beast's keep_alive() would write on a message without a Connection
  // field: "close" to end an HTTP/1.1 connection, "keep-alive" to keep an HTTP/1.0 one.
  head_builder& connection(unsigned version, bool keep_alive);
  std::string finish() &&;

 private:
  std::string out_;
};

// The bytes the fields of `h` take in a head, plus room for a start line.
std::size_t head_size_hint(const http::fields& h);

}  // namespace gistproxy::proxy
