// An event stream from upstream (Bedrock) is hostile bytes. The decoder must
// never crash on them; every message it decodes must encode back to exactly
// the bytes it was read from; and how the bytes are split between feeds must
// not change what comes out.
//
// Input: split (1 byte: piece size of the first decoder's feeds), limit (1
// byte: max_message 256 B..64 KiB), flags (1 byte: bit 0 rewrites the
// stream's CRCs so mutations reach the header parser rather than dying on a
// checksum), cut (2 bytes: the second decoder's one split point), the stream.
#include <string>
#include <vector>

#include "rewrite/eventstream/eventstream.hpp"
#include "tests/fuzz/fuzz_input.hpp"

using namespace gistproxy::rewrite::eventstream;

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

}  // namespace

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
  gistproxy::fuzz::input in(data, size);
  const std::size_t split = 1 + in.byte() % 64;
  const std::size_t max_message = std::size_t(1) << (8 + in.byte() % 9);
  const bool fix = in.byte() & 1;
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
  return 0;
}
