// Token counts whose body wraps the request they count (rewrite/count_envelope.hpp):
// while the phases run, the request's body is the wrapped request and its
// endpoint the one that reads it; before it is forwarded, the body as sent is
// back and a rewritten request goes back into its wrapping.
#include "proxy/exchange/phases.hpp"

namespace gistproxy::proxy {

void unwrap_count(request_context& ctx) {
  auto& in = ctx.in;
  // A body decoded from a Content-Encoding is restored encoded for the
  // control group: one swap of the body at a time, so such a count is not
  // unwrapped (forwarded as sent; SDKs do not compress their counts).
  rewrite::request_facts named;
  in.endpoint->inspect_target(rewrite::gateway_mount_of(std::string_view(in.request.target())).target, named);
  auto unwrapped = in.sent_body ? std::nullopt : in.endpoint->unwrap_count(named.model, in.request.body());
  if (!unwrapped) {
    // A count read as it is (Anthropic's, Vertex's) keeps its endpoint; a
    // wrapped one cannot be read without its wrapping taken off.
    if (in.endpoint->wraps_counts()) in.endpoint = nullptr;
    return;
  }
  in.endpoint = unwrapped->reader;
  in.count_wrapping = std::move(unwrapped->envelope);
  in.count_body = std::exchange(in.request.body(), std::move(unwrapped->request));
}

void restore_count(request_context& ctx) {
  auto& in = ctx.in;
  if (!in.count_wrapping) return;
  if (ctx.rw.body) ctx.rw.body = rewrite::rewrap_count(*in.count_wrapping, *ctx.rw.body);
  in.request.body() = std::move(in.count_body);
  in.count_wrapping.reset();
}

}  // namespace gistproxy::proxy
