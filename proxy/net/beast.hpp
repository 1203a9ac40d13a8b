// Namespace aliases shared by the proxy's I/O code.
#pragma once

#include <boost/asio/as_tuple.hpp>
#include <boost/asio/awaitable.hpp>
#include <boost/asio/use_awaitable.hpp>
#include <boost/beast/core.hpp>
#include <boost/beast/http.hpp>

namespace gistproxy::proxy {

namespace asio = boost::asio;
namespace beast = boost::beast;
namespace http = beast::http;
using tcp = asio::ip::tcp;
using error_code = beast::error_code;
template <class T>
using awaitable = asio::awaitable<T>;

// Completion token for the data path: errors come back as values, never as
// exceptions (a reset client is not exceptional for a proxy).
constexpr auto use_nothrow = asio::as_tuple(asio::use_awaitable);

}  // namespace gistproxy::proxy
