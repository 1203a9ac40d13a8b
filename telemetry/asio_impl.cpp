// Asio and Beast compiled once for the whole program (separate compilation:
// rebuilds stay fast). It lives in the lowest library that uses them.
#include <boost/asio/impl/src.hpp>
#include <boost/asio/ssl/impl/src.hpp>
#include <boost/beast/src.hpp>
