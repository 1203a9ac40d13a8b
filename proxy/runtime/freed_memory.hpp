// Handing the memory a burst freed back to the system once it is over.
//
// mimalloc (linked into the gistproxy binary) keeps pages freed by a burst,
// 1 MiB request bodies say, for the thread's next allocations, and returns
// them only from inside a later allocation or free: an I/O thread that goes
// quiet after a burst holds them for as long as it is quiet. Returning them
// at once instead (MIMALLOC_DECOMMIT_DELAY=0) cost 2.18x the CPU of a 1 KB
// request (BENCHMARKS.md, seventh pass). Each I/O thread collects its own
// heap once a second instead: what was freed a second ago goes back.
#pragma once

#include <chrono>
#include <optional>

#include "proxy/net/beast.hpp"

namespace gistproxy::proxy {

// Whether the process runs on an allocator this can collect (mimalloc): the
// sanitizer builds and a build with GISTPROXY_MIMALLOC=OFF do not.
bool can_return_freed_memory();

// Collects the calling thread's heap: its empty pages are freed and, once
// the allocator's short delay has passed, returned to the system.
void return_freed_memory();

// A timer on one I/O thread's io_context that calls return_freed_memory()
// every `period` on that thread; nothing without mimalloc. Destroy it
// before the io_context.
class freed_memory_sweeper {
 public:
  freed_memory_sweeper(asio::io_context& io, std::chrono::milliseconds period);
  ~freed_memory_sweeper();

 private:
  void arm();
  std::optional<asio::steady_timer> timer_;
  std::chrono::milliseconds period_;
};

}  // namespace gistproxy::proxy
