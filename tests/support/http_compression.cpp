#include "tests/support/http_compression.hpp"

#include <brotli/encode.h>
#include <zlib.h>
#include <zstd.h>

#include <algorithm>
#include <array>
#include <cctype>
#include <stdexcept>
#include <vector>

namespace gistproxy::testing {
namespace {

std::string_view trim(std::string_view s) {
  while (!s.empty() && (s.front() == ' ' || s.front() == '\t')) s.remove_prefix(1);
  while (!s.empty() && (s.back() == ' ' || s.back() == '\t')) s.remove_suffix(1);
  return s;
}

bool refused(std::string_view params) {
  auto q = params.find("q=");
  if (q == std::string_view::npos) return false;
  return std::stod(std::string(params.substr(q + 2))) == 0.0;
}

}  // namespace

std::optional<std::string> pick_coding(std::string_view accept_encoding) {
  std::vector<std::string> allowed;
  bool any = false;
  std::string_view rest = accept_encoding;
  while (!rest.empty()) {
    auto comma = rest.find(',');
    auto item = trim(rest.substr(0, comma));
    rest = comma == std::string_view::npos ? std::string_view{} : rest.substr(comma + 1);
    auto semicolon = item.find(';');
    std::string coding(trim(item.substr(0, semicolon)));
    std::transform(coding.begin(), coding.end(), coding.begin(), [](unsigned char c) { return char(std::tolower(c)); });
    if (refused(semicolon == std::string_view::npos ? std::string_view{} : item.substr(semicolon))) continue;
    if (coding == "*") any = true;
    allowed.push_back(coding);
  }
  for (std::string_view preferred : {"br", "zstd", "gzip", "deflate"})
    if (any || std::find(allowed.begin(), allowed.end(), preferred) != allowed.end()) return std::string(preferred);
  return std::nullopt;
}

struct stream_compressor::impl {
  std::string coding;
  z_stream zs{};
  BrotliEncoderState* br = nullptr;
  ZSTD_CCtx* zstd = nullptr;

  explicit impl(std::string_view c) : coding(c) {
    if (coding == "gzip" || coding == "deflate") {
      if (deflateInit2(&zs, 6, Z_DEFLATED, coding == "gzip" ? 16 + MAX_WBITS : MAX_WBITS, 8, Z_DEFAULT_STRATEGY) != Z_OK)
        throw std::runtime_error("deflateInit2");
    } else if (coding == "br") {
      br = BrotliEncoderCreateInstance(nullptr, nullptr, nullptr);
      BrotliEncoderSetParameter(br, BROTLI_PARAM_QUALITY, 5);
    } else if (coding == "zstd") {
      zstd = ZSTD_createCCtx();
    } else {
      throw std::runtime_error("unknown coding " + coding);
    }
  }
  ~impl() {
    if (coding == "gzip" || coding == "deflate") deflateEnd(&zs);
    if (br) BrotliEncoderDestroyInstance(br);
    if (zstd) ZSTD_freeCCtx(zstd);
  }

  std::string run(std::string_view in, bool end) {
    std::string out;
    std::array<unsigned char, 16384> buf;
    if (coding == "gzip" || coding == "deflate") {
      zs.next_in = reinterpret_cast<Bytef*>(const_cast<char*>(in.data()));
      zs.avail_in = uInt(in.size());
      do {
        zs.next_out = buf.data();
        zs.avail_out = uInt(buf.size());
        deflate(&zs, end ? Z_FINISH : Z_SYNC_FLUSH);
        out.append(reinterpret_cast<char*>(buf.data()), buf.size() - zs.avail_out);
      } while (zs.avail_out == 0);
    } else if (br) {
      std::size_t avail_in = in.size();
      auto* next_in = reinterpret_cast<const std::uint8_t*>(in.data());
      const auto op = end ? BROTLI_OPERATION_FINISH : BROTLI_OPERATION_FLUSH;
      for (;;) {
        std::size_t avail_out = buf.size();
        std::uint8_t* next_out = buf.data();
        if (!BrotliEncoderCompressStream(br, op, &avail_in, &next_in, &avail_out, &next_out, nullptr))
          throw std::runtime_error("brotli: cannot compress");
        out.append(reinterpret_cast<char*>(buf.data()), buf.size() - avail_out);
        if (avail_in == 0 && !BrotliEncoderHasMoreOutput(br) && (!end || BrotliEncoderIsFinished(br))) break;
      }
    } else {
      ZSTD_inBuffer input{in.data(), in.size(), 0};
      for (;;) {
        ZSTD_outBuffer output{buf.data(), buf.size(), 0};
        std::size_t left = ZSTD_compressStream2(zstd, &output, &input, end ? ZSTD_e_end : ZSTD_e_flush);
        out.append(reinterpret_cast<char*>(buf.data()), output.pos);
        if (left == 0 && input.pos == input.size) break;
      }
    }
    return out;
  }
};

stream_compressor::stream_compressor(std::string_view coding) : impl_(std::make_unique<impl>(coding)) {}
stream_compressor::~stream_compressor() = default;
std::string stream_compressor::flush(std::string_view piece) { return impl_->run(piece, false); }
std::string stream_compressor::finish() { return impl_->run({}, true); }

std::string compress(std::string_view coding, std::string_view body) {
  stream_compressor c(coding);
  std::string out = c.flush(body);  // before finish(): the operands of + are unsequenced
  return out + c.finish();
}

}  // namespace gistproxy::testing
