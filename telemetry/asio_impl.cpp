// Asio and Beast compiled once for the whole program (separate compilation:
// rebuilds stay fast), as the gistproxy_asio library (telemetry/CMakeLists.txt)
// that telemetry's exporters and the proxy link; no other library compiles them.
#include <boost/asio/impl/src.hpp>
#include <boost/asio/ssl/impl/src.hpp>
#include <boost/beast/src.hpp>
