// Growing a string for bytes about to be read into it, without writing zeros
// first: a multi-megabyte request body is otherwise written twice (zeros,
// then the socket's bytes). std::string::resize_and_overwrite is C++23; this
// one file is compiled as C++23 (proxy/CMakeLists.txt).
#include "proxy/net/uninitialized_grow.hpp"

namespace gistproxy::proxy {

// Without it every request body is zero-filled before it is read (a 1.6 MiB
// agent turn: 1.6 MiB of memset, on pages not yet touched). That went unnoticed once
// when the CMake property making this file C++23 was lost, so its absence
// now stops the build instead.
#if !defined(__cpp_lib_string_resize_and_overwrite)
#error "compile uninitialized_grow.cpp as C++23 (proxy/CMakeLists.txt sets -std=c++2b on it)"
#endif

void grow_uninitialized(std::string& s, std::size_t n) {
  // The new bytes are left as they are; the caller reads into them and then
  // shrinks the string to what was read, never reading them before.
  s.resize_and_overwrite(s.size() + n, [](char*, std::size_t size) { return size; });
}

}  // namespace gistproxy::proxy
