// gistproxy-eventstream-tool: gistproxy's event-stream codec as a filter, for
// the test that compares it with the AWS SDK's own (@smithy/eventstream-codec).
//
//   decode (default): binary event stream on stdin, one JSON line per message on stdout:
//     {"headers":[{"name":HEX,"type":N,"value":HEX}…],"payload":HEX}
//     (N is the wire type code; bytes in lowercase hex). A framing error or a
//     truncated message is reported on stderr and exits 1, after the
//     messages decoded before it.
//   encode: those JSON lines on stdin, the binary event stream on stdout.
#include <array>
#include <cstdio>
#include <iostream>
#include <nlohmann/json.hpp>
#include <string>

#include "rewrite/eventstream/eventstream.hpp"

using namespace gistproxy::rewrite::eventstream;

namespace {

std::string to_hex(std::string_view bytes) {
  static constexpr char digits[] = "0123456789abcdef";
  std::string out;
  for (unsigned char c : bytes) {
    out.push_back(digits[c >> 4]);
    out.push_back(digits[c & 15]);
  }
  return out;
}

std::string from_hex(const std::string& hex) {
  if (hex.size() % 2) throw std::runtime_error("odd hex length");
  std::string out;
  for (std::size_t i = 0; i < hex.size(); i += 2) out.push_back(static_cast<char>(std::stoi(hex.substr(i, 2), nullptr, 16)));
  return out;
}

int decode_stdin() {
  decoder d;
  std::array<char, 4096> chunk;  // small reads: the decoder sees the stream split at arbitrary points
  std::size_t n = 0;
  while ((n = std::fread(chunk.data(), 1, chunk.size(), stdin)) > 0) {
    bool ok = d.feed(std::string_view(chunk.data(), n), [](message&& m, std::string_view) {
      nlohmann::json headers = nlohmann::json::array();
      for (const auto& h : m.headers)
        headers.push_back({{"name", to_hex(h.name)}, {"type", static_cast<int>(h.type)}, {"value", to_hex(h.value)}});
      std::cout << nlohmann::json{{"headers", headers}, {"payload", to_hex(m.payload)}}.dump() << "\n";
    });
    if (!ok) {
      std::cerr << "gistproxy-eventstream-tool: framing error, " << d.pending().size() << " bytes undecoded\n";
      return 1;
    }
  }
  if (!d.pending().empty()) {
    std::cerr << "gistproxy-eventstream-tool: truncated message, " << d.pending().size() << " bytes pending\n";
    return 1;
  }
  return 0;
}

int encode_stdin() {
  std::string line;
  while (std::getline(std::cin, line)) {
    if (line.empty()) continue;
    auto j = nlohmann::json::parse(line);
    message m;
    for (const auto& h : j.at("headers"))
      m.headers.push_back({from_hex(h.at("name")), static_cast<value_type>(h.at("type").get<int>()), from_hex(h.at("value"))});
    m.payload = from_hex(j.at("payload"));
    auto wire = encode(m);
    if (wire.empty()) {
      std::cerr << "gistproxy-eventstream-tool: message cannot be framed: " << line.substr(0, 200) << "\n";
      return 1;
    }
    std::cout.write(wire.data(), static_cast<std::streamsize>(wire.size()));
  }
  return 0;
}

}  // namespace

int main(int argc, char** argv) {
  const std::string mode = argc > 1 ? argv[1] : "decode";
  if (mode == "decode") return decode_stdin();
  if (mode == "encode") return encode_stdin();
  std::cerr << "usage: gistproxy-eventstream-tool [decode|encode]\n";
  return 2;
}
