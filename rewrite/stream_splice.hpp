// One hop of a streamed answer, from the upstream's wire bytes to the bytes
// the client gets (the stream reader's pure core, proxy/exchange/stream_reader.cpp):
//   - each event the framing decodes goes through the stream filter, and the
//     filter's output is encoded back into the hop's framing;
//   - a message no filter reads (an unknown AWS :event-type, a chunk without
//     a "type") goes on as sent, and the stream is still followed;
//   - from the first thing that cannot be followed on (a framing error, an
//     AWS exception, an event the filter throws on, an event larger than
//     `max_pending`) every byte goes on as sent, those the framing holds
//     first: once the splice passes through, its output is its input.
// Never a byte lost, whatever the split of the pieces.
#pragma once

#include <cstddef>
#include <memory>
#include <string>
#include <string_view>

#include "rewrite/wire_format.hpp"
#include "rewrite/stream_filter.hpp"
#include "rewrite/stream_framing.hpp"

namespace gistproxy::rewrite {

class hop_splice {
 public:
  hop_splice(stream_transport transport, stream_filter& filter, std::size_t max_pending);

  // The client's bytes for the next piece of the hop's body.
  std::string feed(std::string_view piece);
  // From the piece on which the stream stopped being followed: the filter
  // has not seen the rest of the hop (its end is not the turn's end).
  bool passing_through() const { return passthrough_; }

 private:
  std::unique_ptr<stream_framing> framing_;
  stream_filter& filter_;
  std::size_t max_pending_;
  bool passthrough_ = false;
};

}  // namespace gistproxy::rewrite
