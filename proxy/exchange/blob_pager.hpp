// Answers the model's read_blob calls from the blob store, on the store pool
// (reads, decompression and re-hashing block), with one page_in span and the
// page-in counters per call. The same call twice in one request gets the
// first answer again, so a model cannot loop on it.
#pragma once

#include <map>
#include <string>
#include <vector>

#include "proxy/exchange/request_context.hpp"
#include "proxy/services.hpp"
#include "rewrite/page_in/page_in.hpp"

namespace gistproxy::proxy {

class blob_pager {
 public:
  blob_pager(services& svc, request_context& ctx) : svc_(svc), ctx_(ctx) {}
  awaitable<std::vector<rewrite::call_result>> answer(const std::vector<rewrite::blob_call>& calls);

 private:
  struct answered_page {
    rewrite::page_result page;
    std::uint64_t start_ns = 0;
    std::uint64_t tokens = 0;  // what the page puts back into the conversation
  };
  void record(const answered_page& p);

  services& svc_;
  request_context& ctx_;
  std::map<std::string, rewrite::call_result> answered_;  // arguments → first answer
};

}  // namespace gistproxy::proxy
