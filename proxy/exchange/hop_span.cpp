#include "proxy/exchange/hop_span.hpp"

#include "proxy/exchange/exchange_stats.hpp"

namespace gistproxy::proxy {

hop_span::hop_span(services& svc, const request_context& ctx, int hop)
    : svc_(svc), span_(svc.tracer.start("upstream", telemetry::span_kind::client, ctx.span.trace, ctx.span.id)) {
  if (!span_.recording) return;  // no exporter: nothing below would be kept
  if (auto* d = ctx.in.endpoint) {
    span_.name = std::string(d->wire().operation_name()) + (ctx.in.facts ? " " + ctx.in.facts->model : "");
    span_.set_text("gen_ai.operation.name", d->wire().operation_name());
    span_.set_text("gen_ai.provider.name", d->provider_name());
  }
  if (ctx.in.facts) span_.set_text("gen_ai.request.model", ctx.in.facts->model);
  span_.set("gistproxy.hop", std::int64_t(hop + 1));
  span_.set_text("gistproxy.group", rewrite::group_label(ctx.in.group));
}

void hop_span::end(int status, const rewrite::token_usage& usage) {
  if (ended_) return;
  ended_ = true;
  span_.set("http.response.status_code", std::int64_t(status));
  exchange_stats::set_usage_attributes(span_, usage);
  if (status >= 500) span_.fail("upstream status " + std::to_string(status));
  svc_.tracer.end(span_);
}

void hop_span::fail(std::string_view reason) {
  if (ended_) return;
  ended_ = true;
  span_.fail(std::string(reason));
  span_.set_text("error.type", reason);
  svc_.tracer.end(span_);
}

}  // namespace gistproxy::proxy
