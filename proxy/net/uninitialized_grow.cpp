// Growing a string for bytes about to be read into it, without writing zeros
// first: a multi-megabyte request body is otherwise written twice (zeros,
// then the socket's bytes). std::string::resize_and_overwrite is C++23; this
// one file is compiled as C++23 where the compiler offers it (CMakeLists).
#include "proxy/net/uninitialized_grow.hpp"

namespace gistproxy::proxy {

void grow_uninitialized(std::string& s, std::size_t n) {
#if defined(__cpp_lib_string_resize_and_overwrite)
  // The new bytes are left as they are; the caller reads into them and then
  // shrinks the string to what was read, never reading them before.
  s.resize_and_overwrite(s.size() + n, [](char*, std::size_t size) { return size; });
#else
  s.resize(s.size() + n);
#endif
}

}  // namespace gistproxy::proxy
