#include "proxy/exchange/hop_span.hpp"

namespace gistproxy::proxy {

telemetry::span start_hop_span(services& svc, const request_context& ctx, int hop) {
  auto span = svc.tracer.start("upstream", telemetry::span_kind::client, ctx.span.trace, ctx.span.id);
  if (!span.recording) return span;  // no exporter: nothing below would be kept
  if (auto* d = ctx.in.endpoint) {
    span.name = std::string(d->wire().operation_name()) + (ctx.in.facts ? " " + ctx.in.facts->model : "");
    span.set_text("gen_ai.operation.name", d->wire().operation_name());
    span.set_text("gen_ai.provider.name", d->provider_name());
  }
  if (ctx.in.facts) span.set_text("gen_ai.request.model", ctx.in.facts->model);
  span.set("gistproxy.hop", std::int64_t(hop + 1));
  span.set_text("gistproxy.group", rewrite::group_label(ctx.in.group));
  return span;
}

void end_failed_hop_span(services& svc, telemetry::span& span, std::string_view reason) {
  span.fail(std::string(reason));
  span.set_text("error.type", reason);
  svc.tracer.end(span);
}

}  // namespace gistproxy::proxy
