// Writes HTTP/1.1 heads as one contiguous buffer. Beast's serializer emits a
// buffer per header field, which costs more than the write itself for the
// small requests and responses that dominate LLM API traffic.
#pragma once

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

}  // namespace gistproxy::proxy
