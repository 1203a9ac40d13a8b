#include "rewrite/content_decoder.hpp"

#include <brotli/decode.h>
#include <zlib.h>
#include <zstd.h>

#include <algorithm>
#include <array>
#include <cctype>

#include "rewrite/text/field_value.hpp"

namespace gistproxy::rewrite {

// Decodes from `in` into `out`, advancing both, until the input is used up or
// the output is full. False when the bytes are not a valid stream.
class content_decoder::engine {
 public:
  virtual ~engine() = default;
  virtual bool run(const std::uint8_t*& in, std::size_t& in_len, std::uint8_t*& out, std::size_t& out_len) = 0;
  // The last byte consumed ended a stream of this coding.
  virtual bool at_end() const = 0;
};

namespace {

using engine = content_decoder::engine;

class identity_engine final : public engine {
 public:
  bool run(const std::uint8_t*& in, std::size_t& in_len, std::uint8_t*& out, std::size_t& out_len) override {
    const std::size_t n = std::min(in_len, out_len);
    std::copy_n(in, n, out);
    in += n, in_len -= n, out += n, out_len -= n;
    return true;
  }
  bool at_end() const override { return true; }
};

// gzip (a series of members, RFC 1952 §2.2, all decoded) and deflate. HTTP's
// "deflate" is the zlib format (RFC 9110 §8.4.1.2), but some servers send raw
// deflate: the first two bytes tell which.
class zlib_engine final : public engine {
 public:
  explicit zlib_engine(bool gzip) : gzip_(gzip) {}
  ~zlib_engine() override {
    if (started_) inflateEnd(&zs_);
  }

  bool run(const std::uint8_t*& in, std::size_t& in_len, std::uint8_t*& out, std::size_t& out_len) override {
    if (!started_) {
      if (!gzip_ && in_len < 2) return true;  // wait for the header's two bytes
      if (inflateInit2(&zs_, window_bits(in)) != Z_OK) return false;
      started_ = true;
    }
    for (;;) {
      if (ended_) {
        if (in_len == 0) return true;
        if (!gzip_ || inflateReset(&zs_) != Z_OK) return false;  // bytes after the zlib stream
        ended_ = false;
      }
      if (out_len == 0) return true;
      zs_.next_in = const_cast<Bytef*>(in);
      zs_.avail_in = uInt(std::min<std::size_t>(in_len, 1u << 30));
      zs_.next_out = out;
      zs_.avail_out = uInt(std::min<std::size_t>(out_len, 1u << 30));
      const uInt in_before = zs_.avail_in, out_before = zs_.avail_out;
      const int rc = inflate(&zs_, Z_NO_FLUSH);
      in += in_before - zs_.avail_in, in_len -= in_before - zs_.avail_in;
      out += out_before - zs_.avail_out, out_len -= out_before - zs_.avail_out;
      if (rc == Z_STREAM_END) {
        ended_ = true;
        continue;
      }
      if (rc == Z_BUF_ERROR) return true;  // no progress possible without more input or room
      if (rc != Z_OK) return false;
      if (in_len == 0 && out_len > 0) return true;  // everything decodable so far is out
    }
  }
  bool at_end() const override { return ended_; }

 private:
  int window_bits(const std::uint8_t* in) const {
    if (gzip_) return 16 + MAX_WBITS;
    const bool zlib_header = (in[0] & 0x0f) == 8 && (in[0] >> 4) <= 7 && ((in[0] << 8) | in[1]) % 31 == 0;
    return zlib_header ? MAX_WBITS : -MAX_WBITS;
  }

  bool gzip_;
  z_stream zs_{};
  bool started_ = false;
  bool ended_ = false;
};

class brotli_engine final : public engine {
 public:
  brotli_engine() : state_(BrotliDecoderCreateInstance(nullptr, nullptr, nullptr)) {}
  ~brotli_engine() override { BrotliDecoderDestroyInstance(state_); }

  bool run(const std::uint8_t*& in, std::size_t& in_len, std::uint8_t*& out, std::size_t& out_len) override {
    if (!state_) return false;
    for (;;) {
      if (ended_) return in_len == 0;  // bytes after the stream's end
      if (out_len == 0) return true;
      const auto rc = BrotliDecoderDecompressStream(state_, &in_len, &in, &out_len, &out, nullptr);
      if (rc == BROTLI_DECODER_RESULT_ERROR) return false;
      if (rc == BROTLI_DECODER_RESULT_SUCCESS) ended_ = true;
      if (rc == BROTLI_DECODER_RESULT_NEEDS_MORE_INPUT) return true;
    }
  }
  bool at_end() const override { return ended_; }

 private:
  BrotliDecoderState* state_;
  bool ended_ = false;
};

class zstd_engine final : public engine {
 public:
  zstd_engine() : ctx_(ZSTD_createDCtx()) {
    // RFC 8878 §3.1.1.1.2: HTTP decoders need not accept windows over 8 MiB;
    // a hostile frame could otherwise make us allocate 2 GiB.
    if (ctx_) ZSTD_DCtx_setParameter(ctx_, ZSTD_d_windowLogMax, 23);
  }
  ~zstd_engine() override { ZSTD_freeDCtx(ctx_); }

  bool run(const std::uint8_t*& in, std::size_t& in_len, std::uint8_t*& out, std::size_t& out_len) override {
    if (!ctx_) return false;
    for (;;) {
      if (out_len == 0) return true;
      ZSTD_inBuffer input{in, in_len, 0};
      ZSTD_outBuffer output{out, out_len, 0};
      const std::size_t rc = ZSTD_decompressStream(ctx_, &output, &input);
      if (ZSTD_isError(rc)) return false;
      in += input.pos, in_len -= input.pos, out += output.pos, out_len -= output.pos;
      ended_ = rc == 0;  // a frame ended and all of it is out (several frames may follow)
      if (input.pos == 0 && output.pos == 0) return true;
      if (in_len == 0 && output.pos < output.size) return true;
    }
  }
  bool at_end() const override { return ended_; }

 private:
  ZSTD_DCtx* ctx_;
  bool ended_ = false;
};

std::unique_ptr<engine> make_engine(content_coding coding) {
  switch (coding) {
    case content_coding::gzip: return std::make_unique<zlib_engine>(true);
    case content_coding::deflate: return std::make_unique<zlib_engine>(false);
    case content_coding::br: return std::make_unique<brotli_engine>();
    case content_coding::zstd: return std::make_unique<zstd_engine>();
    case content_coding::identity: break;
  }
  return std::make_unique<identity_engine>();
}

std::string lower(std::string_view s) {
  std::string out(s);
  for (auto& c : out) c = char(std::tolower(static_cast<unsigned char>(c)));
  return out;
}

constexpr std::array<std::string_view, 4> decodable = {"gzip", "deflate", "br", "zstd"};
constexpr std::size_t max_accept_items = 32;  // a client's list is a handful; more is noise

}  // namespace

std::optional<content_coding> parse_content_coding(std::string_view field) {
  const std::string name = lower(text::trimmed(field));
  if (name.empty() || name == "identity") return content_coding::identity;
  if (name == "gzip" || name == "x-gzip") return content_coding::gzip;
  if (name == "deflate") return content_coding::deflate;
  if (name == "br") return content_coding::br;
  if (name == "zstd") return content_coding::zstd;
  return std::nullopt;
}

std::string decodable_accept_encoding(std::optional<std::string_view> client_field) {
  if (!client_field) return "identity";
  std::string out;
  bool any_coding = false;
  auto add = [&](std::string_view coding, std::string_view params) {
    if (!out.empty()) out += ", ";
    out += coding;
    out += params;
  };
  std::string_view rest = *client_field;
  for (std::size_t items = 0; !rest.empty() && items < max_accept_items; ++items) {
    const auto comma = rest.find(',');
    const std::string_view item = text::trimmed(rest.substr(0, comma));
    rest = comma == std::string_view::npos ? std::string_view{} : rest.substr(comma + 1);
    const auto semicolon = item.find(';');
    const std::string coding = lower(text::trimmed(item.substr(0, semicolon)));
    const std::string_view params = semicolon == std::string_view::npos ? std::string_view{} : item.substr(semicolon);
    if (coding == "*") {
      for (auto name : decodable)
        if (out.find(name) == std::string::npos) add(name, params), any_coding = true;
      continue;
    }
    const auto parsed = parse_content_coding(coding);
    if (!parsed) continue;
    any_coding = any_coding || *parsed != content_coding::identity;
    add(coding, params);
  }
  return any_coding ? out : "identity";
}

std::string_view coding_name(content_coding coding) {
  switch (coding) {
    case content_coding::gzip: return "gzip";
    case content_coding::deflate: return "deflate";
    case content_coding::br: return "br";
    case content_coding::zstd: return "zstd";
    case content_coding::identity: break;
  }
  return "identity";
}

content_decoder::content_decoder(content_coding coding) : coding_(coding), engine_(make_engine(coding)) {}
content_decoder::~content_decoder() = default;

void content_decoder::feed(std::string_view compressed) {
  if (compressed.empty()) return;
  if (consumed_ == input_.size()) {
    input_.assign(compressed);
  } else {
    input_.erase(0, consumed_);
    input_.append(compressed);
  }
  consumed_ = 0;
  any_input_ = true;
  stalled_ = false;
}

bool content_decoder::decode(std::string& out, std::size_t max_out) {
  if (failed_) return false;
  const std::size_t before = out.size();
  out.resize(before + max_out);
  const auto* in = reinterpret_cast<const std::uint8_t*>(input_.data()) + consumed_;
  std::size_t in_len = input_.size() - consumed_;
  auto* to = reinterpret_cast<std::uint8_t*>(out.data()) + before;
  std::size_t room = max_out;
  const bool ok = engine_->run(in, in_len, to, room);
  const std::size_t used = input_.size() - consumed_ - in_len;
  consumed_ += used;
  out.resize(before + (max_out - room));
  output_full_ = ok && room == 0 && max_out > 0;
  stalled_ = used == 0 && room == max_out;
  failed_ = !ok;
  return ok;
}

bool content_decoder::pending() const {
  return !failed_ && !stalled_ && (consumed_ < input_.size() || output_full_);
}

bool content_decoder::complete() const {
  return !failed_ && (!any_input_ || (engine_->at_end() && consumed_ == input_.size()));
}

std::optional<std::string> content_decoder::decode_whole(content_coding coding, std::string_view body,
                                                         std::size_t max_out) {
  content_decoder d(coding);
  d.feed(body);
  std::string out;
  while (d.pending()) {
    if (!d.decode(out, std::min<std::size_t>(64 * 1024, max_out + 1 - out.size()))) return std::nullopt;
    if (out.size() > max_out) return std::nullopt;
  }
  if (!d.complete()) return std::nullopt;
  return out;
}

}  // namespace gistproxy::rewrite
