// Answers the model's read_blob calls from the blob store, on the store pool
// (reads, decompression and re-hashing block), with one page_in span and the
// page-in counters per call. The same call twice in one request gets the
// first answer again, so a model cannot loop on it.
#pragma once

#include <map>
#include <utility>
#include <string>
#include <vector>

#include "proxy/exchange/request_context.hpp"
#include "proxy/runtime/services.hpp"
#include "rewrite/page_in/page_in.hpp"

namespace gistproxy::proxy {

class blob_pager {
 public:
  blob_pager(services& svc, request_context& ctx) : svc_(svc), ctx_(ctx) {}
  awaitable<std::vector<rewrite::call_result>> answer(const std::vector<rewrite::blob_call>& calls);
  // The offload service's GET /v1/blobs/{handle}: one read_blob call's page
  // (arguments as the model would send them), or the blob's exact bytes;
  // the same store thread, span and counters as a model's call.
  awaitable<rewrite::page_result> page(const std::string& arguments);
  awaitable<rewrite::page_result> raw(const std::string& handle);
  // Whether the read-backs since the last call made outputs stay inline.
  bool take_joined_inline() { return std::exchange(joined_inline_, false); }

 private:
  struct answered_page {
    rewrite::page_result page;
    std::uint64_t start_ns = 0;
    std::uint64_t tokens = 0;  // what the page puts back into the conversation
    rewrite::blob_error restored = rewrite::blob_error::none;  // what the first look found, when stored again
    std::uint64_t shortages_before = 0;  // store::descriptor_shortages() when the look began
  };
  void record(const answered_page& p);
  // A read_blob answer that, with this request's other pages of the same
  // blob, returned most of it: a read-back of this turn (read_backs.hpp).
  void note_read_back(const rewrite::page_result& r);
  // One call's page, on a store thread.
  answered_page page_of(const std::string& arguments);

  // A request's read-backs kept for --record: one per handle, however many hops.
  static constexpr std::size_t max_recorded_read_backs = 1024;

  services& svc_;
  request_context& ctx_;
  std::map<std::string, rewrite::call_result> answered_;  // arguments → first answer
  std::map<std::string, std::uint64_t> paged_;             // handle → bytes this request paged of it
  std::uint64_t hop_ = 0;  // answer() calls so far: the upstream hop whose calls are answered
  bool joined_inline_ = false;  // the churn tracker said a read-back made outputs stay inline
  bool stored_again_ = false;  // at most once a request: a model asking for unknown handles costs one rewrite
};

}  // namespace gistproxy::proxy
