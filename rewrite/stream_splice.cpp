#include "rewrite/stream_splice.hpp"

namespace gistproxy::rewrite {

hop_splice::hop_splice(stream_transport transport, stream_filter& filter, std::size_t max_pending)
    : framing_(make_stream_framing(transport)), filter_(filter), max_pending_(max_pending) {}

std::string hop_splice::feed(std::string_view piece) {
  if (passthrough_) return std::string(piece);
  std::string out;
  const bool followed = framing_->feed(piece, [&](const sse::event* e, std::string_view wire) {
    if (passthrough_ || !e) return void(out += wire);
    try {
      out += framing_->encode(filter_.on_event(*e));
    } catch (const std::exception&) {
      // An event of a shape nobody expected: from it on, the hop as sent
      // (fail-open), never an aborted stream.
      passthrough_ = true;
      out += wire;
    }
  });
  if (!followed || (!passthrough_ && framing_->pending().size() > max_pending_)) passthrough_ = true;
  if (passthrough_) out += framing_->pending();
  return out;
}

}  // namespace gistproxy::rewrite
