// An event stream from upstream (Bedrock) is hostile bytes. The decoder must
// never crash on them; every message it decodes must encode back to exactly
// the bytes it was read from; and how the bytes are split between feeds must
// not change what comes out. The splice (rewrite/stream_splice.hpp), fed the
// same pieces through a filter that drops the first events and throws on the
// next, must lose no byte: its output is whole input messages as sent (those
// no filter reads), then, once it passes through, the input's exact tail,
// whatever the decoder held at that moment included.
//
// Input: split (1 byte: piece size of the first decoder's feeds), limit (1
// byte: max_message 256 B..64 KiB), flags (1 byte: bit 0 rewrites the
// stream's CRCs so mutations reach the header parser rather than dying on a
// checksum; bit 1 the Converse framing rather than InvokeModel's; bits 2-3
// how many events the filter drops before it throws), cut (2 bytes: the
// second decoder's one split point), the stream.
#include <stdexcept>
#include <string>
#include <vector>

#include "rewrite/eventstream/eventstream.hpp"
#include "rewrite/stream_splice.hpp"
#include "tests/fuzz/fuzz_input.hpp"

using namespace gistproxy::rewrite::eventstream;
namespace rw = gistproxy::rewrite;

namespace {

std::uint32_t read_u32(const std::string& s, std::size_t at) {
  std::uint32_t v = 0;
  for (std::size_t i = 0; i < 4; ++i) v = v << 8 | static_cast<unsigned char>(s[at + i]);
  return v;
}

void write_u32(std::string& s, std::size_t at, std::uint32_t v) {
  for (std::size_t i = 0; i < 4; ++i) s[at + i] = static_cast<char>((v >> (24 - 8 * i)) & 0xff);
}

// Gives each frame the CRCs it claims to need, walking by total length.
void fix_crcs(std::string& s) {
  std::size_t at = 0;
  while (s.size() - at >= 12) {
    const std::size_t total = read_u32(s, at);
    write_u32(s, at + 8, crc32(std::string_view(s).substr(at, 8)));
    if (total < 16 || total > s.size() - at) return;
    write_u32(s, at + total - 4, crc32(std::string_view(s).substr(at, total - 4)));
    at += total;
  }
}

struct outcome {
  std::vector<message> messages;
  std::string raws;  // every delivered message's raw bytes, in order
  bool failed = false;
  std::string pending;
};

outcome decode_in(std::string_view stream, const std::vector<std::size_t>& cuts, std::size_t max_message) {
  decoder d(max_message);
  outcome o;
  std::size_t from = 0;
  auto on_message = [&](message&& m, std::string_view raw) {
    if (encode(m) != raw) __builtin_trap();  // decode → encode is the identity
    o.raws += raw;
    o.messages.push_back(std::move(m));
  };
  for (std::size_t to : cuts) {
    d.feed(stream.substr(from, to - from), on_message);
    from = to;
  }
  o.failed = d.failed();
  o.pending = d.pending();
  return o;
}

bool same(const message& a, const message& b) {
  if (a.payload != b.payload || a.headers.size() != b.headers.size()) return false;
  for (std::size_t i = 0; i < a.headers.size(); ++i) {
    const auto &x = a.headers[i], &y = b.headers[i];
    if (x.name != y.name || x.type != y.type || x.value != y.value) return false;
  }
  return true;
}

// Drops the first `drops` events (the client gets nothing for them), then
// throws: the splice passes the hop through from that event on.
struct dropping_filter final : rw::stream_filter {
  std::size_t drops = 0;
  std::string on_event(const rw::sse::event&) override {
    if (drops == 0) throw std::runtime_error("unexpected shape");
    --drops;
    return {};
  }
  hop_end end_hop() override { return {}; }
  std::string finish() override { return {}; }
  rw::token_usage usage() const override { return {}; }
  std::string keepalive() const override { return {}; }
  std::string error_event(std::string_view, std::string_view) const override { return {}; }
};

// Whether `out` is a concatenation of some of `frames`, in order. Frames are
// self-delimiting (their length leads), so two that match at one place are
// the same bytes: taking the first that matches is never wrong.
bool made_of(std::string_view out, const std::vector<std::string_view>& frames, std::size_t limit) {
  for (std::size_t i = 0; i < limit && !out.empty(); ++i)
    if (out.substr(0, frames[i].size()) == frames[i]) out.remove_prefix(frames[i].size());
  return out.empty();
}

void check_splice(std::string_view stream, const std::vector<std::size_t>& cuts, bool typed, std::size_t drops) {
  dropping_filter filter;
  filter.drops = drops;
  rw::hop_splice splice(typed ? rw::stream_transport::eventstream_typed : rw::stream_transport::eventstream_wrapped,
                        filter, std::size_t(16) << 20);
  std::string out;
  std::size_t from = 0;
  for (std::size_t to : cuts) {
    out += splice.feed(stream.substr(from, to - from));
    from = to;
  }
  // The stream's messages as the splice's own decoder (default limit) sees them.
  std::vector<std::string_view> frames;
  std::vector<std::size_t> starts;
  decoder d;
  std::size_t at = 0;
  d.feed(stream, [&](message&&, std::string_view raw) {
    frames.push_back(stream.substr(at, raw.size()));
    starts.push_back(at);
    at += raw.size();
  });
  starts.push_back(at);  // where the undecodable or unfinished rest begins
  if (!splice.passing_through()) {
    if (!made_of(out, frames, frames.size())) __builtin_trap();
    return;
  }
  for (std::size_t m = 0; m < starts.size(); ++m) {
    const auto tail = stream.substr(starts[m]);
    if (tail.size() > out.size() || std::string_view(out).substr(out.size() - tail.size()) != tail) continue;
    if (made_of(std::string_view(out).substr(0, out.size() - tail.size()), frames, m)) return;
  }
  __builtin_trap();  // a byte lost, added or moved once the hop passed through
}

}  // namespace

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
  gistproxy::fuzz::input in(data, size);
  const std::size_t split = 1 + in.byte() % 64;
  const std::size_t max_message = std::size_t(1) << (8 + in.byte() % 9);
  const std::uint8_t flags = in.byte();
  const bool fix = flags & 1;
  const std::size_t cut_at = std::size_t(in.byte()) << 8 | in.byte();
  std::string stream(in.rest());
  if (fix) fix_crcs(stream);

  std::vector<std::size_t> pieces, halves;
  for (std::size_t at = split; at < stream.size(); at += split) pieces.push_back(at);
  pieces.push_back(stream.size());
  const std::size_t cut = stream.empty() ? 0 : cut_at % (stream.size() + 1);
  halves = {cut, stream.size()};

  auto a = decode_in(stream, pieces, max_message);
  auto b = decode_in(stream, halves, max_message);
  if (a.failed != b.failed || a.messages.size() != b.messages.size() || a.raws != b.raws) __builtin_trap();
  for (std::size_t i = 0; i < a.messages.size(); ++i)
    if (!same(a.messages[i], b.messages[i])) __builtin_trap();
  // What was delivered and what is pending are the stream's bytes, in order;
  // unless the decoder failed, nothing is lost.
  for (const auto* o : {&a, &b}) {
    const std::string seen = o->raws + o->pending;
    if (std::string_view(stream).substr(0, seen.size()) != seen) __builtin_trap();
    if (!o->failed && seen.size() != stream.size()) __builtin_trap();
    if (o->pending.size() > max_message && !o->failed) __builtin_trap();
  }
  const bool typed = flags & 2;
  const std::size_t drops = (flags >> 2) & 3;
  check_splice(stream, pieces, typed, drops);
  check_splice(stream, halves, typed, drops);
  return 0;
}
