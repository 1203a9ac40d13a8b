#include "rewrite/handling.hpp"

namespace gistproxy::rewrite {

// The order is the rewrite phase's: a control conversation is forwarded as
// sent whatever else holds (and its turns are not remembered); without a
// endpoint or an engine nothing is counted as a rewrite failure; the client's
// own say (bypass, its signature) comes before what the body turned out to be.
handling handling_of(const handling_inputs& in) {
  using enum handling_why;
  if (in.control) return {handling_mode::read_only, control};
  if (!in.known_api) return {handling_mode::untouched, unknown_api};
  if (!in.offload_on) return {handling_mode::read_only, offload_off};
  if (in.bypass) return {handling_mode::read_only, bypass};
  if (in.client_signed) return {handling_mode::read_only, client_signed};
  if (!in.decoded) return {handling_mode::untouched, undecodable};
  if (!in.parsed) return {handling_mode::untouched, unparsable};
  // Offloading without read_blob on offer would lose the outputs to the model.
  if (!in.answer_interceptable) return {handling_mode::read_only, uninterceptable_answer};
  return {handling_mode::rewrite, offload};
}

bool bytes_kept_as_sent(bool bypass, bool client_signed) { return bypass || client_signed; }

std::string_view label(handling_mode m) {
  switch (m) {
    case handling_mode::rewrite: return "rewrite";
    case handling_mode::read_only: return "read_only";
    case handling_mode::untouched: return "untouched";
  }
  return "untouched";
}

std::string_view label(handling_why w) {
  switch (w) {
    case handling_why::control: return "control";
    case handling_why::unknown_api: return "unknown_api";
    case handling_why::offload_off: return "offload_off";
    case handling_why::bypass: return "bypass";
    case handling_why::client_signed: return "client_signed";
    case handling_why::undecodable: return "undecodable";
    case handling_why::unparsable: return "unparsable";
    case handling_why::uninterceptable_answer: return "uninterceptable_answer";
    case handling_why::offload: return "offload";
  }
  return "unknown_api";
}

}  // namespace gistproxy::rewrite
