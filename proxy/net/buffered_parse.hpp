// Feeds an HTTP parser what a connection's buffer already holds.
//
// Beast's async_read, asked for a message whose remaining bytes are all in
// the buffer (a small body arrives with its head, a small answer with its
// status line), posts its completion instead of completing inline: one more
// pass of the event loop and an empty epoll_wait for each such read, that is
// for nearly every request and answer. Parsing the buffered bytes first
// leaves async_read only for bytes still to come.
#pragma once

#include <boost/beast/core/flat_buffer.hpp>
#include <boost/beast/http/basic_parser.hpp>
#include <boost/beast/http/error.hpp>

namespace gistproxy::proxy {

// Parses what `buffer` holds into `parser`, consuming it. The parser's
// error, if it found one (the same async_read would report); success when it
// is done or needs bytes not yet received.
template <bool isRequest>
boost::beast::error_code parse_buffered(boost::beast::http::basic_parser<isRequest>& parser,
                                        boost::beast::flat_buffer& buffer) {
  namespace http = boost::beast::http;
  while (!parser.is_done() && buffer.size() > 0) {
    boost::beast::error_code ec;
    const auto used = parser.put(buffer.data(), ec);
    buffer.consume(used);
    if (ec == http::error::need_more) return {};
    if (ec) return ec;
    if (used == 0) return {};  // nothing it could take: async_read carries on
  }
  return {};
}

}  // namespace gistproxy::proxy
