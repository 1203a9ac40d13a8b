// Beast's HTTP parser with one limit of its own moved to the boundary.
//
// Beast stores a field's name and value lengths in 16 bits: a field whose
// name or value is over 65,533 bytes makes it throw std::length_error from
// inside the read operation's completion, where no coroutine of ours can
// catch it (it leaves io_context::run: the process ended). Every parser
// gistproxy points at bytes from outside (clients, upstreams, S3, an egress
// proxy, the admin listener) is this one: such a field ends the parse with
// http::error::header_limit, answered like a header block over its limit
// (431 to a client, a bad response from an upstream).
#pragma once

#include <boost/beast/http/error.hpp>
#include <boost/beast/http/parser.hpp>
#include <cstddef>
#include <utility>

namespace gistproxy::proxy {

// The longest field name, and the longest field value, any message may carry
// (Beast's own bound: 16-bit lengths, two bytes kept for ": ").
constexpr std::size_t max_field_bytes = 65'533;

// True when Beast can store the field; the parser refuses it otherwise.
constexpr bool field_fits(std::size_t name_bytes, std::size_t value_bytes) {
  return name_bytes <= max_field_bytes && value_bytes <= max_field_bytes;
}

template <bool isRequest, class Body>
class checked_parser final : public boost::beast::http::parser<isRequest, Body> {
  using base = boost::beast::http::parser<isRequest, Body>;

 public:
  checked_parser() = default;
  // From a parser that read the head with another body type (Beast's own
  // conversion: the head is kept, the body is read into the new type).
  template <class OtherBody>
  explicit checked_parser(checked_parser<isRequest, OtherBody>&& other)
      : base(std::move(static_cast<boost::beast::http::parser<isRequest, OtherBody>&>(other))) {}

 private:
  void on_field_impl(boost::beast::http::field name, boost::beast::string_view name_string,
                     boost::beast::string_view value, boost::beast::error_code& ec) override {
    if (!field_fits(name_string.size(), value.size())) {
      ec = boost::beast::http::error::header_limit;
      return;
    }
    this->get().insert(name, name_string, value);
  }
};

template <class Body>
using checked_request_parser = checked_parser<true, Body>;
template <class Body>
using checked_response_parser = checked_parser<false, Body>;

}  // namespace gistproxy::proxy
