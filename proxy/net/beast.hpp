// Namespace aliases shared by the proxy's I/O code.
#pragma once

#include <boost/asio/as_tuple.hpp>
#include <boost/asio/awaitable.hpp>
#include <boost/asio/io_context.hpp>
#include <boost/asio/use_awaitable.hpp>
#include <boost/beast/core.hpp>
#include <boost/beast/http.hpp>

namespace gistproxy::proxy {

namespace asio = boost::asio;
namespace beast = boost::beast;
namespace http = beast::http;
using tcp = asio::ip::tcp;
using error_code = beast::error_code;

// Every I/O object and coroutine of the data path runs on one shard's
// io_context, so they name its executor type instead of the type-erased
// any_io_executor: copying, comparing and destroying that erased executor on
// every operation was ~3% of a pass-through request's CPU.
using executor = asio::io_context::executor_type;
template <class T>
using awaitable = asio::awaitable<T, executor>;
using tcp_socket = asio::basic_stream_socket<tcp, executor>;
using tcp_acceptor = asio::basic_socket_acceptor<tcp, executor>;
using tcp_stream = beast::basic_stream<tcp, executor>;
constexpr asio::use_awaitable_t<executor> use_awaitable;

// Completion token for the data path: errors come back as values, never as
// exceptions (a reset client is not exceptional for a proxy).
constexpr auto use_nothrow = asio::as_tuple(use_awaitable);

}  // namespace gistproxy::proxy
